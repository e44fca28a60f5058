"""One model's methods in several precisions: float32, bfloat16, 4-bit NF4 (bfloat16 compute,
as Ide et al. ran their 30B+ models) and 8-bit LLM.int8, each loaded in turn and scored by
the runner into one store, each precision's files tagged with its name and recording it in
their configuration (``precision``, beside the model's ``quant`` and ``dtype``). Files of the
same configuration are found and reused: a rerun loads each model but scores nothing.
"""
from __future__ import annotations

import gc
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from .. import paths
from ..data import DATASETS
from ..data.selection import select
from ..engine.kinds import LOAD_OPTIONS, scorer_for
from ..methods import method_names
from ..methods.hu_levy import TASKS
from ..models import load
from ..runner import RunSetup, run_methods
from ..selection_parser import parse_selection
from ..store import ScoreStore


@dataclass(frozen=True)
class Precision:
    """A way to load a model: its label and the arguments of :func:`helpers.models.load`."""

    name: str
    quant: str | None
    dtype: torch.dtype

    def load(self, model: str, **kwargs):
        return load(model, quant=self.quant, dtype=self.dtype, **kwargs)


PRECISIONS = {p.name: p for p in (
    Precision("float32", None, torch.float32),
    Precision("bfloat16", None, torch.bfloat16),
    Precision("nf4", "4bit", torch.bfloat16),  # NF4 weights, bfloat16 compute (Ide et al.)
    Precision("int8", "8bit", torch.float32),  # LLM.int8 weights; bitsandbytes computes in float16
)}
REFERENCE = "float32"
IDE_METHODS = ["lp", "intemplate_lp", "yesno", "ab"]  # LP, in-template LP, Yes/No, A/B (Ide et al.)


def default_methods(dataset: str) -> list[str]:
    """The methods a precision check runs on ``dataset``: Ide et al.'s LP, in-template LP,
    Yes/No and A/B on a dataset of minimal pairs, and Hu & Levy's tasks on their own stimulus
    sets (hl_blimp, hl_syntaxgym and hl_mandarin are pairs: both)."""
    if dataset not in DATASETS:
        raise KeyError(f"unknown dataset {dataset!r}; choose from: {', '.join(DATASETS)}")
    methods = IDE_METHODS if DATASETS[dataset].kind == "pairs" else []
    methods = methods + TASKS.get(dataset, [])
    if not methods:
        raise ValueError(f"{dataset} is neither a dataset of minimal pairs nor one of Hu & Levy's stimulus sets "
                         f"({', '.join(TASKS)}): name the methods to check (--methods)")
    return methods


def precision_names(selection) -> list[str]:
    """Precision names from "all", "nf4,int8" or a list; the reference (float32) always comes first."""
    names = parse_selection(selection, list(PRECISIONS), what="precision")
    return [REFERENCE] + [n for n in names if n != REFERENCE]


def store_root() -> Path:
    """Where precision checks keep their score files and tables: outputs/precision (kept apart
    from outputs/scores, whose readers take one configuration per model, method and template)."""
    return paths.outputs() / "precision"


class _Without(logging.Filter):
    """Drops the log records whose message starts with ``prefix``."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


@dataclass
class PrecisionScores:
    """The score files of one precision, and the size of the model loaded in it (bytes)."""

    precision: str
    files: list[Path]
    weight_bytes: int


def score_precision(model: str, selection, precision: str, methods: Sequence[str], options: dict | None = None,
                    store: ScoreStore | None = None, **scorer_kwargs) -> PrecisionScores:
    """``methods`` on ``selection`` with ``model`` loaded in ``precision``, into ``store``
    (default :func:`store_root`); ``scorer_kwargs`` go to :func:`helpers.engine.kinds.scorer_for`
    (load options but quant and dtype, which the precision sets, and the scorer's: start,
    share, token_budget, ...). The model is released before returning."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from: {', '.join(PRECISIONS)}")
    load_kw = {k: scorer_kwargs.pop(k) for k in LOAD_OPTIONS if k in scorer_kwargs}
    if {"quant", "dtype"} & set(load_kw):
        raise TypeError(f"a precision check sets quant and dtype itself ({precision}: {PRECISIONS[precision]}); "
                        "leave them out")
    loaded = PRECISIONS[precision].load(model, **load_kw)
    setup = RunSetup(configuration={"precision": precision}, tag=precision)
    int8_casts = logging.getLogger("bitsandbytes.autograd._functions")
    quiet = _Without("MatMul8bitLt: inputs will be cast")  # int8 computes in float16 (PRECISIONS), every layer says so
    int8_casts.addFilter(quiet)
    try:
        scorer = scorer_for(loaded, **{"progress": False, **scorer_kwargs})  # its start-up checks run the model
        files = run_methods(scorer, selection, methods, options, setup=setup, store=store or ScoreStore(store_root()))
    finally:
        int8_casts.removeFilter(quiet)
    size = int(loaded.model.get_memory_footprint())
    del scorer, loaded
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return PrecisionScores(precision, files, size)


def score_precisions(model: str, dataset: str, methods=None, limit: int | None = None, precisions="all",
                     options: dict | None = None, store: ScoreStore | None = None,
                     **scorer_kwargs) -> list[PrecisionScores]:
    """Every precision of ``precisions`` (float32 first) on the first ``limit`` items per
    paradigm of ``dataset`` with ``methods`` (default :func:`default_methods`)."""
    chosen = method_names(methods) if methods is not None else default_methods(dataset)
    selection = select(dataset, limit)
    return [score_precision(model, selection, name, chosen, options, store, **scorer_kwargs)
            for name in precision_names(precisions)]
