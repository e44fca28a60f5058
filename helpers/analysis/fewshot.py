"""Accuracy against the number of few-shot examples k (in-template LP and Yes/No; see
:mod:`helpers.methods.fewshot`): per model, method and k, the mean and sd of the accuracy over the
templates, the best template, pairs and ties, read from stored score files."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ..store import load_files, read_metadata
from .accuracy import table3


def scores_by_k(files: Iterable[str | Path]) -> pd.DataFrame:
    """The score rows of ``files`` with the ``fewshot_k``, ``fewshot_source`` and ``fewshot_seed``
    of each file's configuration (files written before few-shot runs count as k = 0)."""
    files = list(files)
    if not files:
        raise ValueError("no few-shot score files: run the few-shot section of 03_prompting first")
    frames = []
    for path in files:
        meta = read_metadata(path)
        frames.append(load_files([path]).assign(fewshot_k=int(meta.get("fewshot_k") or 0),
                                                fewshot_source=meta.get("fewshot_source"),
                                                fewshot_seed=meta.get("fewshot_seed")))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["score_files"] = [str(p) for p in files]
    return out


def accuracy_by_k(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, method, k): Table 3's accuracy mean and sd over templates, best
    template, pairs and ties (``scores`` from :func:`scores_by_k`)."""
    if "fewshot_k" not in scores:
        raise ValueError("the scores lack fewshot_k: load them with helpers.analysis.fewshot.scores_by_k")
    sources = {s for s in scores["fewshot_source"].dropna().unique()}
    if len(sources) > 1:
        raise ValueError(f"the scores mix few-shot sources {sorted(sources)}: tabulate one source at a time")
    tables = [table3(g).assign(k=k) for k, g in scores.groupby("fewshot_k", sort=True)]
    out = pd.concat(tables, ignore_index=True)
    cols = ["model", "method", "k"] + [c for c in out.columns if c not in ("model", "method", "k")]
    return out[cols].sort_values(["model", "method", "k"], kind="stable").reset_index(drop=True)


def first_inputs(scores: pd.DataFrame, k: int | None = None, template: str | None = None) -> dict[str, str]:
    """method -> the first item's input (its acceptable sentence's side) exactly as scored at
    ``k`` (default the largest) and ``template`` (default the first): the whole prompt a Yes/No
    answer is read after, or the whole text of an in-template readout (examples included; the
    engine adds only the start token)."""
    k = int(scores["fewshot_k"].max()) if k is None else k
    rows = scores[scores["fewshot_k"] == k]
    template = str(rows["template"].iloc[0]) if template is None else str(template)
    out = {}
    for method, g in rows[rows["template"] == template].groupby("method", sort=False):
        column = "prompt_good" if "prompt_good" in g and g["prompt_good"].notna().all() else "input_good"
        out[method] = str(g[column].iloc[0])
    if not out:
        raise ValueError(f"no few-shot scores at k={k}, template {template}")
    return out
