"""The blocks a packed row's segment attention runs (:mod:`.segment_attention`): which queries of a
row run together, against which keys, under which mask.

A row holds its parent's cached positions, then segments (plan nodes' tokens) one after another,
each token seeing the cached positions, its segment's ancestors and its own segment up to itself.
Queries run in chunks of whole segments, each against the keys some of its queries see (a short
sentence's chunk sees itself and its ancestors, not the whole row); a long segment at least as long
as the keys before it (a priming prefix, a shared stem after the start token) runs as one causal
block. :func:`block_sizes` counts the same blocks without their masks, for the cost model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
        and :mod:`.segment_attention` applies the window."""
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
