"""The settings of a notebook that reads stored scores (04, 05, 08): every setting by its name, as
the scoring notebooks take it, chooses among the configurations the store holds."""
from __future__ import annotations

from typing import Mapping

from ..parameters import check_injected
from ..settings import AUTO, Settings
from ..settings.stored import UNSTORED


def stored_choice(namespace: Mapping, refused: Mapping[str, str] | None = None) -> tuple[Settings, dict]:
    """A reading notebook's settings and the ``where`` of :func:`helpers.store.load_scores` they
    give (``namespace``: its ``globals()``): a misspelt injected name stops (with the nearest known
    one), a bad value stops, and a setting in ``refused`` (name -> why this notebook cannot take it)
    given a value stops with the reason. The line printed first says what it reads."""
    check_injected(namespace)
    settings = Settings.from_parameters(namespace)
    for name, why in (refused or {}).items():
        if getattr(settings, name) != AUTO:
            raise ValueError(f"{name}={getattr(settings, name)!r}: {why}")
    unstored = [name for name in UNSTORED if getattr(settings, name) != AUTO]
    print(settings.described().replace("settings:", "reads the scores stored under settings:", 1)
          + (f" ({', '.join(unstored)} change how scores are computed, not their values: they choose nothing)"
             if unstored else ""))
    return settings, settings.score_filter()
