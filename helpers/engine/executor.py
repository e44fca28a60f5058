"""Runs a plan (:mod:`.plan`) through the model and reads the log-probs it needs.

Nodes run level by level in batches formed by a token budget after sorting by length;
each node runs after its parent's cached keys and values, expanded across the batch.
Where the model takes a custom attention mask, a node and its children's subtrees run
packed in rows ("tree attention"): the segments one after another, each token attending
only to its own path, so a shared part runs once per row with no cache kept, copied or
gathered. A row holds as many children as the token budget and a bound on wasted
attention (tokens of sibling branches) allow, or with segment attention
(:mod:`.segment_attention`: each chunk of a row's queries against only the keys it sees,
no wasted pair computed) as many as the budget allows; a node whose children do not fit
beside it runs alone and its children run from its cache.
Sibling nodes are taken in chunks whose caches fit a memory budget, each chunk's
descendants before the next chunk. Vocabulary logits are computed only at the needed
positions, and a sequence's last token is not fed (it is only predicted); log-softmax
runs in float32 and results are float64. On CUDA out-of-memory a
batch is halved and the run goes on.

Batches hold the nodes of one block of the run's requests (``BLOCK_REQUESTS`` in the run's
order, or half the token budget where that is more), or nodes shared across blocks (a
context under "context" or "prefix"; the trie of "tree" is planned per block), so that a
range of the requests lies in few batches. A run may
ask for some of the plan's requests only (``only``): the batches are formed from the whole
plan as before, and just those holding a node the requests need (or caching the keys and
values such a batch reads) run, so each value is bit for bit the one the whole run computes.

The work is split by job: :mod:`.schedule` (rows, chunks and batches), :mod:`.forward` (one
forward pass with its masks and cache), :mod:`.readout` (log-probs at the positions read,
through the shared head of :mod:`.head`).
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from .attention_layout import AttentionLayout
from .forward import ForwardPass, cache_argument
from .head import halving_on_oom
from .plan import Node
from .readout import LogprobReading
from .rows import RunState, Unit, batch_key
from .schedule import Scheduling

# Requests per block of the run's order: batches are formed within a block (sorting a block
# by length pads about as little as sorting the whole run).
BLOCK_REQUESTS = 1024


class Executor(Scheduling, ForwardPass, LogprobReading):
    """Runs plans with a model split into ``body`` (to the last hidden state) and ``project``
    (the output embedding and the model's logit transform:
    :class:`helpers.engine.projection.Projection`). ``token_budget`` bounds the tokens of
    one forward pass (halved for good on out-of-memory), ``kv_budget_bytes`` the cached keys
    and values held at once. ``layout`` says which layers slide (their windows are applied in
    every 4D mask), ``mask_form`` the form of 4D mask the attention takes ("bool" for SDPA,
    "additive" for eager; default: ``pack``), ``call_tokens`` what one more forward call costs in
    tokens' time (where a batch of unequal rows splits rather than pad)."""

    def __init__(self, body, project, *, device, pad_id: int, token_budget: int, kv_budget_bytes: int,
                 kv_bytes_per_token: int, batch_size: int | None = None, pack: str | None = None,
                 pack_waste: float = 0.0, output_device=None, pack_min_stem: int = 0, row_attention: str = "dense",
                 layout: AttentionLayout | None = None, mask_form: str | None = None, unpadded: bool = False,
                 call_tokens: float = 64.0):
        self.body, self.project, self.device, self.pad_id = body, project, device, pad_id
        self.layout = layout or AttentionLayout()
        self.cache_argument = cache_argument(body)
        # where the head computes (a device map may put it apart from the input embedding)
        self.output_device = output_device if output_device is not None else device
        # packed subtrees need a custom 4D mask: "bool" (SDPA) or "additive" (eager); None: off
        self.pack, self.pack_waste = pack, pack_waste
        self.mask_form = mask_form or pack
        self.pack_min_stem = pack_min_stem  # shorter shared parts run from the cache (packing them costs more)
        # how packed rows attend: "segments", "flex" or "dense" (helpers.engine.row_attention)
        self.row_attention = row_attention
        self.token_budget, self.batch_size = int(token_budget), batch_size
        # rows that are no packed row batched only with rows of their length (no padding): a
        # half-precision model on the CPU, whose attention rounds by the keys' width (padding
        # moved a bf16 sentence's LP by 0.02 nats on an AVX2 CPU), scores each sentence as alone
        self.unpadded = unpadded
        # a forward call's cost in tokens' time (cost_model: call / token): a batch ends before
        # its padding would cost more than another call (helpers.engine.schedule)
        self.call_tokens = float(call_tokens)
        self.kv_budget_bytes, self.kv_bytes_per_token = kv_budget_bytes, kv_bytes_per_token
        # batches never span two blocks of the run's requests; a block holds several batches of
        # short sentences even under a GPU's budget, so that sorting by length pads little
        self.block = max(BLOCK_REQUESTS, self.token_budget // 2)
        self.forward_calls = 0  # forward passes run so far (for tests and benchmarks)
        self.tokens_run = 0  # real (not padding) tokens fed to the model so far
        # wall seconds so far running rows (inputs, masks, cache gathers, the transformer body)
        # and in the head (vocabulary log-softmax at the positions read); on a GPU the head's
        # copy to the host waits for the body, so the split holds on CPU only
        self.seconds = {"rows": 0.0, "head": 0.0}

    def run(self, roots: Sequence[Node], n_requests: int, on_result: Callable[[], object] | None = None,
            only: Iterable[int] | None = None, mass=None, greedy: bool = False) -> list[tuple[np.ndarray, ...] | None]:
        """For each request of the plan, (log-prob, raw logit) of every token given those
        before it; entries that were not needed are NaN. ``on_result`` is called as each
        request finishes (a progress bar's update). With ``only`` (request indices), just the
        batches those requests need run, formed as in the whole run; other results are None.
        With ``mass`` ([vocab] bool on the output device), a third array: the log of those tokens'
        probability mass where each token is predicted (read from the same logits); with ``greedy``,
        one more: the id of the greedy token there (the highest logit)."""
        wanted = None if only is None else set(only)
        needed = None if wanted is None else self._needed_batches(list(roots), wanted)
        state = RunState(n_requests, on_result, wanted, mass, greedy)
        self._run_nodes(list(roots), state, needed)
        missing = [i for i in (wanted or ()) if state.results[i] is None]
        if missing:
            raise RuntimeError(f"{len(missing)} of the requested results were not computed (request {missing[0]}); "
                               "score the whole list, or report this as a bug")
        return state.results

    def _run_nodes(self, nodes: list[Node], state: RunState, needed: set[tuple] | None = None) -> None:
        """Run ``nodes`` (their parents' caches are ready) chunk by chunk, each chunk's
        descendants before the next chunk, so that the caches held stay within budget; with
        ``needed``, only the batches whose keys it holds."""
        for group, batches, children in self._schedule(nodes):
            for batch in batches:
                if needed is None or batch_key(batch) in needed:
                    self._forward_with_retry(batch, state)
            for unit in group:
                for node in unit.finished():
                    state.finish(node)
            if children:
                self._run_nodes(children, state, needed)
            for unit in group:
                state.kv.pop(unit.root, None)

    def _forward_with_retry(self, batch: list[Unit], state: RunState) -> None:
        """Run ``batch``, halved on CUDA out-of-memory (:func:`helpers.engine.head.halving_on_oom`)."""
        def shrink() -> None:
            self.token_budget = max(64, self.token_budget // 2)

        halving_on_oom(batch, lambda part: self._forward(list(part), state), shrink=shrink, partial=state.wanted is not None,
                       budget=lambda: self.token_budget)
