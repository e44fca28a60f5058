"""The models a quickstart session keeps loaded, and the names it offers.

A :class:`Scorers` is created by whoever shows the controls (a notebook, a test) and passed
to them: switching back and forth between two models in a lecture costs no reload, and
nothing is cached behind the caller's back.
"""
from __future__ import annotations

import difflib
from collections import OrderedDict

from ..engine.interface import Scorer
from ..engine.kinds import scorer_for
from ..models import REGISTRY, ModelNotFoundError
from ..settings import Settings, method_setting


class ExplainError(ValueError):
    """Something a student typed that cannot be scored, said in plain words with what to do."""


def model_choices() -> list[str]:
    """Registered model names, the offline ones first (the demo and tiny models)."""
    local = [n for n, s in REGISTRY.items() if s.local]
    return local + [n for n in REGISTRY if n not in local]


class Scorers:
    """Scorers by model name, the ``keep`` most recently used kept loaded, each built under
    ``settings`` (:class:`helpers.settings.Settings`; default: every setting "auto")."""

    def __init__(self, keep: int = 2, settings: Settings | None = None):
        self.keep, self.settings = keep, (settings or Settings()).but(progress=False)
        self._loaded: OrderedDict[str, Scorer] = OrderedDict()

    @property
    def instruct(self) -> bool | None:
        """Prompts in the chat template: the ``instruct`` setting (None: each model's own)."""
        return method_setting("instruct", self.settings.instruct)

    def __contains__(self, name) -> bool:
        return name in self._loaded

    def get(self, name) -> Scorer:
        """A scorer for model ``name`` (kept loaded for the next call); an ExplainError saying
        which names exist when it cannot be loaded."""
        if not isinstance(name, str) or not name.strip():
            raise ExplainError("No model chosen. Pick one from the list, e.g. 'demo-en'.")
        name = name.strip()
        if name in self._loaded:
            self._loaded.move_to_end(name)
            return self._loaded[name]
        scorer = _load(name, self.settings)
        self._loaded[name] = scorer
        while len(self._loaded) > self.keep:
            self._loaded.popitem(last=False)
        return scorer


def _load(name: str, settings: Settings) -> Scorer:
    try:
        return scorer_for(name, settings)
    except ModelNotFoundError as err:
        if name in REGISTRY:  # registered, but its weights are not here (offline, not cached)
            raise ExplainError(f"Model {name!r} cannot be loaded on this machine: {err} "
                               "Pick an offline model such as 'demo-en'.") from None
        close = difflib.get_close_matches(name, list(REGISTRY), n=3, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        why = str(err).splitlines()[0].removesuffix("Registered models:").strip()
        if why.startswith("unknown model"):
            why = "it is not a registered name, a folder or a Hugging Face id (org/name)."
        raise ExplainError(f"There is no model called {name!r}: {why}{hint} Pick a name from the list "
                           "(python -m helpers models shows them all), a local folder, or a Hugging Face "
                           "id that is in the local cache.") from None
    except (RuntimeError, OSError, TypeError, ValueError, NotImplementedError) as err:
        raise ExplainError(f"Cannot load model {name!r}: {err}") from None
