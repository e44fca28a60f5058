"""Confidence intervals and paired tests for accuracies (beyond Ide et al.)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, by_template, tie_range


def bootstrap_mean(values, n_resamples: int = 2000, level: float = 0.95, seed: int = 0):
    """scipy's percentile bootstrap of the mean of ``values`` (pairs resampled with replacement,
    seeded): its result (``confidence_interval``, ``bootstrap_distribution``), or None for one value."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("no pairs to bootstrap")
    if x.size == 1:
        return None
    return stats.bootstrap((x,), np.mean, n_resamples=n_resamples, batch=256, vectorized=True, confidence_level=level,
                           method="percentile", rng=np.random.default_rng(seed))


def bootstrap_ci(correct, n_resamples: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of an accuracy (:func:`bootstrap_mean`). A single pair gives the
    degenerate interval (its value twice)."""
    result = bootstrap_mean(correct, n_resamples, level, seed)
    if result is None:
        value = float(np.asarray(correct, dtype=float)[0])
        return value, value
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


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


def mcnemar(correct_a, correct_b, exact: bool | None = None, tie_a=None, tie_b=None) -> dict:
    """McNemar's test of two methods on the same pairs (statsmodels). Exact binomial when the
    discordant pairs are fewer than 25, else chi-square with continuity correction.

    Ties (``tie_a``, ``tie_b``: per pair, True where that method tied) enter as errors, as in the
    accuracy tables: the test and ``a_only`` / ``b_only`` are the tie-wrong ones. ``a_only_b_tie``
    and ``b_only_a_tie`` count the discordant pairs whose wrong side is a tie. A tie is no
    preference, neither right nor wrong, so such a pair says nothing about which method is better:
    ``p_value_ties_out`` repeats the test on the discordant pairs where neither side tied (as the
    sign test drops zero differences). Beside each accuracy (ties wrong): its tie share, the
    expected accuracy (ties half) and the accuracy with every tie right (:func:`tie_range`)."""
    a, b = np.asarray(correct_a, bool), np.asarray(correct_b, bool)
    if a.shape != b.shape:
        raise ValueError(f"the two methods must be scored on the same pairs ({a.size} vs {b.size})")
    ta, tb = (np.zeros(a.shape, bool) if t is None else np.asarray(t, bool) for t in (tie_a, tie_b))

    def test(a_only, b_only, both, neither):
        use = a_only + b_only < 25 if exact is None else exact
        return sm_mcnemar(np.array([[both, a_only], [b_only, neither]]), exact=use, correction=True), use

    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    result, used = test(only_a, only_b, np.sum(a & b), np.sum(~a & ~b))
    b_tie, a_tie = int(np.sum(a & tb)), int(np.sum(b & ta))  # the discordant pairs whose wrong side tied
    out = {"a_only": only_a, "b_only": only_b, "statistic": float(result.statistic),
           "p_value": float(result.pvalue), "exact": bool(used), "accuracy_a": float(a.mean()),
           "accuracy_b": float(b.mean()), "a_only_b_tie": b_tie, "b_only_a_tie": a_tie,
           "p_value_ties_out": float(test(only_a - b_tie, only_b - a_tie, np.sum(a & b), np.sum(~a & ~b))[0].pvalue)}
    for side, correct, tie in (("a", a, ta), ("b", b, tb)):
        share = float(tie.mean())
        expected, right = tie_range(float(correct.mean()), share)
        out |= {f"{TIE_SHARE_COLUMN}_{side}": share, f"{EXPECTED}_{side}": expected, f"{TIES_RIGHT}_{side}": right}
    return out


def paired_correct(scores: pd.DataFrame, a: tuple[str, str], b: tuple[str, str],
                   keys=("paradigm", "pair_id"), column: str = "correct") -> tuple[np.ndarray, np.ndarray]:
    """The per-pair ``column`` (``correct``, or ``tie``: False where the scores have none) of
    (method, template) a and b, aligned on the same pairs."""
    keys = list(keys)

    def pick(method, template):
        s = scores[(scores["method"] == method) & (scores["template"].astype(str) == str(template))]
        if s.empty:
            raise ValueError(f"no scores for method {method!r} template {template!r}")
        s = s.set_index(keys)
        if column not in s:
            return pd.Series(False, s.index)
        return s[column].eq(True) if column == "tie" else s[column]

    left, right = pick(*a), pick(*b)
    joined = pd.concat([left.rename("a"), right.rename("b")], axis=1, join="inner")
    return joined["a"].to_numpy(bool), joined["b"].to_numpy(bool)


def _auc_statistic(pos: np.ndarray, neg: np.ndarray):
    """A vectorized AUC of resampled indices into ``pos`` and ``neg`` (for scipy's bootstrap):
    each resample weighs every distinct score by how often it was drawn, and the AUC is
    P(pos > neg) + P(pos == neg) / 2 over those weights."""
    values, key = np.unique(np.concatenate([pos, neg]), return_inverse=True)
    pos_key, neg_key, k = key[:pos.size], key[pos.size:], values.size

    def statistic(i_pos, i_neg, axis=-1):
        i_pos, i_neg = np.asarray(i_pos), np.asarray(i_neg)
        rows_pos, rows_neg = i_pos.reshape(-1, pos.size), i_neg.reshape(-1, neg.size)
        out = np.empty(rows_pos.shape[0])
        for r in range(out.size):  # one row at a time: the counts stay in cache
            w = np.bincount(pos_key[rows_pos[r]], minlength=k).astype(np.float64)
            v = np.bincount(neg_key[rows_neg[r]], minlength=k).astype(np.float64)
            out[r] = np.dot(w, np.cumsum(v) - 0.5 * v) / (pos.size * neg.size)  # below + ties / 2
        return out.reshape(i_pos.shape[:-1])

    return statistic


def auc_ci(pos, neg, n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUC, grammatical (``pos``) and ungrammatical
    (``neg``) scores resampled apart (scipy.stats.bootstrap, stratified)."""
    pos, neg = np.asarray(pos, dtype=np.float64), np.asarray(neg, dtype=np.float64)
    if n_resamples < 1:
        return float("nan"), float("nan")
    batch = max(1, int(2e7 // (pos.size + neg.size)))
    res = stats.bootstrap((np.arange(pos.size), np.arange(neg.size)), _auc_statistic(pos, neg), vectorized=True,
                          paired=False, n_resamples=n_resamples, confidence_level=level, method="percentile",
                          batch=batch, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)
