"""The plan of a scoring run: a tree of token segments whose shared parts run once.

A leaf is one request's last segment; its ancestors are token runs it shares with other
requests (a context, the common prefix of two sentences). The engine runs each level of
the tree as batches, each node after its parent's cached keys and values.
"""
from __future__ import annotations

from itertools import groupby
from typing import Sequence

import numpy as np


class Node:
    """A segment of token ids at absolute position ``offset``."""

    __slots__ = ("ids", "offset", "parent", "children", "request", "need_from", "lp", "raw", "kv")

    def __init__(self, ids: tuple[int, ...], offset: int, request: int | None = None, need_from: int = 1):
        self.ids, self.offset, self.request = tuple(ids), offset, request
        self.parent: Node | None = None
        self.children: list[Node] = []
        self.need_from = need_from  # first absolute token index whose log-prob a descendant needs
        self.lp = np.full(len(self.ids), np.nan)  # log p(ids[j] | everything before)
        self.raw = np.full(len(self.ids), np.nan)  # the raw logit of ids[j] there
        self.kv = None  # per-layer (keys, values) of the whole path, for internal nodes

    @property
    def end(self) -> int:
        return self.offset + len(self.ids)

    def adopt(self, children: list["Node"]) -> "Node":
        self.children = children
        for c in children:
            c.parent = self
        self.need_from = min(c.need_from for c in children)
        return self

    def own_positions(self) -> range:
        """Entries j >= 1 whose log-prob is needed (predicted inside this segment)."""
        return range(max(1, self.need_from - self.offset), len(self.ids))

    @property
    def needs_first(self) -> bool:
        return self.parent is not None and self.need_from <= self.offset

    @property
    def needs_forward(self) -> bool:
        return bool(self.children) or len(self.own_positions()) > 0

    def finish(self, results: list, bar) -> None:
        if self.request is None:
            return
        parts, raws, node = [], [], self
        while node is not None:
            parts.append(node.lp)
            raws.append(node.raw)
            node = node.parent
        results[self.request] = (np.concatenate(parts[::-1]), np.concatenate(raws[::-1]))
        bar.update(1)



def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _runs(items: list[Node], min_shared: int) -> list[list[Node]]:
    """Consecutive items (sorted by ids) sharing a long enough token prefix.

    A run stops when adding the next item would shrink the shared prefix below
    ``min_shared`` or below half of what the run shares so far, so that the two
    sentences of a pair are not merged with a crowd that shares only "The".
    """
    items = sorted(items, key=lambda n: n.ids)
    runs: list[list[Node]] = []
    run: list[Node] = []
    shared = 0
    for item in items:
        if run:
            common = min(shared, _lcp(run[-1].ids, item.ids)) if len(run) > 1 else _lcp(run[-1].ids, item.ids)
            if common >= min_shared and (len(run) == 1 or 2 * common >= shared):
                run.append(item)
                shared = common
                continue
            runs.append(run)
        run, shared = [item], 0
    if run:
        runs.append(run)
    return runs


def _share_prefixes(items: list[Node], min_shared: int) -> list[Node]:
    """Put a parent node over each run of items that share a token prefix."""
    out = []
    for run in _runs(items, min_shared):
        k = min(_lcp(run[0].ids, item.ids) for item in run)
        k = min(k, min(len(item.ids) for item in run) - 1)
        if len(run) < 2 or k < min_shared:
            out.extend(run)
            continue
        parent = Node(run[0].ids[:k], run[0].offset)
        trimmed = []
        for item in run:
            child = Node(item.ids[k:], item.offset + k, item.request, item.need_from)
            if item.children:
                child.adopt(item.children)
            trimmed.append(child)
        out.append(parent.adopt(trimmed))
    return out


def build_tree(encoded: Sequence, need_from: Sequence[int], share: str = "context", min_shared: int = 3) -> list[Node]:
    """Root nodes of the plan for ``encoded`` sequences (objects with ``ids`` and ``first``).

    share="none": every request runs alone. "context": requests whose tokens before the
    target are identical share them. "prefix": also share the longest common token
    prefix among sentences (and among contexts).
    """
    leaves = [Node(e.ids, 0, i, nf) for i, (e, nf) in enumerate(zip(encoded, need_from))]
    if share == "none":
        return leaves
    top: list[Node] = []
    keyed = sorted(range(len(encoded)), key=lambda i: encoded[i].ids[:encoded[i].first])
    for prefix, members in groupby(keyed, key=lambda i: encoded[i].ids[:encoded[i].first]):
        members = list(members)
        usable = [i for i in members if encoded[i].first < len(encoded[i].ids)]
        if len(usable) < 2 or len(prefix) < min_shared:
            top.extend(leaves[i] for i in members)
            continue
        top.extend(leaves[i] for i in members if encoded[i].first >= len(encoded[i].ids))
        children = [Node(encoded[i].ids[len(prefix):], len(prefix), i, need_from[i]) for i in usable]
        if share == "prefix":
            children = _share_prefixes(children, min_shared)
        top.append(Node(prefix, 0).adopt(children))
    if share == "prefix":
        top = _share_prefixes(top, min_shared)
    return top
