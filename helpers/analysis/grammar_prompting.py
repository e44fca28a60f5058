"""Grammar prompting as a study (Scheinberg et al., Findings of ACL 2025): the same prompts plain,
after each paradigm's explanation, and after an irrelevant control explanation; per paradigm and
overall, the gain of one condition over another with its bootstrap interval and a paired test.

A decision is one (model, method, template, pair, A/B order): an A/B method's file holds each pair
in each order it was prompted in (``ab_orders="three"``: forward, reversed and seeded, as the paper
runs it), so its accuracy is the mean over the three orders; the other methods decide once per
template. The gain's interval resamples pairs (a pair's templates and orders stay together); the
McNemar test pairs the two conditions' decisions of the same unit, once with ties counted wrong and
once right (a tie is no preference: the two p-values bound what the ties can do).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..methods.prompting import AB_SIDE_SCORES, order_outcomes
from ..store import load_files
from .significance import bootstrap_ci, mcnemar

CONDITIONS = ("plain", "explained", "control")
COMPARISONS = (("explained", "plain"), ("control", "plain"), ("explained", "control"))
UNIT = ["model", "method", "template", "paradigm", "pair_id", "order"]
ALL = "(all)"  # the paradigm column's row of every paradigm together


def decisions(files: Mapping[str, Sequence[Path]]) -> pd.DataFrame:
    """One row per decision (:data:`UNIT`) of each condition's score files (``{"plain": [...],
    "explained": [...], "control": [...]}``): ``condition``, ``correct`` and ``tie``."""
    unknown = sorted(set(files) - set(CONDITIONS))
    if unknown:
        raise ValueError(f"conditions {unknown} are not among {', '.join(CONDITIONS)}")
    frames = []
    for condition, paths in files.items():
        for path in paths:
            rows = load_files([path])
            method = str(rows["method"].iloc[0])
            rows = order_outcomes(rows, method) if method in AB_SIDE_SCORES else rows.assign(order="-")
            frames.append(rows.assign(condition=condition, template=rows["template"].astype(str),
                                      correct=rows["correct"].astype(bool), tie=rows["tie"].astype(bool))
                          [[*UNIT, "condition", "correct", "tie"]])
    if not frames:
        raise ValueError("no score files to compare: score the methods plain and explained first")
    return pd.concat(frames, ignore_index=True)


def _paired(block: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The decisions of conditions ``a`` and ``b`` side by side, unit by unit; an error where one
    condition lacks units the other has (they were scored on other pairs or templates)."""
    wide = block[block.condition.isin([a, b])].pivot(index=UNIT, columns="condition", values=["correct", "tie"])
    if wide.isna().any().any():
        missing = wide[wide.isna().any(axis=1)].reset_index()
        raise ValueError(f"{a} and {b} were not scored on the same decisions ({len(missing)} of {len(wide)} differ, "
                         f"e.g. {missing[UNIT].iloc[0].to_dict()}): score both conditions in one run")
    return wide.astype(bool)


def _comparison(wide: pd.DataFrame, a: str, b: str, seed: int, n_resamples: int) -> dict:
    ca, cb = wide[("correct", a)].to_numpy(), wide[("correct", b)].to_numpy()
    ta, tb = wide[("tie", a)].to_numpy(), wide[("tie", b)].to_numpy()
    pair = [wide.index.get_level_values(k) for k in ("paradigm", "pair_id")]
    per_pair = pd.Series(ca.astype(float) - cb, index=wide.index).groupby(pair).mean()
    low, high = bootstrap_ci(per_pair.to_numpy(), n_resamples, seed=seed)
    wrong, right = mcnemar(ca, cb, tie_a=ta, tie_b=tb), mcnemar(ca | ta, cb | tb)
    return {"condition": a, "baseline": b, "pairs": len(per_pair), "decisions": len(ca),
            "accuracy": ca.mean(), "accuracy_baseline": cb.mean(), "gain": per_pair.mean(), "ci_low": low,
            "ci_high": high, "gain_ties_right": (ca | ta).mean() - (cb | tb).mean(),
            "ties": int(ta.sum() + tb.sum()), "p_value": wrong["p_value"], "p_value_ties_right": right["p_value"]}


def gains(table: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000) -> pd.DataFrame:
    """Per (model, method) and per paradigm (and :data:`ALL` of them): each comparison of
    :data:`COMPARISONS` whose two conditions were scored: both accuracies, the gain (ties wrong) with
    its 95% percentile bootstrap interval over pairs, the gain with ties right, the ties, and
    McNemar's p-value with ties wrong and right."""
    rows = []
    present = set(table.condition)
    for (model, method), block in table.groupby(["model", "method"], sort=False):
        for paradigm in [*sorted(block.paradigm.unique()), ALL]:
            part = block if paradigm == ALL else block[block.paradigm == paradigm]
            for a, b in COMPARISONS:
                if {a, b} <= present:
                    rows.append({"model": model, "method": method, "paradigm": paradigm,
                                 **_comparison(_paired(part, a, b), a, b, seed, n_resamples)})
    if not rows:
        raise ValueError(f"nothing to compare: the conditions scored are {sorted(present)}; the study needs plain "
                         "and explained (and control, given a control file)")
    return pd.DataFrame(rows)


def overall(gain_table: pd.DataFrame) -> pd.DataFrame:
    """The rows of every paradigm together, one per (model, method, comparison)."""
    return gain_table[gain_table.paradigm == ALL].reset_index(drop=True)


__all__ = ["ALL", "COMPARISONS", "CONDITIONS", "decisions", "gains", "overall"]
