"""The explorer's tables from the tidy frame of the store (:func:`helpers.store.load_scores`):
accuracy per (dataset, model, method) over templates (mean, sd, best; Ide et al.'s Tables 3 and
9, by :func:`helpers.analysis.accuracy.table3`) and per paradigm. Accuracy is the mean of
``correct`` (a tie is an error); beside it every table gives the expected accuracy (a tie counts
half) and the accuracy with every tie right (:func:`helpers.analysis.accuracy.tie_range`), over
templates as the accuracy. Single-sentence files (CoLA's, no pair) have no accuracy and are named
in the page's notes."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, summarise, table3
from ..analysis.hu_levy import order_tie_share

OVERVIEW_COLUMNS = ["dataset", "model", "method", "templates", "accuracy_mean", "accuracy_sd", "best_template",
                    "best_accuracy", "pairs", "ties", EXPECTED + "_mean", TIES_RIGHT + "_mean"]
VALUES = ["accuracy", EXPECTED, TIES_RIGHT]  # per template: ties wrong, half, right (the paradigm table's stems)
PARADIGM_COLUMNS = ["dataset", "paradigm", "phenomenon", "model", "method", "pairs", "accuracy_mean",
                    "accuracy_best", EXPECTED + "_mean", EXPECTED + "_best", TIES_RIGHT + "_mean",
                    TIES_RIGHT + "_best"]


def pair_rows(scores: pd.DataFrame, order_averaged: frozenset = frozenset()) -> tuple[pd.DataFrame, list[str]]:
    """The rows of minimal pairs (a ``correct`` decision), ``correct`` and ``tie`` as floats and
    booleans, and a note per (dataset, model, method) of single items left out. Rows of the files
    whose ``config_hash`` is in ``order_averaged`` (Hu & Levy comparisons decided in each answer
    order apart, ``correct`` 0, 0.5 or 1) hold as ``tie`` the share of their orders that tied, as
    the notebooks count them (:func:`helpers.analysis.hu_levy.pair_ties`)."""
    if "correct" not in scores:
        scores = scores.assign(correct=float("nan"), tie=False)
    single = scores["correct"].isna()
    notes = [f"{dataset}: single sentences, not pairs ({', '.join(sorted(g['model'].unique()))}; "
             f"{', '.join(sorted(g['method'].unique()))}): no accuracy, not in these tables"
             for dataset, g in scores[single].groupby("dataset", sort=True)]
    pairs = scores.loc[~single].copy()
    pairs["correct"] = pairs["correct"].astype(float)
    pairs["tie"] = pairs["tie"].fillna(False).astype(bool)
    averaged = pairs["config_hash"].isin(order_averaged) if "config_hash" in pairs else pd.Series(False, pairs.index)
    if averaged.any():
        pairs["tie"] = pairs["tie"].astype(float)
        for method, rows in pairs[averaged].groupby("method", sort=False):
            shares = order_tie_share(rows, method)
            if shares is not None:
                pairs.loc[rows.index, "tie"] = shares
    for column in ("paradigm", "phenomenon"):
        pairs[column] = pairs[column].fillna("").astype(str) if column in pairs else ""
    pairs["template"] = pairs["template"].astype(str)
    return pairs.reset_index(drop=True), notes


def overview(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model, method): templates, accuracy mean and sd over templates, the best
    template and its accuracy, pairs, ties (summed over templates), and the mean over templates of
    the expected accuracy and of the accuracy with every tie right."""
    frames = [table3(rows).assign(dataset=dataset) for dataset, rows in pairs.groupby("dataset", sort=True)]
    if not frames:
        return pd.DataFrame(columns=OVERVIEW_COLUMNS)
    out = pd.concat(frames, ignore_index=True)[OVERVIEW_COLUMNS]
    return out.sort_values(["dataset", "model", "method"], kind="stable").reset_index(drop=True)


def plain_mean(values: pd.Series) -> float:
    """The mean over templates as :func:`table3` takes it (numpy's sum, not the grouped mean's
    compensated one), so that a paradigm's mean and the overview's agree to the last bit."""
    return float(np.mean(values.to_numpy(dtype=float)))


def paradigms(pairs: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, paradigm, model, method): pairs, the accuracy averaged over the method's
    templates and the accuracy at its best template over the whole dataset (``table``:
    :func:`overview`), and the same of the expected accuracy and of the accuracy with every tie
    right."""
    keys = ["dataset", "paradigm", "model", "method"]
    per_template = summarise(pairs, keys + ["template"]).drop(columns=TIE_SHARE_COLUMN).merge(
        pairs.groupby(keys + ["template"], sort=False)["phenomenon"].first().reset_index())
    best = table.set_index(["dataset", "model", "method"])["best_template"].astype(str)
    at_best = [best[(d, m, me)] == t for d, m, me, t in
               per_template[["dataset", "model", "method", "template"]].itertuples(index=False)]
    mean = per_template.groupby(keys, sort=False).agg(phenomenon=("phenomenon", "first"), pairs=("pairs", "max"),
                                                      **{f"{v}_mean": (v, plain_mean) for v in VALUES})
    for v in VALUES:
        mean[f"{v}_best"] = per_template[at_best].set_index(keys)[v]
    out = mean.reset_index()[PARADIGM_COLUMNS]
    return out.sort_values(["dataset", "paradigm", "model", "method"], kind="stable").reset_index(drop=True)


def records(frame: pd.DataFrame) -> list[dict]:
    """A table as JSON-ready rows: numbers as numbers, a missing value as None."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in clean.to_dict("records")]
