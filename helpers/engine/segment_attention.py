"""SDPA for packed rows that computes only the query-key pairs the tree mask allows.

A packed row (a shared part, then the branches that continue it, each token seeing only its
own path) under a dense 4D mask costs SDPA every query-key pair of the row: a row of forty
short sentences after a start token spends almost all its attention on masked pairs, and a
long priming prefix twice its causal attention. Here each segment of a row (one plan node's
tokens) attends only to the keys it may see: the row's cached positions, its ancestors'
segments, and itself causally. Queries run in chunks of whole segments, each gathered
with the keys some of its queries see into a small dense block (a short sentence's chunk
sees itself and its ancestors, not the whole row); blocks of similar size
run as one SDPA call per group and layer, and the outputs are scattered back. A long segment
at least as long as the keys before it (its cached positions and ancestors: a priming prefix, or
a shared stem after the start token) runs as one causal block instead: SDPA's causal kernel
over those keys and its own, computing no masked pair and gathering its keys once.
PyTorch offers no CPU kernel that skips the masked blocks of an arbitrary mask
(FlexAttention needs torch.compile), hence this module.

The attention is registered with transformers under :data:`NAME`; the executor switches a
model to it for one forward call (:func:`switched`) and passes ``segments``.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

NAME = "helpers_segment_sdpa"


# Queries per block: small blocks see few keys beyond their own (a short sentence's
# siblings), larger ones run SDPA more efficiently; 32 was fastest on CPU.
QUERY_CHUNK = 32
# A segment at least this long (a priming prefix) runs in chunks of this many of its own queries:
# 32-query chunks would gather its earlier keys again for every chunk (25 gathers of 400 keys on
# average for an 800-token prefix, where 7 chunks of 128 gather 3,200 and waste 57,000 masked pairs).
LONG_SEGMENT = 128


def spans_window(first: int, last: int, window: int | None) -> bool:
    """Whether keys at positions ``first`` to ``last`` span a sliding ``window``: a causal block over
    them then runs as an explicit mask (:meth:`Block.windowed`)."""
    return window is not None and last - first >= window


@dataclass
class Block:
    """Queries at columns ``queries`` of row ``row``, keys at columns ``keys`` of its cached
    positions then its segment (``past + column``), and which query sees which key (``mask``,
    [queries, keys]). ``causal``: the block is one long segment after the keys of its cached
    positions and ancestors (a priming prefix, a shared stem), in order: query ``j`` sees every
    key before the segment and the segment's keys up to its own, and ``mask`` is None."""
    row: int
    queries: np.ndarray  # [q]
    keys: np.ndarray  # [k]
    mask: np.ndarray | None  # [q, k] bool
    causal: bool = False
    query_pos: np.ndarray | None = None  # [q] the queries' and keys' token positions (for sliding windows)
    key_pos: np.ndarray | None = None  # [k]

    def windowed(self, layout) -> "Block":
        """This block under ``layout``'s sliding window: a causal block whose keys span the window
        becomes an explicit mask (by position; its keys run in order), any other keeps its mask
        and :class:`_Group` applies the window."""
        if not self.causal or not spans_window(int(self.key_pos[0]), int(self.key_pos[-1]), layout.window):
            return self
        return Block(self.row, self.queries, self.keys, self.key_pos[None, :] <= self.query_pos[:, None], False,
                     self.query_pos, self.key_pos)

    def pairs(self) -> int:
        """Query-key pairs this block's attention computes (a causal block: one query slot per key)."""
        return len(self.keys) * (len(self.keys) + 1) // 2 if self.causal else len(self.queries) * len(self.keys)


def row_blocks(row: int, cached: int, past: int, segments: list[tuple[int, int, int | None]],
               chunk: int = QUERY_CHUNK, long: int = LONG_SEGMENT) -> list[Block]:
    """The blocks of one row: ``cached`` positions of its parent's cache (columns
    ``0..cached-1``), then ``segments`` one after another, each (first absolute position,
    token count, index of the segment it continues or None). A token sees the cached
    positions, every token of its segment's ancestors, and its own segment's tokens up to
    itself. Queries run in chunks of whole segments up to ``chunk`` columns (a longer segment cut
    every ``chunk`` columns), each against the keys some of its queries see; a segment of at
    least ``long`` tokens in chunks of ``long`` of its own, or as one causal block where the keys
    before it are no more than its own tokens."""
    on_path, which, pos, chunks = _row_layout(segments, chunk, long, cached)
    blocks = []
    for a, b, cols, causal in chunks:
        keys = np.concatenate([np.arange(cached), past + cols])
        key_pos = np.concatenate([np.arange(cached), pos[cols]])  # cached columns hold positions 0, 1, ...
        if causal:
            blocks.append(Block(row, np.arange(a, b), keys, None, True, pos[a:b], key_pos))
            continue
        own = which[a:b]
        mask = on_path[own][:, which[cols]] & (pos[cols][None, :] <= pos[a:b, None])
        mask = np.concatenate([np.ones((b - a, cached), dtype=bool), mask], axis=1)
        blocks.append(Block(row, np.arange(a, b), keys, mask, False, pos[a:b], key_pos))
    return blocks


def block_sizes(cached: int, segments: list[tuple[int, int, int | None]], chunk: int = QUERY_CHUNK,
                long: int = LONG_SEGMENT, window: int | None = None) -> list[tuple[int, int]]:
    """(keys, query-key pairs) of each block :func:`row_blocks` makes of the same row, without
    its masks (what the cost model counts); with a sliding ``window``, a causal block whose keys
    span it computes every query against every key (:meth:`Block.windowed`)."""
    sizes = []
    _, _, pos, chunks = _row_layout(segments, chunk, long, cached)
    for a, b, cols, causal in chunks:
        keys = cached + len(cols)
        first = 0 if cached else int(pos[cols[0]])  # cached columns hold positions 0, 1, ...
        explicit = causal and spans_window(first, int(pos[cols[-1]]), window)
        sizes.append((keys, keys * (keys + 1) // 2 if causal and not explicit else (b - a) * keys))
    return sizes


def _row_layout(segments: list[tuple[int, int, int | None]], chunk: int, long: int, cached: int):
    """A row's ancestry matrix ([i, j]: segment j is i or an ancestor of i), each column's
    segment and absolute position, and its query chunks (a, b, the columns of the keys some query
    of columns a..b-1 sees, whether the chunk is a causal block)."""
    counts = np.array([n for _, n, _ in segments], dtype=np.int64)
    on_path = np.zeros((len(segments), len(segments)), dtype=bool)
    for i, (_, _, parent) in enumerate(segments):
        if parent is not None:
            on_path[i] = on_path[parent]
        on_path[i, i] = True
    which = np.repeat(np.arange(len(segments)), counts)  # segment of each column
    pos = np.concatenate([first + np.arange(n) for first, n, _ in segments])  # absolute positions
    # a long segment runs causally where its dummy query slots (one per key before it) are no
    # more than its own queries
    before = on_path.astype(np.int64) @ counts - counts + cached  # keys before each segment's own
    causal = {i for i, n in enumerate(counts.tolist()) if n >= long and before[i] <= n}
    chunks = [(a, b, np.flatnonzero(on_path[np.unique(which[a:b])].any(axis=0)[which[:b]]), which[a] in causal)
              for a, b in _chunks(counts, chunk, long, causal)]
    return on_path, which, pos, chunks


def _chunks(counts: np.ndarray, chunk: int, long: int, causal: set = frozenset()) -> list[tuple[int, int]]:
    """Column ranges [a, b) of a row's query chunks: whole short segments, consecutive, up to
    ``chunk`` columns a chunk (a chunk cut inside a segment would see the keys of the segments on
    both sides: two sentences' keys for each query of a 32-token chunk of plain LP); a segment
    longer than ``chunk`` cut every ``chunk`` columns from its start (its last piece open to the
    segments after it), one of at least ``long`` tokens every ``long`` columns (one range for a
    segment in ``causal``)."""
    out, start = [], 0
    open_from = None  # where the chunk being filled with whole segments begins
    for i, n in enumerate(counts.tolist()):
        end = start + n
        if open_from is not None and (end - open_from > chunk or n >= long):  # it does not join the open chunk
            out.append((open_from, start))
            open_from = None
        if n >= long:
            out += [(start, end)] if i in causal else [(a, min(a + long, end)) for a in range(start, end, long)]
        elif n > chunk:
            whole = start + n // chunk * chunk
            out += [(a, a + chunk) for a in range(start, whole, chunk)]
            open_from = whole if whole < end else None
        elif open_from is None:
            open_from = start
        start = end
    if open_from is not None and open_from < start:
        out.append((open_from, start))
    return [(a, b) for a, b in out if b > a]


class _Group:
    """Blocks padded to one size: flat query and key indices and the mask, on one device
    (causal blocks: no mask, SDPA's causal kernel)."""

    def __init__(self, blocks: list[Block], seg: int, width: int, layout=None):
        self.causal = blocks[0].causal
        self.windowed = None  # the mask of sliding layers, where the window hides a pair (else the mask)
        if self.causal:
            self._causal(blocks, seg, width)
            return
        nq = max(len(b.queries) for b in blocks)
        nk = max(len(b.keys) for b in blocks)
        q = np.full((len(blocks), nq), -1, dtype=np.int64)  # -1: padding (output goes to a spare row)
        k = np.zeros((len(blocks), nk), dtype=np.int64)  # padding keys read position 0, masked
        mask = np.zeros((len(blocks), nq, nk), dtype=bool)
        mask[:, :, 0] = True  # padding queries attend to one key (no empty row)
        for v, b in enumerate(blocks):
            q[v, :len(b.queries)] = b.row * seg + b.queries
            k[v, :len(b.keys)] = b.row * width + b.keys
            mask[v, :len(b.queries)] = False
            mask[v, :len(b.queries), :len(b.keys)] = b.mask
        if layout is not None and layout.slides:
            query_pos = np.zeros((len(blocks), nq), dtype=np.int64)
            key_pos = np.zeros((len(blocks), nk), dtype=np.int64)
            for v, b in enumerate(blocks):
                query_pos[v, :len(b.queries)], key_pos[v, :len(b.keys)] = b.query_pos, b.key_pos
            windowed = mask & layout.near(query_pos, key_pos)  # padding sits at position 0: it keeps its key
            if (windowed != mask).any():
                self.windowed = torch.from_numpy(windowed[:, None])
        self.q, self.k = torch.from_numpy(q), torch.from_numpy(k)
        self.mask = torch.from_numpy(mask[:, None])  # [blocks, 1, nq, nk]
        self.read, self._on = self.q, {}

    def _causal(self, blocks: list[Block], seg: int, width: int) -> None:
        """Causal blocks padded at the end to the longest, one query slot per key (the causal
        kernel aligns queries and keys from the first): a block's queries fill the slots of its
        own keys; the slots of the keys before them read its first query and write to the spare
        row, as padding does; padding keys come after every real query (the kernel hides them)."""
        n = max(len(b.keys) for b in blocks)
        q = np.full((len(blocks), n), -1, dtype=np.int64)
        k = np.zeros((len(blocks), n), dtype=np.int64)
        read = np.zeros((len(blocks), n), dtype=np.int64)
        for v, b in enumerate(blocks):
            lead = len(b.keys) - len(b.queries)
            q[v, lead:len(b.keys)] = b.row * seg + b.queries
            read[v] = b.row * seg + b.queries[0]
            read[v, lead:len(b.keys)] = b.row * seg + b.queries
            k[v] = b.row * width + b.keys[-1]
            k[v, :len(b.keys)] = b.row * width + b.keys
        self.q, self.k, self.mask, self._on = torch.from_numpy(q), torch.from_numpy(k), None, {}
        self.read = torch.from_numpy(read)

    def on(self, device, sliding: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Query indices read and written, key indices and the mask (of a sliding layer: the windowed
        one), on ``device``."""
        key = (device, sliding and self.windowed is not None)
        if key not in self._on:
            mask = self.windowed if key[1] else self.mask
            self._on[key] = (self.read.to(device), self.q.to(device), self.k.to(device),
                             None if mask is None else mask.to(device))
        return self._on[key]


def _size_class(n: int) -> int:
    return max(0, int(n - 1).bit_length())


class Segments:
    """The attention plan of one forward call over ``rows`` x ``seg`` new tokens after
    ``past`` cached positions: its blocks grouped by query and key count (powers of two, so that
    padding stays below 2x)."""

    def __init__(self, blocks: list[Block], rows: int, seg: int, past: int, layout=None):
        self.rows, self.seg, self.width = rows, seg, past + seg
        if layout is not None and layout.slides:  # (an :class:`.attention_layout.AttentionLayout`)
            blocks = [b.windowed(layout) for b in blocks]
        groups: dict[tuple, list[Block]] = {}
        for b in blocks:
            groups.setdefault((b.causal, _size_class(len(b.queries)), _size_class(len(b.keys))), []).append(b)
        self.groups = [_Group(g, seg, self.width, layout) for _, g in sorted(groups.items())]

    def pairs(self) -> int:
        """Query-key pairs computed (padding included)."""
        return sum(int(g.k.shape[0] * g.k.shape[1] * (g.k.shape[1] + 1) // 2) if g.causal else
                   int(g.mask.shape[0] * g.mask.shape[2] * g.mask.shape[3]) for g in self.groups)


def segment_sdpa(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 attention_mask: torch.Tensor | None, segments: Segments | None = None,
                 **kwargs) -> tuple[torch.Tensor, None]:
    """SDPA (query [batch, heads, q, dim], keys and values [batch, kv_heads, k, dim]; output
    [batch, q, heads, dim]) over the blocks of ``segments``; without them SDPA itself."""
    if segments is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    kwargs.pop("is_causal", None)
    rows, heads, seg, _ = query.shape
    flat_q = query.transpose(1, 2).reshape(rows * seg, heads, -1)  # [rows * seg, heads, dim]
    flat_k = key.transpose(1, 2).reshape(rows * key.shape[2], key.shape[1], -1)
    flat_v = value.transpose(1, 2).reshape(rows * value.shape[2], value.shape[1], -1)
    out = query.new_zeros((rows * seg + 1, heads, value.shape[3]))  # the last row takes padding
    sliding = kwargs.get("sliding_window") is not None  # the layer says it slides (its window: the layout's)
    for group in segments.groups:
        read, q_idx, k_idx, mask = group.on(query.device, sliding)
        got, _ = sdpa_attention_forward(module, flat_q[read].transpose(1, 2), flat_k[k_idx].transpose(1, 2),
                                        flat_v[k_idx].transpose(1, 2), mask, is_causal=group.causal,
                                        **kwargs)  # [blocks, nq, heads, dim]
        out[q_idx.reshape(-1)] = got.reshape(-1, heads, got.shape[-1])
    return out[:-1].view(rows, seg, heads, -1), None


def register() -> None:
    """Make :data:`NAME` known to transformers (attention, and SDPA's mask for it)."""
    AttentionInterface.register(NAME, segment_sdpa)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


@contextmanager
def switched(config, name: str = NAME):
    """The model of ``config`` runs the attention registered as ``name`` inside the block
    (:func:`segment_sdpa` by default)."""
    before = config._attn_implementation
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = before


register()
