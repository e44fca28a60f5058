"""Confidence intervals and paired tests for accuracies (beyond Ide et al.)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from .accuracy import by_template


def bootstrap_ci(correct, n_resamples: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of an accuracy, resampling pairs with replacement (scipy, seeded).
    A single pair gives the degenerate interval (its value twice)."""
    x = np.asarray(correct, dtype=float)
    if x.size == 0:
        raise ValueError("no pairs to bootstrap")
    if x.size == 1:
        return float(x[0]), float(x[0])
    ci = stats.bootstrap((x,), np.mean, n_resamples=n_resamples, batch=256, vectorized=True, confidence_level=level,
                         method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


def with_ci(table: pd.DataFrame, scores: pd.DataFrame, keys: list[str], n_resamples: int = 2000,
            seed: int = 0) -> pd.DataFrame:
    """Add ci_low / ci_high columns to an accuracy table from the per-pair ``correct`` column."""
    lows, highs = [], []
    for _, row in table.iterrows():
        mask = np.ones(len(scores), bool)
        for k in keys:
            mask &= (scores[k] == row[k]).to_numpy()
        lo, hi = bootstrap_ci(scores.loc[mask, "correct"], n_resamples, seed=seed)
        lows.append(lo), highs.append(hi)
    return table.assign(ci_low=lows, ci_high=highs)


def by_template_with_ci(scores: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`accuracy.by_template` with bootstrap 95% CIs of each accuracy."""
    return with_ci(by_template(scores), scores, ["model", "method", "template"], n_resamples, seed)


def mcnemar(correct_a, correct_b, exact: bool | None = None) -> dict:
    """McNemar's test of two methods on the same pairs (statsmodels). Exact binomial when the
    discordant pairs are fewer than 25, else chi-square with continuity correction."""
    a, b = np.asarray(correct_a, bool), np.asarray(correct_b, bool)
    if a.shape != b.shape:
        raise ValueError(f"the two methods must be scored on the same pairs ({a.size} vs {b.size})")
    table = np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]])
    discordant = table[0, 1] + table[1, 0]
    exact = discordant < 25 if exact is None else exact
    result = sm_mcnemar(table, exact=exact, correction=True)
    return {"a_only": int(table[0, 1]), "b_only": int(table[1, 0]), "statistic": float(result.statistic),
            "p_value": float(result.pvalue), "exact": bool(exact), "accuracy_a": float(a.mean()),
            "accuracy_b": float(b.mean())}


def paired_correct(scores: pd.DataFrame, a: tuple[str, str], b: tuple[str, str],
                   keys=("paradigm", "pair_id")) -> tuple[np.ndarray, np.ndarray]:
    """The per-pair ``correct`` of (method, template) a and b, aligned on the same pairs."""
    keys = list(keys)

    def pick(method, template):
        s = scores[(scores["method"] == method) & (scores["template"].astype(str) == str(template))]
        if s.empty:
            raise ValueError(f"no scores for method {method!r} template {template!r}")
        return s.set_index(keys)["correct"]

    left, right = pick(*a), pick(*b)
    joined = pd.concat([left.rename("a"), right.rename("b")], axis=1, join="inner")
    return joined["a"].to_numpy(bool), joined["b"].to_numpy(bool)
