"""What a lower precision costs: one model's LP decisions on a dataset in float32, bfloat16,
4-bit NF4 (bfloat16 compute, as Ide et al. ran their large models) and 8-bit LLM.int8,
scored by the project's runner and compared pair by pair with float32.

    python scripts/precision_table.py --model demo-en --dataset blimp
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import binomtest

from ..data.selection import select
from ..files import write_text
from ..models import load
from ..store import ScoreStore
from ..runner import run_methods
from ..engine.causal import CausalScorer


@dataclass(frozen=True)
class Precision:
    """A way to load the model: its label and the arguments of :func:`helpers.models.load`."""

    name: str
    quant: str | None
    dtype: torch.dtype

    def load(self, model: str):
        return load(model, quant=self.quant, dtype=self.dtype)


PRECISIONS = {p.name: p for p in (
    Precision("float32", None, torch.float32),
    Precision("bfloat16", None, torch.bfloat16),
    Precision("nf4", "4bit", torch.bfloat16),  # NF4 weights, bfloat16 compute (Ide et al.)
    Precision("int8", "8bit", torch.float32),  # LLM.int8 weights; bitsandbytes computes in float16
)}
REFERENCE = "float32"


@dataclass
class PrecisionRun:
    """LP scores of one precision: the score frame (one row per pair), how the model was held
    (weight bytes, compute dtype) and the wall time of scoring."""

    precision: str
    scores: pd.DataFrame
    weight_bytes: int
    dtype: str
    quant: str | None
    seconds: float


def run_precision(model: str, dataset: str, precision: str, store_root: str | Path,
                  limit: int | None = None) -> PrecisionRun:
    """LP on the first ``limit`` pairs per paradigm (all with None) of ``dataset`` with ``model``
    loaded in ``precision``, through the runner into a store of its own (found files are reused,
    with the scoring time recorded when they were written)."""
    spec = PRECISIONS[precision]
    lm = spec.load(model)
    selection = select(dataset, limit)
    scorer = CausalScorer(lm, progress=False)
    scorer.score_texts(list(selection.frame["good"].iloc[:16]))  # warm-up: first calls set up kernels
    store = Path(store_root) / precision
    timings = store / "seconds.json"  # scoring time of each finished selection, for reruns that reuse it
    known = json.loads(timings.read_text()) if timings.is_file() else {}
    calls, start = scorer.forward_calls, time.perf_counter()
    (path,) = run_methods(scorer, selection, ["lp"], store=ScoreStore(store))
    seconds = time.perf_counter() - start
    if scorer.forward_calls > calls:  # scored now, not found in the store
        write_text(timings, json.dumps({**known, str(limit): seconds}))
    elif str(limit) in known:
        seconds = known[str(limit)]
    provenance = lm.provenance()
    return PrecisionRun(precision, pd.read_parquet(path), int(lm.model.get_memory_footprint()),
                        provenance["dtype"], provenance["quant"], seconds)


def decisions(scores: pd.DataFrame) -> np.ndarray:
    """+1 where the good sentence has the higher LP, -1 where the bad one has, 0 on a tie."""
    return np.sign(scores["score_good"].to_numpy(float) - scores["score_bad"].to_numpy(float)).astype(int)


def compare(runs: list[PrecisionRun], reference: str = REFERENCE) -> pd.DataFrame:
    """One row per precision: LP accuracy (ties are errors), ties, the share of pairs whose
    decision equals the reference's, the pairs that turned wrong or right against it and the
    exact McNemar p-value of those flips, the mean and largest change of a sentence's LP,
    the weight bytes and the scoring time relative to the reference."""
    by_name = {r.precision: r for r in runs}
    ref = by_name[reference]
    keys = ["paradigm", "pair_id"] if "pair_id" in ref.scores else ["paradigm"]
    rows = []
    for run in runs:
        if not run.scores[keys].reset_index(drop=True).equals(ref.scores[keys].reset_index(drop=True)):
            raise ValueError(f"{run.precision} scored other pairs than {reference}: run both on the same selection")
        same = decisions(run.scores) == decisions(ref.scores)
        ref_right, right = ref.scores["correct"].to_numpy(bool), run.scores["correct"].to_numpy(bool)
        to_wrong, to_right = int(np.sum(ref_right & ~right)), int(np.sum(~ref_right & right))
        delta = np.abs(np.r_[run.scores["score_good"] - ref.scores["score_good"],
                             run.scores["score_bad"] - ref.scores["score_bad"]])
        flips = to_wrong + to_right
        rows.append({
            "precision": run.precision, "quant": run.quant or "-", "dtype": run.dtype,
            "pairs": len(run.scores), "accuracy": 100 * float(right.mean()), "ties": int(run.scores["tie"].sum()),
            "agreement": 100 * float(same.mean()), "to_wrong": to_wrong, "to_right": to_right,
            "mcnemar_p": float(binomtest(to_wrong, flips).pvalue) if flips else 1.0,
            "mean_abs_dlp": float(delta.mean()), "max_abs_dlp": float(delta.max()),
            "weight_mb": run.weight_bytes / 1e6, "time_ratio": run.seconds / ref.seconds,
        })
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """The comparison as the markdown table of the model card."""
    shown = table.assign(
        accuracy=table.accuracy.map("{:.2f}".format), agreement=table.agreement.map("{:.2f}".format),
        flips=[f"{w} / {r}" for w, r in zip(table.to_wrong, table.to_right)],
        mcnemar_p=table.mcnemar_p.map("{:.2g}".format), mean_abs_dlp=table.mean_abs_dlp.map("{:.4f}".format),
        max_abs_dlp=table.max_abs_dlp.map("{:.3f}".format), weight_mb=table.weight_mb.map("{:.1f}".format),
        time_ratio=table.time_ratio.map("{:.2f}".format))
    shown = shown[["precision", "quant", "dtype", "pairs", "accuracy", "ties", "agreement", "flips", "mcnemar_p",
                   "mean_abs_dlp", "max_abs_dlp", "weight_mb", "time_ratio"]]
    shown.columns = ["precision", "quant", "compute dtype", "pairs", "LP accuracy %", "ties",
                     f"same decision as {REFERENCE} %", "turned wrong / right", "McNemar p",
                     "mean abs. change of a sentence LP", "largest change", "weights MB", "time vs float32"]
    return shown.to_markdown(index=False, disable_numparse=True)
