"""What a plan costs to run, predicted from its statistics and the model's shape: the same
prediction, so the same choice, on every machine of a device class.

A plan's :class:`Workload` counts what its forward calls do, as the executor would form them
(:mod:`.schedule`), without running anything: forward calls, tokens fed (padding included),
query-key pairs its attention computes (every pair of a dense mask; only the blocks of segment
attention, :mod:`.segment_attention`), cached positions gathered into the calls' caches, keys
gathered by segment-attention blocks (one indexed copy per block group and layer, fitted apart
from a cache's gather), and segment-attention blocks; a FlexAttention row counts the 128 x 128
tiles in which its tree mask sees a pair where it is compiled (CUDA), and every pair where it runs
eagerly. :class:`Coefficients`
give seconds per unit of each; their prediction is the sum. They come from the model's
:class:`ModelShape` (layers, width, multiply-adds per token, cached bytes per token) times the
per-unit costs of its device class (:data:`DEVICE_COSTS`, shipped with the code): no timing at
run time, so a shard job, a rerun on another node or with another thread count chooses as the
first run did. :func:`calibrate` fits coefficients to the wall time of a few small synthetic runs
through the executor; ``benchmarks/fit_device_costs.py`` turns such fits on several models into
a device class's per-unit costs.
"""
from __future__ import annotations

import math
import time
from dataclasses import astuple, dataclass, fields
from typing import Callable, Sequence

import numpy as np
import torch
from scipy.optimize import nnls

from .forward import row_segments
from .plan import Node
from . import flex_rows
from .segment_blocks import block_sizes
from .rows import Unit

# The smallest coefficient a fit keeps (seconds per unit): a feature the timing could not
# separate from the others still costs something, so that of two plans alike in all else the
# one doing less of it wins.
MIN_COEFFICIENT = 1e-12


@dataclass(frozen=True)
class Workload:
    """What running a plan does: forward ``calls``, ``tokens`` fed (rows x widest row of each
    call), attention ``pairs`` computed, cached positions ``gathered`` into calls' caches (rows
    x cached width), segment-attention ``blocks`` and the ``keys`` they gather."""

    calls: int = 0
    tokens: int = 0
    pairs: int = 0
    gathered: int = 0
    blocks: int = 0
    keys: int = 0

    def __add__(self, other: "Workload") -> "Workload":
        return Workload(*(a + b for a, b in zip(astuple(self), astuple(other))))

    def vector(self) -> np.ndarray:
        return np.array(astuple(self), dtype=np.float64)


@dataclass(frozen=True)
class Coefficients:
    """Seconds per unit of each :class:`Workload` feature on one device."""

    call: float
    token: float
    pair: float
    gathered: float
    block: float
    key: float

    def __post_init__(self):
        bad = [f.name for f in fields(self) if not (math.isfinite(getattr(self, f.name)) and getattr(self, f.name) > 0)]
        if bad:
            raise ValueError(f"cost coefficients must be positive and finite, got {bad} = "
                             f"{[getattr(self, b) for b in bad]}: calibrate again (helpers.engine.cost_model.calibrate)")

    def cost(self, work: Workload) -> float:
        """Predicted seconds of ``work``."""
        return float(np.dot(np.array(astuple(self)), work.vector()))


def cheapest(costs: dict[str, float]) -> str:
    """The name of the smallest cost; ties go to the earlier name (list "none" first: no reuse
    wins unless a reuse plan is predicted faster)."""
    if not costs:
        raise ValueError("no candidate plans to choose from")
    return min(costs, key=lambda name: (costs[name], list(costs).index(name)))


def batch_workload(executor, batch: list[Unit]) -> Workload:
    """The :class:`Workload` of one forward call of ``executor`` over ``batch`` (as
    :meth:`helpers.engine.forward.ForwardPass._forward` runs it)."""
    rows, seg = len(batch), max(u.length for u in batch)
    past = max(u.root.offset for u in batch)
    gathered = rows * past  # each row's cached positions copied into the call's cache
    how = executor.row_attention if any(u.packed for u in batch) else "dense"
    if how == "flex":  # compiled, the tiles where a pair is seen; eager (off CUDA), every pair
        pairs = sum(flex_rows.computed_pairs(u.root.offset, row_segments(u), past, seg) for u in batch) \
            if flex_rows.compiles(executor.device) else rows * seg * (past + seg)
        return Workload(calls=1, tokens=rows * seg, pairs=pairs, gathered=gathered)
    if how == "segments":
        window = executor.layout.window if executor.layout.slides else None
        sizes = [size for u in batch for size in block_sizes(u.root.offset, row_segments(u), window=window)]
        pairs, n_blocks, keys = sum(p for _, p in sizes), len(sizes), sum(k for k, _ in sizes)
    else:
        pairs, n_blocks, keys = rows * seg * (past + seg), 0, 0
    return Workload(calls=1, tokens=rows * seg, pairs=pairs, gathered=gathered, blocks=n_blocks, keys=keys)


def workload(executor, roots: Sequence[Node]) -> Workload:
    """The :class:`Workload` of running ``roots`` with ``executor``'s current settings: its
    batches as :meth:`helpers.engine.executor.Executor.run` forms them, nothing run."""
    total = Workload()

    def visit(nodes: list[Node]) -> None:
        nonlocal total
        for _, batches, children in executor._schedule(nodes):
            for batch in batches:
                total = total + batch_workload(executor, batch)
            if children:
                visit(children)

    visit(list(roots))
    return total


def fit(works: Sequence[Workload], seconds: Sequence[float]) -> Coefficients:
    """Coefficients fitted to measured ``seconds`` of ``works``: non-negative least squares on
    relative errors (each run weighs alike whatever its length), floored at :data:`MIN_COEFFICIENT`."""
    a = np.stack([w.vector() for w in works])
    b = np.asarray(seconds, dtype=np.float64)
    if a.shape[0] < a.shape[1] or not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"fitting {a.shape[1]} cost coefficients needs as many positive timings, got {list(b)}")
    scale = a.max(axis=0)
    scale[scale == 0] = 1.0
    solution, _ = nnls((a / scale) / b[:, None], np.ones(len(b)))
    return Coefficients(*np.maximum(solution / scale, MIN_COEFFICIENT))


@dataclass
class Probe:
    """One calibration run: the plan's roots, how to set the executor for it (a share mode's
    settings), and how to run it."""

    roots: list[Node]
    settings: Callable[[], object]


def calibrate(run_probe: Callable[[Probe], float], probes: Sequence[Probe], executor, repeats: int = 3
              ) -> Coefficients:
    """Fit :class:`Coefficients` to ``probes``: each set up, its workload counted, and run
    ``repeats`` times after one warm-up (the fastest counts: other load on the machine only
    slows a run down). ``run_probe`` runs one and returns its wall seconds."""
    works, seconds = [], []
    for probe in probes:
        probe.settings()
        works.append(workload(executor, probe.roots))
        run_probe(probe)  # warm-up (first-call allocations)
        seconds.append(min(run_probe(probe) for _ in range(repeats)))
    return fit(works, seconds)


@dataclass(frozen=True)
class ModelShape:
    """What scales a model's costs: ``layers``, hidden ``width``, body multiply-adds per token
    (``macs``: its weight matrices, embeddings and head left out) and cached key/value bytes per
    token (``kv_bytes``)."""

    layers: int
    width: int
    macs: float
    kv_bytes: float

    @classmethod
    def of(cls, model: torch.nn.Module) -> "ModelShape":
        from .model_checks import hidden_size, kv_bytes_per_token

        cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        layers = int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None) or 1)
        embeddings = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        embeddings |= {id(p) for p in (head.parameters() if head is not None else ())}
        macs = sum(_weights(p) for p in model.parameters() if p.ndim >= 2 and id(p) not in embeddings)
        return cls(layers, hidden_size(model), float(macs), float(kv_bytes_per_token(model)))

    def scales(self) -> np.ndarray:
        """Per :class:`Workload` feature, what one unit of it costs in the units of
        :class:`DeviceCosts`: a call's layers, a token's multiply-adds, a pair's layers x width,
        a gathered position's bytes, a block's layers, a block key's bytes."""
        return np.array([self.layers, self.macs, self.layers * self.width, self.kv_bytes, self.layers, self.kv_bytes],
                        np.float64)


def _weights(p: torch.Tensor) -> int:
    """The weights a parameter holds (a 4-bit parameter stores two per byte: its original shape)."""
    shape = getattr(getattr(p, "quant_state", None), "shape", None)
    return int(np.prod(shape)) if shape is not None else p.numel()


@dataclass(frozen=True)
class DeviceCosts:
    """Seconds per unit on one class of device: per ``layer`` of a forward call, per ``mac``
    (multiply-add of the body), per ``pair`` of attention and unit of width per layer, per
    ``byte`` of cached keys and values gathered, per segment-attention ``block`` and layer, per
    ``key_byte`` of keys and values a block gathers."""

    layer: float
    mac: float
    pair: float
    byte: float
    block: float
    key_byte: float

    def coefficients(self, shape: ModelShape) -> Coefficients:
        return Coefficients(*(np.array(astuple(self)) * shape.scales()))

    @classmethod
    def pooled(cls, fits: Sequence[tuple[Coefficients, ModelShape]], fallback: "DeviceCosts"
               ) -> tuple["DeviceCosts", list[str]]:
        """Per-unit costs from several models' fitted coefficients: per feature, the geometric
        mean of coefficient / shape scale over the models whose fit separated it (a coefficient
        at the floor, :data:`MIN_COEFFICIENT`, says it did not). A feature no model separated
        keeps ``fallback``'s cost; their names come back with the costs."""
        units = np.array([np.array(astuple(c)) / shape.scales() for c, shape in fits], np.float64)
        floors = np.array([np.array(astuple(c)) <= 2 * MIN_COEFFICIENT for c, _ in fits])
        kept = [f.name for f, floor in zip(fields(cls), floors.all(axis=0)) if floor]
        logs = np.where(floors, 0.0, np.log(np.where(floors, 1.0, units)))
        counts = (~floors).sum(axis=0)
        mean = np.where(counts > 0, np.exp(logs.sum(axis=0) / np.maximum(counts, 1)), np.array(astuple(fallback)))
        return cls(*map(float, mean)), kept


# Fitted by benchmarks/fit_device_costs.py (its output: benchmarks/results/fit_device_costs_cpu.txt).
# CUDA: from an H100's datasheet (bf16 matmuls at ~40% of 989 TFLOP/s, attention under a dense
# mask at a quarter of that, ~1 TB/s of gathers, ~0.1 ms of launches per layer); scripts/gpu_check.py
# fits them on the GPU.
DEVICE_COSTS = {
    "cpu": DeviceCosts(layer=2.44e-3, mac=1.36e-11, pair=2.47e-11, byte=4.3e-10, block=2.48e-5, key_byte=3.83e-10),
    "cuda": DeviceCosts(layer=1e-4, mac=5e-15, pair=2e-14, byte=1e-12, block=1e-4, key_byte=1e-12),
}


def device_class(device) -> str:
    """The class of ``device`` whose costs apply: "cuda", else "cpu"."""
    return "cuda" if torch.device(device).type == "cuda" else "cpu"


def shipped(model: torch.nn.Module, device) -> Coefficients:
    """``model``'s coefficients on ``device``: its shape times its device class's costs."""
    return DEVICE_COSTS[device_class(device)].coefficients(ModelShape.of(model))


def timed(fn: Callable[[], object]) -> float:
    """Wall seconds of ``fn()`` (synchronising CUDA first and after)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start
