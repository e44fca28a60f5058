"""The precision of every score file as a column of the scores, so that one model's method
scored in several precisions counts as several predictors.

The results store (outputs/scores) keeps one configuration per (model, method, template): its
files have one precision each, read from their configuration. The precision check
(:mod:`helpers.runs.precision`) keeps one file per precision in a store of its own
(outputs/precision): :func:`with_precision_runs` adds those files' decisions as further
columns, each labelled with the ``precision`` its configuration records.

A file's precision is its configuration's ``precision`` entry when it has one (the precision
check writes it), else named from the model's ``quant`` and ``dtype`` as the precision check
names them: "nf4" (4-bit), "int8" (8-bit), else the dtype ("float32", "bfloat16"...).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import paths
from ..store import ScoreStore, load_scores, read_metadata

UNRECORDED = "unrecorded"  # a configuration naming neither precision, quant nor dtype
QUANT_NAMES = {"4bit": "nf4", "8bit": "int8"}
KEY = ["model", "method", "template", "precision"]


def precision_store() -> Path:
    """Where the precision check keeps its score files: outputs/precision (as
    :func:`helpers.runs.precision.store_root`, which analyses do not import)."""
    return paths.outputs() / "precision"


def precision_label(meta: dict) -> str:
    """A score file's precision from its configuration (see the module docstring)."""
    if meta.get("precision"):
        return str(meta["precision"])
    if meta.get("quant") in QUANT_NAMES:
        return QUANT_NAMES[meta["quant"]]
    return str(meta.get("dtype") or UNRECORDED)


def with_precision(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` (as loaded from the store) with a ``precision`` column read from each row's
    score file configuration (matched by ``config_hash``)."""
    if "precision" in scores:
        return scores
    files = scores.attrs.get("score_files")
    if files is None or "config_hash" not in scores:
        raise ValueError("these scores do not name their score files: pass the frame helpers.store.load_scores "
                         "(or helpers.reporting.outputs.stored_scores) returned")
    labels = {}
    for path in files:
        meta = read_metadata(path)
        labels[meta["config_hash"]] = precision_label(meta)
    out = scores.assign(precision=scores["config_hash"].map(labels).fillna(UNRECORDED).astype(str))
    out.attrs = dict(scores.attrs)
    return out


def precision_scores(root: str | Path, dataset: str, models, methods) -> pd.DataFrame:
    """The precision check's decisions of ``models`` x ``methods`` on ``dataset`` under ``root``
    (its store, outputs/precision): for each precision recorded there, the files
    :func:`helpers.store.load_scores` picks (newest weights, most pairs), with a ``precision``
    column; an empty frame when there are none."""
    frames = []
    for model in models:
        metas = [read_metadata(p) for p in ScoreStore(root).files(dataset, model)]
        found = dict.fromkeys(m["precision"] for m in metas if m.get("precision") and m.get("method") in methods)
        for precision in found:
            frame = load_scores(dataset, model, list(methods), root=root, where={"precision": precision})
            frames.append(frame.assign(precision=precision))
            frames[-1].attrs = dict(frame.attrs)
    if not frames:
        return pd.DataFrame(columns=KEY)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["score_files"] = [f for frame in frames for f in frame.attrs.get("score_files", [])]
    return out


def with_precision_runs(scores: pd.DataFrame, root: str | Path, dataset: str, models, methods) -> pd.DataFrame:
    """``scores`` with their precision (:func:`with_precision`) and, as further rows, the
    precision check's decisions under ``root`` of each (model, method, template, precision)
    that ``scores`` do not already hold (the results store's own file wins). The score files
    of both are in ``attrs["score_files"]``."""
    main = with_precision(scores)
    extra = precision_scores(root, dataset, list(models), list(methods))
    if extra.empty:
        return main
    have = set(map(tuple, main[KEY].astype(str).to_numpy()))
    new = ~pd.Series([tuple(k) in have for k in extra[KEY].astype(str).to_numpy()], index=extra.index)
    added = extra[new.to_numpy()]
    used = {str(f) for f in extra.attrs["score_files"] if read_metadata(f)["config_hash"] in set(added["config_hash"])}
    out = pd.concat([main, added], ignore_index=True)
    out.attrs["score_files"] = list(main.attrs.get("score_files", [])) + [
        f for f in extra.attrs["score_files"] if str(f) in used]
    return out
