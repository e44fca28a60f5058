"""Whether a model suits a selection, said as warnings before a run scores it: the languages
its registry entry names, and how much of the text its tokenizer makes its unknown token
(:mod:`.unknown_tokens`). The scores are computed either way (a test may want them)."""
from __future__ import annotations

import warnings

from .unknown_tokens import UnknownShare, warn_unknown_tokens
from ..data.selection import DatasetSelection
from ..models import REGISTRY


def warn_language(scorer, selection: DatasetSelection) -> None:
    """A warning when the model's registry entry names languages and not all of the selection's
    (a MultiBLiMP selection holds several): the scores are computed (a test may want them) but
    are no judgement of the model's grammar in those languages."""
    spec = getattr(scorer.loaded, "spec", None)
    registered = spec is not None and REGISTRY.get(spec.name) == spec  # an unregistered model's languages are unknown
    missing = ", ".join(repr(lang) for lang in selection.languages if lang not in spec.languages) if registered else ""
    if missing:
        warnings.warn(f"{spec.name} is registered for {', '.join(spec.languages)} text, not {missing} "
                      f"({selection.name}): its scores there say nothing about the language; choose a model "
                      f"trained on {missing} text (a registry name, folder or Hugging Face id)",
                      stacklevel=4)


def warn_unsuited(scorer, selection: DatasetSelection) -> UnknownShare | None:
    """Both warnings where they apply; the unknown-token share measured (None: no fast tokenizer)."""
    warn_language(scorer, selection)
    return warn_unknown_tokens(scorer, selection, stacklevel=4)  # the run's caller
