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
range of the requests (one shard of a dataset run) lies in few batches. A run may
ask for some of the plan's requests only (``only``): the batches are formed from the whole
plan as before, and just those holding a node the requests need (or caching the keys and
values such a batch reads) run, so each value is bit for bit the one the whole run computes.
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from transformers import DynamicCache

from . import segment_attention
from .plan import Node, walk

# Requests per block of the run's order: batches are formed within a block (sorting a block
# by length pads about as little as sorting the whole run).
BLOCK_REQUESTS = 1024

# Logit rows computed at once: bounds memory at rows x vocabulary floats (on CPU a smaller
# block stays in cache for the log-softmax that reads it: the head runs 25% faster).
LOGIT_ELEMENTS = {"cpu": 1 << 23}
LOGIT_ELEMENTS_ELSEWHERE = 1 << 25

KV = list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values)


class CachedKV:
    """Where a node's keys and values lie: row ``row`` of a batch's cache ``layers`` (per
    layer [rows, kv_heads, width, head_dim]), its positions ``0..offset-1`` there followed by
    ``length`` positions from ``past`` (the batch's cached width) on. A reference, not a copy:
    the batch's tensors are read by index when the node's children run."""

    __slots__ = ("layers", "row", "offset", "past", "length")

    def __init__(self, layers: KV, row: int, offset: int, past: int, length: int):
        self.layers, self.row, self.offset, self.past, self.length = layers, row, offset, past, length

    @property
    def end(self) -> int:
        return self.offset + self.length

    def positions(self, width: int) -> np.ndarray:
        """[width] the node's positions in its batch's cache, padded with position 0 (masked)."""
        pos = np.zeros(width, dtype=np.int64)
        pos[:self.offset] = np.arange(self.offset)
        pos[self.offset:self.end] = np.arange(self.past, self.past + self.length)
        return pos


def fed(node: Node) -> int:
    """Tokens of ``node`` the model is fed: all but a leaf's last, which is only predicted."""
    return len(node.ids) - (0 if node.children else 1)


class Unit:
    """What one batch row runs: ``members``, a node and (packed) descendants of it, parents
    before children, after the cached keys/values of the root's parent. ``cached``: the
    root runs alone and keeps its keys/values for its children (which run next level)."""

    __slots__ = ("root", "members", "starts", "length", "cached")

    def __init__(self, root: Node, members: list[Node], cached: bool = False):
        self.root, self.members, self.cached = root, members, cached
        self.starts, at = {}, 0
        for n in members:  # where each member's segment starts in the row
            self.starts[n] = at
            at += fed(n)
        self.length = at

    @property
    def packed(self) -> bool:
        return len(self.members) > 1

    def finished(self) -> list[Node]:
        """Nodes whose values are complete after this row: the members, and children read
        from a member's last position that need no forward pass of their own."""
        return self.members + [c for n in self.members for c in n.children if not c.needs_forward]

    def waste(self) -> int:
        """Query-key pairs of the row that attend to nothing useful: tokens of other
        branches before each token (the price of packing siblings in one row)."""
        path_tokens, total = {}, 0
        for n in self.members:
            above = path_tokens.get(n.parent, 0) if n is not self.root else 0
            total += fed(n) * (self.starts[n] - above)
            path_tokens[n] = above + fed(n)
        return total

    def tree_mask(self) -> torch.Tensor:
        """[length, length] bool: token q may attend to token k (k on q's path, not after q)."""
        index = {n: i for i, n in enumerate(self.members)}
        m = len(self.members)
        above = torch.zeros((m, m), dtype=torch.bool)  # above[i, j]: member j is i or an ancestor of i
        for i, n in enumerate(self.members):
            node = n
            while node is not None and node in index:
                above[i, index[node]] = True
                node = node.parent
        which = torch.cat([torch.full((fed(n),), i) for i, n in enumerate(self.members)])  # [length]
        pos = torch.cat([n.offset + torch.arange(fed(n)) for n in self.members])  # [length]
        return above[which][:, which] & (pos[None, :] <= pos[:, None])


def _take(t: torch.Tensor, src: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Rows ``src`` [g, 1] at positions ``pos`` [g, width] of a cache ``t`` [rows, kv_heads,
    positions, head_dim]: [g, kv_heads, width, head_dim] (indices moved to ``t``'s device, as a
    device map puts layers apart)."""
    return t.transpose(1, 2)[src.to(t.device), pos.to(t.device)].transpose(1, 2)


def _key(batch: list[Unit]) -> tuple:
    """Which batch of a run this is: its rows' members (plan nodes)."""
    return tuple(tuple(id(n) for n in u.members) for u in batch)


class RunState:
    """What one run reads and holds, keyed by plan node: log-probs and raw logits of each
    node's tokens (NaN where not needed), the caches of nodes whose children wait, and each
    request's result."""

    def __init__(self, n_requests: int, on_result: Callable[[], object] | None = None,
                 wanted: set[int] | None = None):
        self.wanted = wanted  # the requests whose results count (None: all)
        self.logprobs: dict[Node, np.ndarray] = {}
        self.logits: dict[Node, np.ndarray] = {}
        self.kv: dict[Node, CachedKV] = {}
        self.results: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n_requests
        self.on_result = on_result

    def values(self, node: Node) -> tuple[np.ndarray, np.ndarray]:
        """(log-probs, raw logits) of ``node``'s tokens: entry j is log p(ids[j] | before)."""
        if node not in self.logprobs:
            self.logprobs[node] = np.full(len(node.ids), np.nan)
            self.logits[node] = np.full(len(node.ids), np.nan)
        return self.logprobs[node], self.logits[node]

    def finish(self, node: Node) -> None:
        """Store the result of the request ending at ``node`` (if any): its whole path."""
        if node.request is None or (self.wanted is not None and node.request not in self.wanted):
            return
        if self.results[node.request] is not None:  # a shared part repeated in several rows ends here
            return
        parts = [self.values(n) for n in node.path()]
        self.results[node.request] = (np.concatenate([lp for lp, _ in parts]),
                                      np.concatenate([raw for _, raw in parts]))
        if self.on_result is not None:
            self.on_result()


class Executor:
    """Runs plans with a model split into ``body`` (to the last hidden state) and ``head``
    (the output embedding). ``token_budget`` bounds the tokens of one forward pass (halved
    for good on out-of-memory), ``kv_budget_bytes`` the cached keys and values held at once."""

    def __init__(self, body, head, *, device, pad_id: int, token_budget: int, kv_budget_bytes: int,
                 kv_bytes_per_token: int, batch_size: int | None = None, pack: str | None = None,
                 pack_waste: float = 0.0, output_device=None, pack_min_stem: int = 0, segmented: bool = False):
        self.body, self.head, self.device, self.pad_id = body, head, device, pad_id
        # where the head computes (a device map may put it apart from the input embedding)
        self.output_device = output_device if output_device is not None else device
        # packed subtrees need a custom 4D mask: "bool" (SDPA) or "additive" (eager); None: off
        self.pack, self.pack_waste = pack, pack_waste
        self.pack_min_stem = pack_min_stem  # shorter shared parts run from the cache (packing them costs more)
        self.segmented = segmented  # packed rows attend segment by segment (helpers.engine.segment_attention)
        self.token_budget, self.batch_size = int(token_budget), batch_size
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
        self._partial = False  # running only some requests' batches (their batches must stay the whole run's)

    def run(self, roots: Sequence[Node], n_requests: int, on_result: Callable[[], object] | None = None,
            only: Iterable[int] | None = None) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """For each request of the plan, (log-prob, raw logit) of every token given those
        before it; entries that were not needed are NaN. ``on_result`` is called as each
        request finishes (a progress bar's update). With ``only`` (request indices), just the
        batches those requests need run, formed as in the whole run; other results are None."""
        wanted = None if only is None else set(only)
        needed = None if wanted is None else self._needed_batches(list(roots), wanted)
        state = RunState(n_requests, on_result, wanted)
        self._partial = wanted is not None
        try:
            self._run_nodes(list(roots), state, needed)
        finally:
            self._partial = False
        missing = [i for i in (wanted or ()) if state.results[i] is None]
        if missing:
            raise RuntimeError(f"{len(missing)} of the requested results were not computed (request {missing[0]}); "
                               "score the whole list, or report this as a bug")
        return state.results

    def planned_tokens(self, roots: Sequence[Node]) -> int:
        """Tokens that running ``roots`` would feed the model (rows as :meth:`run` forms
        them, shared parts repeated per row included), without running anything."""
        total = 0
        for node in roots:
            for unit in self._units(node):
                total += unit.length if unit.root.needs_forward else 0
                if unit.cached:
                    total += self.planned_tokens(unit.root.children)
        return total

    # ------------------------------------------------------------ order of work
    def _units(self, node: Node) -> list[Unit]:
        """The rows that run ``node`` and its descendants: packed rows of ``node`` and as many
        of its children's subtrees as fit (the token budget, and wasted attention within
        ``pack_waste`` query-key pairs per token); else ``node`` alone, its cache kept for its
        children (the next level)."""
        forward_children = [c for c in node.children if c.needs_forward]
        if not forward_children:
            return [Unit(node, [node])]
        if self.pack and len(node.ids) >= self.pack_min_stem:
            rows, row = [], [node]
            for child in forward_children:
                subtree = [n for n in walk([child]) if n.needs_forward]
                if self._fits(node, row + subtree):
                    row += subtree
                elif len(row) > 1 and self._fits(node, [node] + subtree):
                    rows.append(Unit(node, row))
                    row = [node] + subtree
                else:  # a child's subtree does not fit beside this node: run the node alone
                    rows = None
                    break
            if rows is not None:
                rows.append(Unit(node, row))
                repeated = (len(rows) - 1) * len(node.ids)  # the shared part run again in later rows
                if repeated <= sum(u.length for u in rows) - len(rows) * len(node.ids):
                    return rows
                # a long shared part over many rows: running it once and its children from the
                # cache costs less (about the children's tokens again) than repeating it
        return [Unit(node, [node], cached=True)]

    def _fits(self, root: Node, members: list[Node]) -> bool:
        unit = Unit(root, members)
        return unit.length <= self.token_budget and unit.waste() <= self.pack_waste * unit.length

    def _block(self, unit: Unit) -> int:
        """The block of the run's requests that ``unit`` serves, or -1 where its subtree
        serves several (such units are batched apart, for every shard of the run to share)."""
        first, last = unit.root.lead // self.block, unit.root.last // self.block
        return first if first == last else -1

    def _chunks(self, units: list[Unit]) -> Iterable[list[Unit]]:
        """Groups of sibling-level units whose cached keys/values fit the KV budget together
        (only a root that runs alone keeps a cache)."""
        limit = max(1, self.kv_budget_bytes // self.kv_bytes_per_token)
        chunk, size = [], 0
        for unit in sorted(units, key=lambda u: (self._block(u), u.root.offset, u.length)):
            cost = unit.root.end if unit.cached else 0
            if chunk and size + cost > limit:
                yield chunk
                chunk, size = [], 0
            chunk.append(unit)
            size += cost
        if chunk:
            yield chunk

    def _schedule(self, nodes: list[Node]) -> Iterable[tuple[list[Unit], list[list[Unit]], list[Node]]]:
        """The work on ``nodes`` in order: per chunk, its units, its batches and the children
        that run from its caches next (each chunk's descendants before the next chunk)."""
        units = [u for n in nodes for u in self._units(n)]
        for group in self._chunks(units):
            batches = list(self._batches([u for u in group if u.root.needs_forward]))
            yield group, batches, [child for u in group if u.cached for child in u.root.children]

    def _run_nodes(self, nodes: list[Node], state: RunState, needed: set[tuple] | None = None) -> None:
        """Run ``nodes`` (their parents' caches are ready) chunk by chunk, each chunk's
        descendants before the next chunk, so that the caches held stay within budget; with
        ``needed``, only the batches whose keys it holds."""
        for group, batches, children in self._schedule(nodes):
            for batch in batches:
                if needed is None or _key(batch) in needed:
                    self._forward_with_retry(batch, state)
            for unit in group:
                for node in unit.finished():
                    state.finish(node)
            if children:
                self._run_nodes(children, state, needed)
            for unit in group:
                state.kv.pop(unit.root, None)

    def _needed_batches(self, roots: list[Node], wanted: set[int]) -> set[tuple]:
        """Keys of the whole run's batches that requests ``wanted`` need: those holding a node
        on one of their paths, and, in turn, those caching the parent of a unit in a needed batch."""
        marked = {n for leaf in walk(roots) if leaf.request in wanted for n in leaf.path()}
        batches: list[list[Unit]] = []
        cached_in: dict[Node, int] = {}  # a root that keeps its cache -> its batch

        def visit(nodes: list[Node]) -> None:
            for _, chunk_batches, children in self._schedule(nodes):
                for batch in chunk_batches:
                    cached_in.update((u.root, len(batches)) for u in batch if u.cached)
                    batches.append(batch)
                if children:
                    visit(children)

        visit(roots)
        todo = [i for i, b in enumerate(batches) if any(u.root in marked for u in b)]
        needed: set[int] = set()
        while todo:
            i = todo.pop()
            if i not in needed:
                needed.add(i)
                todo.extend(cached_in[u.root.parent] for u in batches[i] if u.root.parent is not None)
        return {_key(batches[i]) for i in needed}

    def _batches(self, units: list[Unit]) -> Iterable[list[Unit]]:
        """Length-sorted batches of one block each, within the token budget (segment tokens,
        and cached plus segment tokens up to four times that) and the batch size."""
        units = sorted(units, key=lambda u: (self._block(u), u.root.offset, u.length))
        batch: list[Unit] = []
        seg_max = past_max = 0
        for unit in units:
            s, p = max(seg_max, unit.length), max(past_max, unit.root.offset)
            rows = len(batch) + 1
            too_big = batch and (rows * s > self.token_budget or rows * (s + p) > 4 * self.token_budget
                                 or (self.batch_size and rows > self.batch_size)
                                 or self._block(unit) != self._block(batch[0]))
            if too_big:
                yield batch
                batch, s, p = [], unit.length, unit.root.offset
            batch.append(unit)
            seg_max, past_max = s, p
        if batch:
            yield batch

    def _forward_with_retry(self, batch: list[Unit], state: RunState) -> None:
        try:
            self._forward(batch, state)
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            if self._partial:  # smaller batches would no longer be the whole run's (nor its numbers)
                raise torch.cuda.OutOfMemoryError(
                    "out of memory in a batch of a partial run (a shard), whose batches must be the whole "
                    f"run's: score every shard and the whole run with a smaller token budget "
                    f"(Scorer(token_budget=...), now {self.token_budget})") from None
            torch.cuda.empty_cache()
            self.token_budget = max(64, self.token_budget // 2)
            half = len(batch) // 2
            self._forward_with_retry(batch[:half], state)
            self._forward_with_retry(batch[half:], state)

    # ------------------------------------------------------------ one forward pass
    @torch.inference_mode()
    def _forward(self, batch: list[Unit], state: RunState) -> None:
        """Run the rows of ``batch`` (each after its root's parent's cached keys/values)."""
        start = time.perf_counter()
        rows = len(batch)
        seg = max(u.length for u in batch)
        past = max(u.root.offset for u in batch)
        input_ids = np.full((rows, seg), self.pad_id, dtype=np.int64)  # [rows, seg]
        positions = np.zeros((rows, seg), dtype=np.int64)  # [rows, seg]
        for r, u in enumerate(batch):
            input_ids[r, :u.length] = [t for n in u.members for t in n.ids[:fed(n)]]
            positions[r, :u.length] = [p for n in u.members for p in range(n.offset, n.offset + fed(n))]
            positions[r, u.length:] = u.root.end - 1  # padding: any valid position (it is masked)
        input_ids, positions = torch.from_numpy(input_ids), torch.from_numpy(positions)
        dev = self.device
        segments = segment_attention.Segments(self._blocks(batch, past), rows, seg, past) \
            if self.segmented and any(u.packed for u in batch) else None
        if segments is not None:  # the attention reads the segments; transformers takes a 4D mask as it is
            mask = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=dev).expand(rows, 1, seg, past + seg)
        elif any(u.packed for u in batch):
            mask = self._tree_mask(batch, past, seg)
        else:
            mask = self._pad_mask(batch, past, seg)
        cache = None
        if past:
            cache = DynamicCache(ddp_cache_data=self._gather_cache([u.root for u in batch], past, state))
        keep = any(u.cached for u in batch)
        self.forward_calls += 1
        self.tokens_run += sum(u.length for u in batch)
        extra = {"segments": segments} if segments is not None else {}
        with segment_attention.switched(self.body.config) if segments is not None else nullcontext():
            out = self.body(input_ids=input_ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev),
                            past_key_values=cache, use_cache=keep or cache is not None, **extra)
        if keep:
            # per layer [rows, kv_heads, past + seg, head_dim]
            kv = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
            cached = [r for r, u in enumerate(batch) if u.cached]
            width = past + max(len(batch[r].root.ids) for r in cached)  # a cached root runs alone, from column 0
            if len(cached) < rows or width < kv[0][0].shape[2]:
                # hold only the rows whose children wait, and their positions (not a long packed
                # row's beside them): one copy per layer
                pick = torch.tensor(cached, device=kv[0][0].device)
                kv = [(k[:, :, :width].index_select(0, pick), v[:, :, :width].index_select(0, pick)) for k, v in kv]
            for i, r in enumerate(cached):
                u = batch[r]
                state.kv[u.root] = CachedKV(kv, i, u.root.offset, past, len(u.root.ids))
        read = time.perf_counter()
        self.seconds["rows"] += read - start
        self._read_logprobs(batch, out.last_hidden_state, state)  # [rows, seg, hidden]
        self.seconds["head"] += time.perf_counter() - read

    @staticmethod
    def _blocks(batch: list[Unit], past: int) -> list[segment_attention.Block]:
        """Each row's attention blocks: its segments (the members, parents first), each
        seeing the row's cached positions and its ancestors in the row."""
        blocks = []
        for r, u in enumerate(batch):
            index = {n: i for i, n in enumerate(u.members)}
            segments = [(n.offset, fed(n), None if n is u.root else index[n.parent]) for n in u.members]
            blocks += segment_attention.row_blocks(r, u.root.offset, past, segments)
        return blocks

    @staticmethod
    def _pad_mask(batch: list[Unit], past: int, seg: int) -> torch.Tensor:
        """[rows, past + seg] 0/1: each row's cached positions, then its segment."""
        mask = torch.zeros((len(batch), past + seg), dtype=torch.long)
        for r, u in enumerate(batch):
            mask[r, :u.root.offset] = 1
            mask[r, past:past + u.length] = 1
        return mask

    def _tree_mask(self, batch: list[Unit], past: int, seg: int) -> torch.Tensor:
        """[rows, 1, seg, past + seg] attention mask of packed rows, in the form the model's
        attention takes: bool (True = attend) or additive (0 or the dtype's minimum)."""
        allowed = torch.zeros((len(batch), 1, seg, past + seg), dtype=torch.bool)
        for r, u in enumerate(batch):
            allowed[r, 0, :u.length, :u.root.offset] = True
            allowed[r, 0, :u.length, past:past + u.length] = u.tree_mask()
            pad = torch.arange(u.length, seg)
            allowed[r, 0, pad, past + pad] = True  # padding attends to itself (no empty row)
        if self.pack == "bool":
            return allowed
        dtype = self.body.get_input_embeddings().weight.dtype
        return torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)

    def _gather_cache(self, parents_of: list[Node], past: int, state: RunState) -> KV:
        """Each row's parent cache, right-padded to ``past``: per layer [rows, kv_heads, past,
        head_dim], read by index from the batches that cached the parents (one gather per layer
        and source batch; positions past a parent's end repeat position 0 and are masked)."""
        refs = [state.kv[n.parent] for n in parents_of]
        rows = len(refs)
        if all(ref is refs[0] for ref in refs):  # one shared context: expand without copying
            ref = refs[0]
            if ref.offset == 0:  # its positions are contiguous: a view
                at = slice(ref.past, ref.past + past)
                return [(k[ref.row, :, at].expand(rows, -1, -1, -1), v[ref.row, :, at].expand(rows, -1, -1, -1))
                        for k, v in ref.layers]
            src, pos = torch.tensor([[ref.row]]), torch.from_numpy(ref.positions(past))[None]  # [1, 1], [1, past]
            return [(_take(k, src, pos).expand(rows, -1, -1, -1), _take(v, src, pos).expand(rows, -1, -1, -1))
                    for k, v in ref.layers]
        groups: dict[int, list[int]] = {}  # source batch -> the rows it serves
        for r, ref in enumerate(refs):
            groups.setdefault(id(ref.layers), []).append(r)
        plans = []
        for members in groups.values():
            src = torch.tensor([refs[r].row for r in members])[:, None]  # [g, 1]
            pos = torch.from_numpy(np.stack([refs[r].positions(past) for r in members]))  # [g, past]
            plans.append((refs[members[0]].layers, members, src, pos))

        def gather(layer: int, which: int) -> torch.Tensor:
            parts = [(members, _take(layers[layer][which], src, pos))
                     for layers, members, src, pos in plans]  # [g, kv_heads, past, head_dim]
            if len(parts) == 1:
                return parts[0][1]
            out = parts[0][1].new_empty((rows,) + parts[0][1].shape[1:])
            for members, part in parts:
                out[torch.tensor(members, device=out.device)] = part
            return out

        return [(gather(layer, 0), gather(layer, 1)) for layer in range(len(refs[0].layers))]

    # ------------------------------------------------------------ log-probs
    def _read_logprobs(self, batch: list[Unit], hidden: torch.Tensor, state: RunState) -> None:
        """Log-probs at the needed positions: each member's own tokens, and the first token
        of each child at its parent's last position."""
        rows, cols, targets, sinks = [], [], [], []  # sinks: (node, first entry, entries)
        for r, u in enumerate(batch):
            for n in u.members:
                at = u.starts[n]
                own = n.own_positions()  # entry j of the node is predicted at position j-1
                if own:
                    rows.append(np.full(len(own), r)), cols.append(np.arange(at + own.start - 1, at + own.stop - 1))
                    targets.append(n.ids[own.start:own.stop]), sinks.append((n, own.start, len(own)))
                firsts = [c for c in n.children if c.needs_first]
                if firsts:
                    rows.append(np.full(len(firsts), r)), cols.append(np.full(len(firsts), at + len(n.ids) - 1))
                    targets.append([c.ids[0] for c in firsts]), sinks.extend((c, 0, 1) for c in firsts)
        if not rows:
            return
        # a position read for several tokens (children's first tokens, answer options) once
        where, which = np.unique(np.concatenate(rows) * hidden.shape[1] + np.concatenate(cols), return_inverse=True)
        selected = hidden.reshape(-1, hidden.shape[-1])[torch.from_numpy(where).to(hidden.device)]  # [positions, hidden]
        flat_targets = np.fromiter((t for ts in targets for t in ts), dtype=np.int64)
        values, raw = self._logprob_of(selected.to(self.output_device), which.reshape(-1), flat_targets)  # [needed]
        k = 0
        for node, j, count in sinks:
            lp, logits = state.values(node)
            lp[j:j + count] = values[k:k + count]
            logits[j:j + count] = raw[k:k + count]
            k += count

    def _logprob_of(self, hidden: torch.Tensor, which: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log softmax(head(h))[t], head(h)[t]) for each entry, h = hidden[which[entry]]
        ([positions, hidden]) and t = targets[entry]: float32 arithmetic, float64 results,
        the head run once per position, in chunks of positions."""
        vocab = self.head.weight.shape[0]
        step = max(1, LOGIT_ELEMENTS.get(hidden.device.type, LOGIT_ELEMENTS_ELSEWHERE) // vocab)
        order = np.argsort(which, kind="stable")  # entries by position: a chunk's entries are contiguous
        bounds = np.searchsorted(which[order], np.arange(0, hidden.shape[0] + step, step))
        picked, values, raw = [], [], []
        for c, i in enumerate(range(0, hidden.shape[0], step)):
            entries = order[bounds[c]:bounds[c + 1]]
            logits = self.head(hidden[i:i + step]).float()  # [step, vocab]
            at = (torch.from_numpy(which[entries] - i).to(logits.device), torch.from_numpy(targets[entries]).to(logits.device))
            raw.append(logits[at])
            # one fused pass (logsumexp makes three over the vocabulary: twice the time)
            values.append(torch.log_softmax(logits, dim=-1)[at])
            picked.append(entries)
        entries = np.concatenate(picked)
        out_values, out_raw = np.empty(len(which)), np.empty(len(which))
        out_values[entries] = torch.cat(values).double().cpu().numpy()
        out_raw[entries] = torch.cat(raw).double().cpu().numpy()
        return out_values, out_raw
