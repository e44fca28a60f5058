"""Token-length bias (Ide et al. 2024, Figure 2, Table 4, Figure 6)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, at_best_template, summarise, with_tie_range
from .significance import by_template_with_ci


def with_length_difference(scores: pd.DataFrame) -> pd.DataFrame:
    """Add ``length_diff`` = tokens(acceptable) - tokens(unacceptable) of the sentences."""
    return scores.assign(length_diff=scores["n_tokens_good"].astype(int) - scores["n_tokens_bad"].astype(int))


def length_matched(scores: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows of the pairs whose two sentences have as many tokens (the model's own), and a title's
    words saying how many of how many pairs that is."""
    keys = ["model", "paradigm", "pair_id"]
    pairs = scores.drop_duplicates(keys)
    same = pairs[pairs["n_tokens_good"].astype(int) == pairs["n_tokens_bad"].astype(int)][keys]
    kept = scores.merge(same, on=keys)
    return kept, f" (length-matched: {len(same):,} of {len(pairs):,} pairs)"


def point_biserial(correct, length_diff) -> tuple[float, float]:
    """Point-biserial r (and p) between success and the length difference."""
    c, d = np.asarray(correct, float), np.asarray(length_diff, float)
    if np.std(c) == 0 or np.std(d) == 0:
        return float("nan"), float("nan")
    r, p = stats.pointbiserialr(c, d)
    return float(r), float(p)


def correlation_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, method, template): point-biserial r between success and length difference."""
    s = with_length_difference(scores)
    rows = []
    for (model, method, template), g in s.groupby(["model", "method", "template"], sort=False):
        r, p = point_biserial(g["correct"], g["length_diff"])
        rows.append({"model": model, "method": method, "template": template, "r": r, "p_value": p,
                     "pairs": len(g)})
    return pd.DataFrame(rows)


def table4(best: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Table 4 from scores at their best templates: point-biserial r (and p) of each (model,
    method, template) beside its accuracy, ties, their share and bootstrap 95% CI."""
    return correlation_table(best).merge(by_template_with_ci(best, n_resamples, seed),
                                         on=["model", "method", "template", "pairs"])


def accuracy_by_length(scores: pd.DataFrame, clip: int = 4) -> pd.DataFrame:
    """Accuracy per length difference (clipped to [-clip, clip]) with a 95% Wilson interval, and
    the ties in each bin (counted wrong, as everywhere: :mod:`.accuracy`)."""
    s = with_length_difference(scores)
    s = s.assign(length_bin=s["length_diff"].clip(-clip, clip))
    rows = []
    for (model, method, b), g in s.groupby(["model", "method", "length_bin"], sort=True):
        n, k, ties = len(g), int(g["correct"].sum()), int(g["tie"].eq(True).sum())
        lo, hi = wilson(k, n)
        rows.append({"model": model, "method": method, "length_diff": int(b), "accuracy": k / n, "ci_low": lo,
                     "ci_high": hi, "pairs": n, "ties": ties, TIE_SHARE_COLUMN: ties / n})
    return with_tie_range(pd.DataFrame(rows))


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (statsmodels); NaN for no trials."""
    if n == 0:
        return float("nan"), float("nan")
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return float(lo), float(hi)


def _pearson(x, y) -> float:
    return float(stats.pearsonr(x, y)[0]) if len(x) > 2 else float("nan")


def paradigm_gap(scores: pd.DataFrame, a: str = "yesno", b: str = "intemplate_lp") -> tuple[pd.DataFrame, float]:
    """Per paradigm: accuracy of method a minus method b (each at its best template; ties wrong)
    against the mean length difference, and the Pearson r across paradigms (Ide et al. Figure 6).
    Beside the gap: ``gap_ties_half``, the difference of the expected accuracies (ties half), and
    its range over the ties, ``gap_low`` (a's ties wrong, b's right) to ``gap_high`` (the reverse)."""
    s = with_length_difference(at_best_template(scores))
    parts = {}
    for method in (a, b):
        sub = s[s["method"] == method]
        if sub.empty:
            raise ValueError(f"no scores of {method!r}")
        parts[method] = summarise(sub, ["paradigm"]).set_index("paradigm").sort_index().join(
            sub.groupby("paradigm")["length_diff"].mean())
    pa, pb = parts[a], parts[b]
    table = pd.DataFrame({"gap": pa["accuracy"] - pb["accuracy"], "mean_length_diff": pb["length_diff"],
                          "gap_ties_half": pa[EXPECTED] - pb[EXPECTED], "gap_low": pa["accuracy"] - pb[TIES_RIGHT],
                          "gap_high": pa[TIES_RIGHT] - pb["accuracy"]}).dropna().reset_index()
    return table, _pearson(table["mean_length_diff"], table["gap"])


def paradigm_gaps(scores: pd.DataFrame, a: str = "yesno", b: str = "intemplate_lp") -> pd.DataFrame:
    """:func:`paradigm_gap` of every model: model, paradigm, the gap and its tie range,
    mean_length_diff and the model's Pearson r across paradigms (``pearson_r``; of the gap with
    ties half: ``pearson_r_ties_half``)."""
    tables = []
    for model, s in scores.groupby("model", sort=False):
        table, r = paradigm_gap(s, a, b)
        tables.append(table.assign(model=model, pearson_r=r,
                                   pearson_r_ties_half=_pearson(table["mean_length_diff"], table["gap_ties_half"])))
    return pd.concat(tables, ignore_index=True)


def gap_correlations(gaps: pd.DataFrame) -> pd.DataFrame:
    """Per model: the Pearson r of :func:`paradigm_gaps` (ties wrong and half) and the number of
    paradigms."""
    return gaps.groupby("model", sort=False).agg(pearson_r=("pearson_r", "first"),
                                                 pearson_r_ties_half=("pearson_r_ties_half", "first"),
                                                 paradigms=("paradigm", "size")).reset_index()
