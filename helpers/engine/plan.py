"""The plan of a scoring run: a tree of token segments whose shared parts run once.

A leaf is one request's last segment; its ancestors are token runs it shares with other
requests (a context, the common prefix of two sentences). The executor runs each level of
the tree as batches, each node after its parent's cached keys and values.

The plan is pure: built from token ids alone, it holds no model state, no results and no
progress bar, so the same requests always give the same tree.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from itertools import groupby
from typing import Iterator, Sequence

from .scorer_base import checked_share


class Node:
    """A segment of token ids at absolute position ``offset`` in its sequences.

    ``request`` is the index of the request that ends here (leaves), ``need_from`` the
    first absolute token index whose log-prob this node or a descendant needs, ``lead`` and
    ``last`` the smallest and largest request index in its subtree (where in the run's order
    it belongs).
    """

    __slots__ = ("ids", "offset", "parent", "children", "request", "need_from", "lead", "last")

    def __init__(self, ids: Sequence[int], offset: int, request: int | None = None, need_from: int = 1):
        self.ids, self.offset, self.request = tuple(ids), offset, request
        self.parent: Node | None = None
        self.children: list[Node] = []
        self.need_from = need_from
        self.lead = self.last = request if request is not None else 0

    def __repr__(self) -> str:
        return (f"Node(offset={self.offset}, n_ids={len(self.ids)}, request={self.request}, "
                f"need_from={self.need_from}, children={len(self.children)})")

    @property
    def end(self) -> int:
        return self.offset + len(self.ids)

    def adopt(self, children: list["Node"]) -> "Node":
        self.children = children
        for c in children:
            c.parent = self
        self.need_from = min(c.need_from for c in children)
        own = [] if self.request is None else [self.request]
        self.lead = min(own + [c.lead for c in children])
        self.last = max(own + [c.last for c in children])
        return self

    def own_positions(self) -> range:
        """Entries j >= 1 whose log-prob is needed (predicted inside this segment)."""
        return range(max(1, self.need_from - self.offset), len(self.ids))

    @property
    def needs_first(self) -> bool:
        """Whether entry 0's log-prob is needed (read at the parent's last position)."""
        return self.parent is not None and self.need_from <= self.offset

    @property
    def needs_forward(self) -> bool:
        return bool(self.children) or len(self.own_positions()) > 0

    def path(self) -> list["Node"]:
        """The nodes from the root down to this one."""
        nodes, node = [], self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]


def walk(roots: Sequence[Node]) -> Iterator[Node]:
    """Every node of the plan, parents before children."""
    for node in roots:
        yield node
        yield from walk(node.children)


def outline(roots: Sequence[Node]) -> tuple:
    """The plan as nested tuples (ids, offset, request, need_from, children): equal plans
    give equal outlines."""
    return tuple((n.ids, n.offset, n.request, n.need_from, outline(n.children)) for n in roots)


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _streaks(items: list[Node], min_shared: int) -> list[list[Node]]:
    """Consecutive items (sorted by ids) sharing a long enough token prefix.

    A streak stops when adding the next item would shrink the shared prefix below
    ``min_shared`` or below half of what the streak shares so far, so that the two
    sentences of a pair are not merged with a crowd that shares only "The".
    """
    items = sorted(items, key=lambda n: n.ids)
    streaks: list[list[Node]] = []
    streak: list[Node] = []
    shared = 0
    for item in items:
        if streak:
            common = min(shared, _lcp(streak[-1].ids, item.ids)) if len(streak) > 1 else _lcp(streak[-1].ids, item.ids)
            if common >= min_shared and (len(streak) == 1 or 2 * common >= shared):
                streak.append(item)
                shared = common
                continue
            streaks.append(streak)
        streak, shared = [item], 0
    if streak:
        streaks.append(streak)
    return streaks


# A shared prefix shorter than this share of its members' length saves too little to pay for
# the extra level (a forward call, and a copy of every member's cache): e.g. the start token
# and "The" shared by 800-token priming prefixes.
MIN_SHARED_FRACTION = 1 / 20


def _trim(item: Node, k: int) -> Node:
    """``item`` without its first ``k`` tokens (its children kept)."""
    child = Node(item.ids[k:], item.offset + k, item.request, item.need_from)
    if item.children:
        child.adopt(item.children)
    return child


def _share_prefixes(items: list[Node], min_shared: int) -> list[Node]:
    """Put a parent node over each streak of items that share a token prefix."""
    out = []
    for streak in _streaks(items, min_shared):
        k = min(_lcp(streak[0].ids, item.ids) for item in streak)
        shortest = min(len(item.ids) for item in streak)
        k = min(k, shortest - 1)
        if len(streak) < 2 or k < min_shared or k < MIN_SHARED_FRACTION * shortest:
            out.extend(streak)
            continue
        out.append(Node(streak[0].ids[:k], streak[0].offset).adopt([_trim(item, k) for item in streak]))
    return out


def _radix(items: list[Node]) -> list[Node]:
    """The compressed trie of ``items``: items with the same first token go under a parent
    holding their longest common prefix, recursively (every common prefix shared once)."""
    out: list[Node] = []
    for _, group in groupby(sorted(items, key=lambda n: n.ids), key=lambda n: n.ids[0]):
        group = list(group)
        single = [n for n in group if len(n.ids) == 1]  # nothing left to put under a parent
        group = [n for n in group if len(n.ids) > 1]
        out.extend(single)
        if len(group) < 2:
            out.extend(group)
            continue
        k = min(_lcp(group[0].ids, group[-1].ids), min(len(n.ids) for n in group) - 1)
        parent = Node(group[0].ids[:k], group[0].offset)
        out.append(parent.adopt(_radix([_trim(n, k) for n in group])))
    return out


@contextmanager
def _collector_paused():
    """Python's cycle collector off while nodes are made: its full passes scan every live
    object (a run's encoded requests too), so a 32,000-request plan took twice the time per
    request of an 8,000-request one (benchmarks/bench_plan.py). It runs again afterwards."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def build_tree(encoded: Sequence, need_from: Sequence[int], share: str = "context", min_shared: int = 3,
               block: int | None = None) -> list[Node]:
    """Root nodes of the plan for ``encoded`` sequences (objects with ``ids`` and ``first``).

    share="none": every request runs alone. "context": requests whose tokens before the
    target are identical share them. "prefix": also share the longest common token
    prefix among sentences (and among contexts). "tree": every common prefix of the run is
    shared (a compressed trie over all sequences: sentences of a paradigm share their
    openings, prompts everything up to the item); the executor packs it in rows. With
    ``block``, "tree" builds one trie per ``block`` consecutive requests, so that a range of
    the requests (a shard of a dataset run) needs the rows of its own blocks only; a prefix
    shared across blocks then runs once per block.
    """
    checked_share(share)
    if share == "auto":
        raise ValueError("a plan is built for one share mode ('none', 'context', 'prefix' or 'tree'); "
                         "'auto' is chosen per call by the causal scorer (helpers.engine.share_plan)")
    if len(need_from) != len(encoded):
        raise ValueError(f"{len(encoded)} sequences but {len(need_from)} need_from entries")
    if share == "tree" and block is not None and block < 1:
        raise ValueError(f"block must be a whole number >= 1 of requests, got {block}")
    with _collector_paused():
        return _build(encoded, need_from, share, min_shared, block)


def _build(encoded: Sequence, need_from: Sequence[int], share: str, min_shared: int, block: int | None) -> list[Node]:
    leaves = [Node(e.ids, 0, i, nf) for i, (e, nf) in enumerate(zip(encoded, need_from))]
    if share == "none":
        return leaves
    if share == "tree":
        step = block or max(1, len(leaves))
        return [root for start in range(0, len(leaves), step) for root in _radix(leaves[start:start + step])]
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
