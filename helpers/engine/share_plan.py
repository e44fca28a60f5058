"""``share="auto"``: each scoring call runs the share mode its cost model predicts fastest.

The candidates (:class:`Mode`) are what a researcher could ask for by hand: no reuse, shared
prefixes run level by level from the cache, shared prefixes packed in rows, and the whole
run's prefix tree packed (packed modes with each way of attending the device's default allows,
segment or flex attention and the dense mask, :mod:`.row_attention`, or the one the scorer's
``attention`` names). For a call, each candidate's plan is built and its :class:`Workload`
counted (:mod:`.cost_model`; over the first 512 requests of a longer call); the
cheapest runs, ties going to no reuse. The coefficients are the model's shape times its device
class's shipped costs (:func:`.cost_model.shipped`): nothing is timed, so the choice depends on
the requests, the model and the device class only, and every process (a shard job on another
node, a rerun with other threads) makes the same choices and computes the same values bit for
bit. :meth:`AutoShare.measured` times the probes of a fit (``benchmarks/fit_device_costs.py``).

The executor is set to the chosen mode's settings exactly as a scorer made with that mode
sets it, so auto's values are bit for bit those of that mode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from . import cost_model, row_attention
from .cost_model import Coefficients, Probe, Workload


# Requests of a call whose plans are counted to choose its mode (the call's first ones).
SAMPLE_REQUESTS = 512


@dataclass(frozen=True)
class Mode:
    """One candidate: the plan's ``share`` mode and the executor's packing settings (as
    ``CausalScorer(share=..., pack=..., pack_min_stem=..., attention=...)`` sets them)."""

    name: str
    share: str
    pack: bool = False
    pack_min_stem: int = 0
    attention: str = "dense"

    def by_hand(self) -> dict:
        """The settings and ``CausalScorer`` arguments that run this mode by hand
        (:func:`helpers.settings.scorer_arguments` splits them)."""
        if self.share == "none" or not self.pack:
            return {"share": self.share, "pack": False} if self.share != "none" else {"share": "none"}
        return {"share": self.share, "pack_min_stem": self.pack_min_stem, "attention": self.attention}


def candidates(can_share: bool, attentions: Sequence[str]) -> list[Mode]:
    """The modes auto chooses from: "none" first; reuse where the model allows a shared cache;
    packed modes, prefix then tree, with each way of attending in ``attentions`` (none: the model
    takes no custom mask), named plainly ("prefix, packed", "tree") under segment attention or a
    dense mask that is the only way, else with the way's suffix (", dense mask", ", flex attention":
    :data:`.row_attention.SUFFIX`), so that a score file's ``share_used`` says which ran."""
    modes = [Mode("none", "none")]
    if not can_share:
        return modes
    modes.append(Mode("prefix, cached levels", "prefix"))
    for share, base in (("prefix", "prefix, packed"), ("tree", "tree")):
        for how in attentions:  # segment attention's suffix is empty
            suffix = "" if list(attentions) == ["dense"] else row_attention.SUFFIX[how]
            modes.append(Mode(base + suffix, share, True, 0, how))
    return modes


@dataclass
class _Seq:
    """A synthetic encoded sequence (what :func:`helpers.engine.plan.build_tree` reads)."""

    ids: list[int]
    first: int


class AutoShare:
    """Chooses and applies a :class:`Mode` per call for one scorer's ``executor``.
    ``build(encoded, need_from, share)`` builds a plan; ``pack_kind`` is the tree-mask form the
    model takes (None: no packing) and ``dense_waste`` the wasted-attention bound of packing
    under a dense mask."""

    def __init__(self, executor, modes: list[Mode], build: Callable, pack_kind: str | None, dense_waste: float,
                 model, vocab: int, max_positions: int | None):
        self.executor, self.modes, self.build = executor, modes, build
        self.pack_kind, self.dense_waste = pack_kind, dense_waste
        self.model, self.vocab, self.max_positions = model, vocab, max_positions
        self.last: Mode | None = None  # the mode of the last call
        self.last_costs: dict[str, float] = {}  # its predicted seconds per candidate
        self.used: dict[str, int] = {}  # calls per mode so far

    def apply(self, mode: Mode) -> None:
        """Set the executor as a scorer made with ``mode`` sets it."""
        ex = self.executor
        ex.pack = self.pack_kind if mode.pack else None
        ex.pack_min_stem, ex.row_attention = mode.pack_min_stem, mode.attention if mode.pack else "dense"
        ex.pack_waste = math.inf if ex.row_attention != "dense" else self.dense_waste

    @property
    def coefficients(self) -> Coefficients:
        """This model's coefficients on the executor's device class (:func:`.cost_model.shipped`)."""
        return cost_model.shipped(self.model, self.executor.device)

    def predict(self, encoded: Sequence, need_from: Sequence[int],
                coefficients: Coefficients | None = None) -> dict[str, float]:
        """Predicted seconds of each candidate on ``encoded`` (its first :data:`SAMPLE_REQUESTS`:
        the costs are compared, not summed, and planning every candidate's whole run would cost
        about a tenth of running plain LP), under ``coefficients`` (default: the shipped ones)."""
        return self._predict(encoded, need_from, coefficients)[0]

    def _predict(self, encoded: Sequence, need_from: Sequence[int], coefficients: Coefficients | None = None
                 ) -> tuple[dict[str, float], dict[str, list]]:
        """:meth:`predict`, and the plans of the sample by share mode (a plan depends on the
        share mode only, not on packing: one per mode serves every candidate of that mode)."""
        encoded, need_from = encoded[:SAMPLE_REQUESTS], need_from[:SAMPLE_REQUESTS]
        coefficients, costs, plans = coefficients or self.coefficients, {}, {}
        for mode in self.modes:
            self.apply(mode)
            if mode.share not in plans:
                plans[mode.share] = self.build(encoded, need_from, mode.share)
            costs[mode.name] = coefficients.cost(cost_model.workload(self.executor, plans[mode.share]))
        return costs, plans

    def plan(self, encoded: Sequence, need_from: Sequence[int]) -> list:
        """The chosen mode's plan of ``encoded``, the executor set for it."""
        plans: dict[str, list] = {}
        if len(self.modes) == 1 or not encoded:
            mode, self.last_costs = self.modes[0], {}
        else:
            self.last_costs, plans = self._predict(encoded, need_from)
            mode = next(m for m in self.modes if m.name == cost_model.cheapest(self.last_costs))
        self.apply(mode)
        self.last = mode
        self.used[mode.name] = self.used.get(mode.name, 0) + 1
        if len(encoded) <= SAMPLE_REQUESTS and mode.share in plans:  # the sample was the whole call
            return plans[mode.share]
        return self.build(encoded, need_from, mode.share)

    # ------------------------------------------------------------ fitting the device costs
    def probes(self) -> list[Probe]:
        """Synthetic runs that between them vary every workload feature: one short row, one
        long row, many short rows, a cached context under continuations, and (where packing
        applies, in each way of attending) many short rows packed after a start token,
        two long branches packed, and short branches packed after a long stem (a priming prefix)."""
        ex = self.executor
        n = int(max(64, min(512, ex.token_budget, (self.max_positions or 512) - 2)))
        rng = np.random.default_rng(0)
        top = max(2, min(self.vocab, _input_vocab(self.model), 5000))  # token ids the model can embed

        def seqs(lengths: Sequence[int], head: Sequence[int] = (), first: int | None = None) -> list[_Seq]:
            # the last two tokens read (``first``: where reading starts), as a sentence after a
            # long context is: the head's cost is alike in every mode, the rows' is what differs
            return [_Seq(ids, len(ids) - 2 if first is None else first)
                    for ids in (list(head) + rng.integers(1, top, k).tolist() for k in lengths)]

        def probe(items: list[_Seq], mode: Mode) -> Probe:
            return Probe(self.build(items, [i.first for i in items], mode.share), lambda: self.apply(mode))

        none, cached = Mode("none", "none"), Mode("cached", "prefix")
        context = rng.integers(1, min(100, top), n // 2).tolist()
        out = [probe(seqs([16]), none), probe(seqs([n]), none), probe(seqs([16] * (n // 16)), none),
               probe(seqs([8] * 8, head=context, first=n // 2), cached)]
        for mode in [m for m in self.modes if m.pack and m.share == "tree"]:  # each way of attending
            out += [probe(seqs([12] * (n // 16), head=[1]), mode), probe(seqs([n // 2] * 2, head=[1]), mode),
                    probe(seqs([8] * 8, head=[1] + context, first=n // 2 + 1), mode)]  # a long stem, short branches
        return out

    def measured(self) -> Coefficients:
        """This model's coefficients fitted to timed probes on this machine (for
        ``benchmarks/fit_device_costs.py``; a run never times)."""
        ex, before = self.executor, (self.executor.forward_calls, self.executor.tokens_run,
                                     dict(self.executor.seconds))
        state = (ex.pack, ex.pack_min_stem, ex.row_attention, ex.pack_waste)

        def timed_probe(probe: Probe) -> float:
            return cost_model.timed(lambda: ex.run(probe.roots, _requests(probe.roots)))

        try:
            return cost_model.calibrate(timed_probe, self.probes(), ex)
        finally:  # the timing runs count in no statistic of the scorer
            ex.forward_calls, ex.tokens_run, ex.seconds = before
            ex.pack, ex.pack_min_stem, ex.row_attention, ex.pack_waste = state


def _requests(roots: list) -> int:
    from .plan import walk

    return 1 + max(n.request for n in walk(roots) if n.request is not None)


__all__ = ["AutoShare", "Mode", "Workload", "candidates"]


def _input_vocab(model) -> int:
    """How many token ids ``model``'s input embedding holds (no bound where it has none)."""
    embedding = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    return getattr(embedding, "num_embeddings", None) or 2**31
