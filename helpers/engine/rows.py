"""What a batch row of the executor is made of, and what one run holds.

A :class:`Unit` is one row: a plan node and, packed after it, descendants of it (parents
before children), run after the cached keys and values of the node's parent. :class:`CachedKV`
says where a node's keys and values lie in the cache of the batch that computed them, and
:class:`RunState` holds a run's log-probs, the caches whose children wait, and each
request's result.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from .plan import Node

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

def batch_key(batch: list[Unit]) -> tuple:
    """Which batch of a run this is: its rows' members (plan nodes)."""
    return tuple(tuple(id(n) for n in u.members) for u in batch)


class RunState:
    """What one run reads and holds, keyed by plan node: log-probs and raw logits of each
    node's tokens (NaN where not needed), with ``mass`` ([vocab] bool) the log-mass of those
    tokens at each position read too, with ``greedy`` the greedy token's id there, the caches
    of nodes whose children wait, and each request's result."""

    def __init__(self, n_requests: int, on_result: Callable[[], object] | None = None,
                 wanted: set[int] | None = None, mass: torch.Tensor | None = None, greedy: bool = False):
        self.wanted = wanted  # the requests whose results count (None: all)
        self.mass = mass  # the token class whose probability mass is read (None: none)
        self.greedy = greedy  # whether the greedy token is read where each token is predicted
        self.arrays: dict[Node, np.ndarray] = {}
        self.kv: dict[Node, CachedKV] = {}
        self.results: list[tuple[np.ndarray, ...] | None] = [None] * n_requests
        self.on_result = on_result

    def values(self, node: Node) -> np.ndarray:
        """[kinds, len(ids)]: (log-probs, raw logits[, log-masses][, greedy ids]) of ``node``'s
        tokens, one row each: entry j is log p(ids[j] | before) (and the log-mass of ``mass``
        tokens, and the greedy token, where ids[j] is predicted)."""
        if node not in self.arrays:
            self.arrays[node] = np.full((2 + (self.mass is not None) + self.greedy, len(node.ids)), np.nan)
        return self.arrays[node]

    def finish(self, node: Node) -> None:
        """Store the result of the request ending at ``node`` (if any): its whole path."""
        if node.request is None or (self.wanted is not None and node.request not in self.wanted):
            return
        if self.results[node.request] is not None:  # a shared part repeated in several rows ends here
            return
        self.results[node.request] = tuple(np.concatenate([self.values(n) for n in node.path()], axis=1))
        if self.on_result is not None:
            self.on_result()
