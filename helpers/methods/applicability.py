"""Which methods a scorer can run: a method declares the scorer features it needs
(:attr:`helpers.methods.base.Method.needs`), a scorer the features it offers
(``features``, of :data:`helpers.engine.interface.SCORER_FEATURES`). Notebooks run the
applicable methods and list the others with the reason."""
from __future__ import annotations

import pandas as pd

NOT_APPLICABLE_COLUMNS = ["model", "method", "not_applicable"]


def split(methods, scorer, registry) -> tuple[list[str], pd.DataFrame]:
    """The names among ``methods`` that ``scorer`` can run, and a frame (model, method,
    not_applicable: the reason) of those it cannot; ``registry`` maps a name to its Method."""
    runnable, refused = [], []
    for name in methods:
        reason = registry(name).not_applicable(scorer)
        if reason is None:
            runnable.append(name)
        else:
            refused.append({"model": scorer.name, "method": name, "not_applicable": reason})
    return runnable, pd.DataFrame(refused, columns=NOT_APPLICABLE_COLUMNS)


def refuse_not_applicable(chosen, scorer) -> None:
    """A clear error, before anything runs, when a chosen method cannot run on ``scorer``."""
    refused = [(m.name, reason) for m in chosen if (reason := m.not_applicable(scorer))]
    if refused:
        raise ValueError(f"{refused[0][1]}: leave out {', '.join(name for name, _ in refused)} for this model "
                         "(helpers.methods.applicable(methods, scorer) splits a list)")
