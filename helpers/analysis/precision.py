"""What a lower precision changes, read from score files only: per method, template and
precision, the items whose decision moved against the reference precision's (float32), the
accuracy and its change with McNemar's exact test, and how far the scores moved.

A score file's precision is the ``precision`` entry of its configuration (written by
:mod:`helpers.runs.precision`). A pair method's decision is its ``correct`` credit (a tie is an
error); Hu & Levy's comparisons credit each pair with the share of the two answer orders it
got right (0, 0.5, 1), so a flip there is any change of that credit, counted towards wrong
or right by its direction. Methods of single items (Hu & Levy's word prediction) have no
decision: only their score changes are reported.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from ..store import load_files, read_metadata
from .accuracy import EXPECTED, TIES_RIGHT, tie_range

REFERENCE = "float32"
KEY_COLUMNS = ("dataset", "paradigm", "pair_id", "item_id", "suite", "item", "condition")  # what lines items up
COLUMNS = ["method", "template", "precision", "quant", "dtype", "items", "limit", "ties", "accuracy",
           EXPECTED, TIES_RIGHT, "accuracy_change", "flips", "flip_share", "to_wrong", "to_right", "mcnemar_p",
           "mean_abs_score_change", "max_abs_score_change", "weight_bytes"]


def mcnemar_table(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The 2 x 2 table of paired credits: [[kept right, right -> wrong], [wrong -> right, kept
    wrong]]. A credit that went down counts as right -> wrong, one that went up as wrong ->
    right; unchanged items sit on the diagonal by their reference credit (at least half right,
    or not), which McNemar's test does not read."""
    reference, other = np.asarray(reference, float), np.asarray(other, float)
    if reference.shape != other.shape:
        raise ValueError(f"{reference.shape[0]} reference credits but {other.shape[0]} others: compare the same items")
    kept = reference == other
    return np.array([[np.sum(kept & (reference >= 0.5)), np.sum(other < reference)],
                     [np.sum(other > reference), np.sum(kept & (reference < 0.5))]], dtype=int)


def mcnemar_p(table: np.ndarray) -> float:
    """McNemar's exact p-value (two-sided binomial test of the discordant cells; 1 without any)."""
    return float(mcnemar(np.asarray(table), exact=True).pvalue)


def _scores(frame: pd.DataFrame) -> np.ndarray:
    """Every sentence's (or item's) score: score_good then score_bad, or score."""
    if "score_good" in frame:
        return np.r_[frame["score_good"].to_numpy(float), frame["score_bad"].to_numpy(float)]
    return frame["score"].to_numpy(float)


def compare_frames(reference: pd.DataFrame, other: pd.DataFrame) -> dict:
    """``other``'s items against ``reference``'s (the same items in the same order): accuracy
    (percent, a tie wrong) with its tie range (a tie half, every tie right), its change (points),
    flips (count and percent of the items), the 2 x 2 counts, McNemar's exact p, and the mean and largest absolute change of a score; decision entries
    are NaN for methods without a decision."""
    keys = [c for c in KEY_COLUMNS if c in reference and c in other]
    if len(reference) != len(other) or not reference[keys].reset_index(drop=True).equals(
            other[keys].reset_index(drop=True)):
        raise ValueError(f"the two score files hold other items ({len(reference)} against {len(other)}): "
                         "score every precision on the same selection (same dataset and limit)")
    delta = np.abs(_scores(other) - _scores(reference))
    out = {"items": len(other), "mean_abs_score_change": float(np.mean(delta)),
           "max_abs_score_change": float(np.max(delta))}
    if "correct" not in reference:
        return {**out, **dict.fromkeys(["ties", "accuracy", EXPECTED, TIES_RIGHT, "accuracy_change", "flips",
                                        "flip_share", "to_wrong", "to_right", "mcnemar_p"], np.nan)}
    ref, low = reference["correct"].to_numpy(float), other["correct"].to_numpy(float)
    table = mcnemar_table(ref, low)
    flips = int(table[0, 1] + table[1, 0])
    expected, right = tie_range(float(low.mean()), float(other["tie"].mean()))
    return {**out, "ties": int(other["tie"].sum()), "accuracy": 100 * float(low.mean()),
            EXPECTED: 100 * expected, TIES_RIGHT: 100 * right,
            "accuracy_change": 100 * float(low.mean() - ref.mean()), "flips": flips,
            "flip_share": 100 * flips / len(other), "to_wrong": int(table[0, 1]), "to_right": int(table[1, 0]),
            "mcnemar_p": mcnemar_p(table)}


def _key(meta: dict) -> tuple[str, str]:
    return meta["method"], str(meta.get("template_id") or "none")


def precision_table(files: Iterable[str | Path], weight_bytes: dict[str, int] | None = None,
                    reference: str = REFERENCE) -> pd.DataFrame:
    """One row per method, template and precision of the score files ``files`` (each a file
    of one precision, recorded in its configuration), compared item by item with the
    ``reference`` precision's file of the same method and template; ``weight_bytes`` maps a
    precision to its loaded model's size. Rows follow the files' order, reference first."""
    runs: dict[tuple, dict[str, tuple[Path, dict]]] = {}
    for path in files:
        meta = read_metadata(path)
        if "precision" not in meta:
            raise ValueError(f"{path} records no precision: score it with helpers.runs.precision "
                             "(python -m helpers precision)")
        runs.setdefault(_key(meta), {})[meta["precision"]] = (Path(path), meta)
    rows = []
    for (method, template), by_precision in runs.items():
        if reference not in by_precision:
            raise ValueError(f"no {reference} scores of {method} (template {template}) to compare with: "
                             f"score {reference} too (python -m helpers precision --precisions {reference} ...)")
        ref_path, _ = by_precision[reference]
        ref = load_files([ref_path])
        for precision in [reference] + [p for p in by_precision if p != reference]:
            path, meta = by_precision[precision]
            rows.append({"method": method, "template": template, "precision": precision,
                         "quant": meta.get("quant") or "-", "dtype": meta.get("dtype"), "limit": meta.get("limit"),
                         **compare_frames(ref, load_files([path])),
                         "weight_bytes": (weight_bytes or {}).get(precision, np.nan)})
    return pd.DataFrame(rows, columns=COLUMNS)
