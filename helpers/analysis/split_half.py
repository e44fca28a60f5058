"""Split-half reliability of a method's accuracy per paradigm.

What it measures: how reproducible a predictor's profile of accuracies over paradigms is,
that is whether its per-paradigm accuracies would rank the paradigms the same way on other
items of the same paradigms. Computed as: each paradigm's items are split at random into two
halves (n items: n // 2 and the rest); the predictor's accuracy is computed per paradigm in
each half, giving two vectors over the paradigms; their Pearson r across paradigms is the
reliability of a half-length test, and Spearman-Brown's 2r / (1 + r) steps it up to the full
number of items. The estimate is the mean of the corrected values over ``splits`` seeded
random splits; the interval is the central 95% of those values (2.5th to 97.5th percentile):
how much the estimate depends on the split drawn, not a sampling interval over items.

A predictor is one (model, method, template, precision) column (level "template"), or a
method with its templates pooled (level "method": per item, the mean credit of the method's
templates for that model and precision). Accuracy counts a tie as an error, as the accuracy
tables do; beside it each row gives the predictor's accuracy over its items, its tie share,
expected accuracy and accuracy with every tie right (:func:`helpers.analysis.accuracy.tie_range`),
and the reliability with every tie counted half (``reliability_ties_half``) and right
(``reliability_ties_right``), on the same splits. ``within="phenomenon"`` correlates across the
paradigms of each phenomenon instead of across all paradigms.

R = 1000 splits by default: the 2.5% tails then rest on 25 splits each, and the Monte Carlo
error of the mean (split-to-split sd / sqrt(R)) is at most 0.003 for an sd of 0.1 or less.
Every predictor with the same items gets the same splits (the seed restarts for each).

Undefined cases are NaN with the reason: paradigms with fewer than 2 items cannot be split
and are left out; fewer than 3 paradigms left give no correlation worth the name (two points
are always +-1); a split where one half's accuracies are equal in every paradigm (a constant
predictor) has no spread to correlate, and a predictor with no split defined is NaN.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, tie_credits, tie_range
from .disagreement import ITEM, decision_matrix

SPLITS = 1000
MIN_PARADIGMS = 3
RULES = ("wrong", "half", "right")  # what a tie is worth (accuracy.tie_credits), the first as everywhere
COLUMNS = ["model", "method", "template", "precision", "level", "scope", "paradigms", "items", "accuracy",
           TIE_SHARE_COLUMN, EXPECTED, TIES_RIGHT, "splits", "splits_defined", "r", "reliability", "low", "high",
           "reliability_ties_half", "reliability_ties_right", "reason"]


def spearman_brown(r):
    """Spearman-Brown's step-up of a half-length reliability to double length: 2r / (1 + r)
    (NaN at r = -1, where it is not defined)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r > -1, 2 * r / (1 + r), np.nan)


def pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of each row of ``a`` with the same row of ``b`` (NaN where a row has no spread)."""
    am, bm = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((am * am).sum(axis=1) * (bm * bm).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.clip((am * bm).sum(axis=1) / den, -1.0, 1.0), np.nan)


def half_accuracies(credit, paradigm, splits: int = SPLITS, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list]:
    """Accuracies per paradigm in the two halves of ``splits`` random splits of each paradigm's
    items (``credit``: 1 right, 0 wrong per item, or items x predictors judged on the same items;
    ``paradigm``: each item's paradigm): splits x paradigms (x predictors) arrays for the first
    and the second half, and the paradigms split (those of 2 items or more, in order of first
    appearance). The splits depend on the seed and the paradigms' sizes only."""
    x = np.asarray(credit, dtype=float)
    single = x.ndim == 1
    x = x.reshape(len(x), -1)
    paradigm = np.asarray(paradigm, dtype=object)
    kept = [p for p, n in pd.Series(paradigm).value_counts(sort=False).items() if n >= 2]
    rng = np.random.default_rng(seed)
    acc_a, acc_b = np.empty((splits, len(kept), x.shape[1])), np.empty((splits, len(kept), x.shape[1]))
    for j, p in enumerate(kept):
        rows = x[paradigm == p]
        n, h = len(rows), len(rows) // 2
        first = rng.permuted(np.broadcast_to(np.r_[np.ones(h), np.zeros(n - h)], (splits, n)), axis=1)
        sum_a = first @ rows  # splits x predictors: the first half's credits
        acc_a[:, j], acc_b[:, j] = sum_a / h, (rows.sum(axis=0) - sum_a) / (n - h)
    return (acc_a[..., 0], acc_b[..., 0], kept) if single else (acc_a, acc_b, kept)


def reliability(acc_a: np.ndarray, acc_b: np.ndarray) -> dict:
    """The summary of splits x paradigms half accuracies: mean r, mean Spearman-Brown corrected
    r over the defined splits and the central 95% of the corrected values, with the reason
    when it is undefined (see the module docstring)."""
    acc_a, acc_b = np.atleast_2d(acc_a), np.atleast_2d(acc_b)
    out = {"paradigms": acc_a.shape[1], "splits": acc_a.shape[0], "splits_defined": 0, "r": np.nan,
           "reliability": np.nan, "low": np.nan, "high": np.nan, "reason": ""}
    if acc_a.shape[1] < MIN_PARADIGMS:
        return {**out, "reason": f"{acc_a.shape[1]} paradigm(s) with 2 or more items: a correlation across "
                                 f"paradigms needs {MIN_PARADIGMS} (score more items per paradigm)"}
    r = pearson_rows(acc_a, acc_b)
    sb = spearman_brown(r)
    defined = ~np.isnan(sb)
    if not defined.any():
        same = np.unique(np.r_[acc_a.ravel(), acc_b.ravel()])
        what = f"{same[0]:.3f} in every paradigm" if len(same) == 1 else "equal across paradigms in a half"
        return {**out, "reason": f"accuracy {what} in every split: no spread across paradigms to correlate"}
    low, high = np.percentile(sb[defined], [2.5, 97.5])
    note = "" if defined.all() else (f"undefined in {int((~defined).sum())} of {len(sb)} splits (no spread in a "
                                     "half); averaged over the others")
    return {**out, "splits_defined": int(defined.sum()), "r": float(np.mean(r[defined])),
            "reliability": float(np.mean(sb[defined])), "low": float(low), "high": float(high), "reason": note}


def _predictors(scores: pd.DataFrame, level: str) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, list[dict]]:
    """Items x predictors of credits at ``level`` under each tie rule (:data:`RULES`), of tie
    shares, and each predictor's key."""
    correct = decision_matrix(scores, "correct")
    tie = 2 * (decision_matrix(scores, "decision") - correct)  # a tie is decided 0.5 and credited 0
    names = list(correct.columns.names) if isinstance(correct.columns, pd.MultiIndex) else ["method"]
    keys = [dict(zip(names, c if isinstance(c, tuple) else (c,))) for c in correct.columns]
    frames = {**tie_credits(correct, tie), "tie": tie}
    if level == "template":
        frames = {k: m.set_axis(range(len(keys)), axis=1) for k, m in frames.items()}
        return {r: frames[r] for r in RULES}, frames["tie"], keys
    if level != "method":
        raise ValueError(f"level must be 'template' (one predictor per template) or 'method' (its templates "
                         f"pooled), got {level!r}")
    groups = [tuple((k, v) for k, v in key.items() if k != "template") for key in keys]
    pooled = list(dict.fromkeys(groups))
    frames = {k: pd.DataFrame({i: m.iloc[:, [j for j, g in enumerate(groups) if g == p]].mean(axis=1)
                               for i, p in enumerate(pooled)}) for k, m in frames.items()}
    return {r: frames[r] for r in RULES}, frames["tie"], [{**dict(p), "template": "all"} for p in pooled]


def split_half(scores: pd.DataFrame, splits: int = SPLITS, seed: int = 0, level: str = "method",
               within: str | None = None) -> pd.DataFrame:
    """One row per predictor (and phenomenon, ``within="phenomenon"``): the split-half
    reliability of its accuracy per paradigm (module docstring) with the splits' central 95%,
    the paradigms and items it rests on, its accuracy and tie range over those items, the
    reliability with ties half and right, and the reason when it is undefined."""
    if splits < 1:
        raise ValueError(f"splits must be a positive number of random splits, got {splits}")
    credits, ties, keys = _predictors(scores, level)
    matrix = credits["wrong"]
    where = matrix.index.to_frame(index=False)
    paradigm = (where["dataset"].astype(str) + " / " + where["paradigm"].astype(str)).to_numpy(dtype=object)
    if within is None:
        scopes = [("all paradigms", np.ones(len(matrix), bool))]
    elif within == "phenomenon" and "phenomenon" in scores:
        of = scores.drop_duplicates(ITEM).set_index(ITEM)["phenomenon"].reindex(matrix.index).astype(str)
        scopes = [(ph, (of == ph).to_numpy()) for ph in dict.fromkeys(of)]
    else:
        raise ValueError(f"within must be None (across all paradigms) or 'phenomenon' (scores with a phenomenon "
                         f"column), got {within!r}")
    rows = {}
    for scope, mask in scopes:
        judged = mask[:, None] & matrix.notna().to_numpy()
        groups: dict[bytes, list[int]] = {}  # predictors judged on the same items share their splits
        for i in range(len(keys)):
            groups.setdefault(np.packbits(judged[:, i]).tobytes(), []).append(i)
        for members in groups.values():
            on, n = judged[:, members[0]], len(members)
            credit = np.hstack([credits[r].iloc[on, members].to_numpy(float) for r in RULES])  # same splits
            acc_a, acc_b, _ = half_accuracies(credit, paradigm[on], splits, seed)
            for k, i in enumerate(members):
                accuracy, share = float(credit[:, k].mean()), float(ties.iloc[on, i].mean())
                half, right = (reliability(acc_a[..., k + j * n], acc_b[..., k + j * n])["reliability"] for j in (1, 2))
                rows[(i, scope)] = {**keys[i], "level": level, "scope": scope, "items": int(on.sum()),
                                    "accuracy": accuracy, TIE_SHARE_COLUMN: share,
                                    **dict(zip((EXPECTED, TIES_RIGHT), tie_range(accuracy, share))),
                                    **reliability(acc_a[..., k], acc_b[..., k]),
                                    "reliability_ties_half": half, "reliability_ties_right": right}
    rows = [rows[(i, scope)] for i in range(len(keys)) for scope, _ in scopes]
    return pd.DataFrame(rows).reindex(columns=[c for c in COLUMNS if c in rows[0]])


def split_half_table(scores: pd.DataFrame, splits: int = SPLITS, seed: int = 0) -> pd.DataFrame:
    """:func:`split_half` across all paradigms at level "method" (templates pooled), then at
    level "template" (template "all" marks the pooled rows)."""
    return pd.concat([split_half(scores, splits, seed, level) for level in ("method", "template")], ignore_index=True)
