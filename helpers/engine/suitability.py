"""Whether a model suits a selection, said as warnings before a run scores it: the languages
its registry entry names, and how much of the text its tokenizer makes its unknown token
(:mod:`.unknown_tokens`). The scores are computed either way (a test may want them)."""
from __future__ import annotations

import warnings

from .unknown_tokens import UnknownShare, warn_unknown_tokens
from ..data.selection import DatasetSelection


def warn_language(scorer, selection: DatasetSelection) -> None:
    """A warning when the model's registry entry names languages and not all of the selection's
    (a MultiBLiMP selection holds several): the scores are computed (a test may want them) but
    are no judgement of the model's grammar in those languages."""
    known = scorer.languages  # () where unknown: a model the registry does not list
    missing = ", ".join(repr(lang) for lang in selection.languages if lang not in known) if known else ""
    if missing:
        warnings.warn(f"{scorer.name} is registered for {', '.join(known)} text, not {missing} ({selection.name}): "
                      "its accuracy there is no judgement of its grammar in that language, though it can be far "
                      "from 50% (sentence length and shared words decide many pairs); choose a model trained on "
                      f"{missing} text (a registry name, folder or Hugging Face id)", stacklevel=4)


def warn_unsuited(scorer, selection: DatasetSelection) -> UnknownShare | None:
    """Both warnings where they apply; the unknown-token share measured (None: no fast tokenizer)."""
    warn_language(scorer, selection)
    return warn_unknown_tokens(scorer, selection, stacklevel=4)  # the run's caller
