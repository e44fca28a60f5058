"""One model's methods in several precisions: float32, bfloat16, 4-bit NF4 (bfloat16 compute,
as Ide et al. ran their 30B+ models) and 8-bit LLM.int8, each loaded in turn by a run
(:class:`helpers.runs.run.Run`) and scored into one store, each precision's files tagged with its name and recording it in
their configuration (``precision``, beside the model's ``quant`` and ``dtype``). Files of the
same configuration are found and reused: a rerun loads each model but scores nothing.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import paths
from ..data import DATASETS
from ..data.selection import select
from ..methods import method_names
from ..methods.hu_levy import TASKS
from ..models import load
from ..runner import RunSetup
from ..settings.lists import parse_list
from ..settings import AUTO, Settings
from ..store import ScoreStore
from .run import Run


@dataclass(frozen=True)
class Precision:
    """A way to load a model: its label and its loading settings (:class:`helpers.settings.Settings`)."""

    name: str
    quant: str
    dtype: str

    def settings(self, base: Settings | None = None) -> Settings:
        """``base`` (default: every setting "auto") loading in this precision."""
        return (base or Settings()).but(quant=self.quant, dtype=self.dtype)

    def load(self, model: str):
        return load(model, **self.settings().load_arguments())


PRECISIONS = {p.name: p for p in (
    Precision("float32", "none", "float32"),
    Precision("bfloat16", "none", "bfloat16"),
    Precision("nf4", "4bit", "bfloat16"),  # NF4 weights, bfloat16 compute (Ide et al.)
    Precision("int8", "8bit", "float32"),  # LLM.int8 weights; bitsandbytes computes in float16
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
    names = parse_list(selection, list(PRECISIONS), what="precision")
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


def score_precision(model: str, selection, precision: str, methods: Sequence[str], store: ScoreStore | None = None,
                    settings: Settings | None = None) -> PrecisionScores:
    """``methods`` on ``selection`` with ``model`` loaded in ``precision``, into ``store``
    (default :func:`store_root`), under ``settings`` (all but quant and dtype, which the precision
    sets: start, share, token_budget, revision, placement, and the method settings), through the
    run's model loop: loaded, scored, released."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from: {', '.join(PRECISIONS)}")
    settings = settings or Settings()
    if settings.quant != AUTO or settings.dtype != AUTO:
        raise TypeError(f"a precision check sets quant and dtype itself ({precision}: {PRECISIONS[precision]}); "
                        "leave them 'auto'")
    setup = RunSetup(configuration={"precision": precision}, tag=precision)
    int8_casts = logging.getLogger("bitsandbytes.autograd._functions")
    quiet = _Without("MatMul8bitLt: inputs will be cast")  # int8 computes in float16 (PRECISIONS), every layer says so
    int8_casts.addFilter(quiet)
    try:
        run = Run.of(model, settings.but(progress=False))
        files = run.files(methods, selection, setup, store=store or ScoreStore(store_root()),
                          quant=PRECISIONS[precision].quant, dtype=PRECISIONS[precision].dtype)
    finally:
        int8_casts.removeFilter(quiet)
    (record,) = files.records.values()
    return PrecisionScores(precision, list(files), record["weight_bytes"])


def score_precisions(model: str, dataset: str, methods=None, limit: int | None = None, precisions="all",
                     store: ScoreStore | None = None,
                     settings: Settings | None = None) -> list[PrecisionScores]:
    """Every precision of ``precisions`` (float32 first) on the first ``limit`` items per
    paradigm of ``dataset`` with ``methods`` (default :func:`default_methods`)."""
    chosen = method_names(methods) if methods is not None else default_methods(dataset)
    selection = select(dataset, limit)
    return [score_precision(model, selection, name, chosen, store, settings)
            for name in precision_names(precisions)]
