"""The answer first: per model and method, the accuracy with its 95% interval and n, the expected
accuracy where there are ties, each method's paired difference from the best one, and the facts
that change how to read them (identical pairs, the length confound).

A pair's value is its share of right decisions over the method's templates (and A/B orders): 0 or 1
where there is one of each. The interval of a method whose values are all 0 or 1 is Wilson's
binomial interval; of one averaged over templates or orders, a percentile bootstrap over pairs
(the pairs resampled, not the templates: a template's decisions on one pair are not independent).
A method is compared with the best method of its model on the pairs both scored: McNemar's exact
or chi-square test (:func:`helpers.analysis.significance.mcnemar`) where both are 0/1 per pair,
else a paired bootstrap of the difference; either way the difference's 95% interval is the paired
bootstrap's.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .length_bias import wilson
from .significance import bootstrap_ci, bootstrap_mean, mcnemar

PAIR_KEYS = ["paradigm", "pair_id"]
WILSON, BOOTSTRAP = "Wilson (binomial)", "bootstrap over pairs"
# how far the grammatical sentence may be shorter (or longer) more often than the other way before
# the length confound is a caveat, in points of the pairs' share
LENGTH_SKEW = 10


def pair_values(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, method, pair): the share of its templates' decisions that are right and of those
    that tie, and whether every value is a whole decision (one template, one order)."""
    keys = ["model", "method", *[k for k in PAIR_KEYS if k in scores]]
    tie = scores["tie"].astype(float) if "tie" in scores else pd.Series(0.0, scores.index)
    frame = scores.assign(_correct=scores["correct"].astype(float), _tie=tie)
    grouped = frame.groupby(keys, sort=False, observed=True)
    return pd.DataFrame({"correct": grouped["_correct"].mean(), "tie": grouped["_tie"].mean(),
                         "templates": grouped["_correct"].size()}).reset_index()


def _whole(part: pd.DataFrame) -> bool:
    """Whether each pair's value is one decision (one template; a 0 or 1, not a share of A/B orders)."""
    values = part["correct"].to_numpy(float)
    return bool((part["templates"] == 1).all() and np.all((values == 0) | (values == 1)))


def _interval(part: pd.DataFrame, seed: int) -> tuple[float, float, str]:
    values = part["correct"].to_numpy(float)
    if _whole(part):
        low, high = wilson(int(values.sum()), len(values))
        return low, high, WILSON
    return (*bootstrap_ci(values, seed=seed), BOOTSTRAP)


def _paired_difference(a: np.ndarray, b: np.ndarray, seed: int) -> tuple[float, float, float]:
    """(low, high) of the 95% paired bootstrap interval of mean(a - b) (:func:`bootstrap_mean`), and its
    two-sided p: the share of resampled differences on the other side of 0, doubled."""
    diff = a - b
    result = bootstrap_mean(diff, seed=seed) if diff.any() else None
    if result is None:
        return float(diff.mean()), float(diff.mean()), 1.0
    means = result.bootstrap_distribution
    p = min(1.0, 2 * min(np.mean(means <= 0), np.mean(means >= 0)))
    return float(result.confidence_interval.low), float(result.confidence_interval.high), float(p)


def accuracy_table(scores: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """One row per (model, method), best first within a model: ``pairs``, ``accuracy`` (a tie
    counted wrong), ``ci_low``/``ci_high`` and the ``interval`` that gave them, ``stderr`` (lm-eval's:
    sqrt(p(1-p)/n)), ``ties`` (pairs with any tie) and ``expected`` (a tie counted half), and against
    the model's best method on their shared pairs: ``difference``, its interval, ``p_value`` and
    ``test``. Fractions, not percent."""
    values = pair_values(scores)
    rows = []
    for model, of_model in values.groupby("model", sort=False):
        per_method = {m: part for m, part in of_model.groupby("method", sort=False)}
        best = max(per_method, key=lambda m: per_method[m]["correct"].mean())  # the first of equals
        for method, part in per_method.items():
            v = part["correct"].to_numpy(float)
            low, high, how = _interval(part, seed)
            accuracy, ties = float(v.mean()), part["tie"].to_numpy(float)
            row = {"model": model, "method": method, "pairs": len(v), "accuracy": accuracy, "ci_low": low,
                   "ci_high": high, "interval": how, "stderr": float(np.sqrt(accuracy * (1 - accuracy) / len(v))),
                   "ties": int((ties > 0).sum()), "expected": accuracy + float(ties.mean()) / 2}
            rows.append(row | _against(part, per_method[best], best, seed))
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = table.groupby("model", sort=False)["accuracy"].rank(ascending=False, method="first")
    return table.assign(_order=order).sort_values(["model", "_order"], kind="stable").drop(columns="_order") \
        .reset_index(drop=True)


def _against(part: pd.DataFrame, best: pd.DataFrame, best_name: str, seed: int) -> dict:
    """``part``'s paired comparison with the best method's rows ``best`` on the pairs both scored."""
    keys = [k for k in PAIR_KEYS if k in part]
    joined = part.merge(best, on=keys, suffixes=("", "_best"))
    whole = _whole(part) and _whole(best)
    if part["method"].iloc[0] == best_name or joined.empty:
        return {"versus": best_name, "difference": 0.0 if not joined.empty else np.nan, "diff_low": np.nan,
                "diff_high": np.nan, "p_value": np.nan, "test": ""}
    a, b = joined["correct"].to_numpy(float), joined["correct_best"].to_numpy(float)
    low, high, p = _paired_difference(a, b, seed)
    if whole:
        test = mcnemar(a.astype(bool), b.astype(bool))
        p, how = test["p_value"], "McNemar (exact)" if test["exact"] else "McNemar (chi-square)"
    else:
        how = "paired bootstrap"
    return {"versus": best_name, "difference": float(a.mean() - b.mean()), "diff_low": low, "diff_high": high,
            "p_value": float(p), "test": how}


def identical_pairs(scores: pd.DataFrame) -> int:
    """How many pairs have the same sentence on both sides (every method ties on them): the dataset's
    ``identical`` column, or the sentences where the files keep them."""
    pairs = scores.drop_duplicates([k for k in PAIR_KEYS if k in scores])
    if "identical" in pairs:
        return int(pairs["identical"].fillna(False).astype(bool).sum())
    if {"good", "bad"} <= set(pairs):
        return int((pairs["good"].astype(str) == pairs["bad"].astype(str)).sum())
    return 0


def length_shares(scores: pd.DataFrame) -> dict | None:
    """The shares of pairs whose grammatical sentence has fewer, as many and more tokens than the
    other (the model's own tokens, from the score files), or None where no file records them."""
    if not {"n_tokens_good", "n_tokens_bad"} <= set(scores):
        return None
    rows = scores.dropna(subset=["n_tokens_good", "n_tokens_bad"])
    rows = rows.drop_duplicates(["model", *[k for k in PAIR_KEYS if k in rows]])
    if rows.empty:
        return None
    diff = rows["n_tokens_good"].astype(int) - rows["n_tokens_bad"].astype(int)
    return {"shorter": float((diff < 0).mean()), "same": float((diff == 0).mean()), "longer": float((diff > 0).mean()),
            "pairs": int(len(rows))}


def length_skewed(shares: dict | None) -> bool:
    """Whether the grammatical sentence is shorter (or longer) in more pairs than the other way by
    more than :data:`LENGTH_SKEW` points: then LP-style methods partly measure length."""
    return shares is not None and abs(shares["shorter"] - shares["longer"]) * 100 > LENGTH_SKEW
