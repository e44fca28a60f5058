"""The executor's order of work: which rows run a plan's nodes (packed subtrees, or a node
alone whose children run from its cache), sibling chunks whose caches fit the memory budget,
length-sorted batches of one block of requests within the token budget, and, for a partial
run (a shard), the batches its requests need."""
from __future__ import annotations

from typing import Iterable, Sequence

from .plan import Node, walk
from .rows import Unit, batch_key, fed


# A batch of rows of unequal lengths ends before its padded positions would pass this share of its
# positions and cost more than one more forward call (the executor's ``call_tokens``: a call's cost
# in tokens' time, from the model's shape and its device class's costs, :mod:`.cost_model`):
# padding runs every layer as a real token does (a long packed row beside a short one padded a
# batch 1.46x and 4x on the 262k shape before).
PADDING = 0.1


class Scheduling:
    """The scheduling half of :class:`helpers.engine.executor.Executor` (its budgets and
    packing settings are the executor's attributes)."""

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
            stem = fed(node)
            rows, row, length, waste = [], [node], stem, 0  # the row being filled, its length and waste
            for child in forward_children:
                subtree = [n for n in walk([child]) if n.needs_forward]
                alone = Unit(node, [node] + subtree)  # the subtree right after the stem
                added, added_waste = alone.length - stem, alone.waste()
                # placed later in the row, each of its tokens sees the row's other branches before it
                grown = waste + added_waste + (length - stem) * added
                if self._fits(length + added, grown):
                    row += subtree
                    length, waste = length + added, grown
                elif len(row) > 1 and self._fits(alone.length, added_waste):
                    rows.append(Unit(node, row))
                    row, length, waste = alone.members, alone.length, added_waste  # a new row from it
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

    def _fits(self, length: int, waste: int) -> bool:
        """Whether a packed row of ``length`` tokens wasting ``waste`` query-key pairs
        (:meth:`.rows.Unit.waste`) fits the token budget and ``pack_waste``."""
        return length <= self.token_budget and waste <= self.pack_waste * length

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

    def _padded(self, padding: int, positions: int) -> bool:
        """Whether a batch of ``positions`` with ``padding`` of them padded pads too much: more
        than :data:`PADDING` of them, costing more than another forward call."""
        return padding > self.call_tokens and padding > PADDING * positions

    @staticmethod
    def _apart(first: Unit, unit: Unit) -> bool:
        """Whether ``unit`` must not share ``first``'s batch when rows run unpadded: a plain row
        only beside plain rows of its length and cached width (nothing padded), a packed row alone
        (its segment blocks would be padded to another row's), so that no row's numbers depend on
        the rows that happened to share its batch."""
        if first.packed or unit.packed:
            return True
        return (unit.length, unit.root.offset) != (first.length, first.root.offset)

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
        return {batch_key(batches[i]) for i in needed}

    def _batches(self, units: list[Unit]) -> Iterable[list[Unit]]:
        """Length-sorted batches of one block each, within the token budget (segment tokens,
        and cached plus segment tokens up to four times that) and the batch size; with
        ``unpadded``, rows that are no packed row share a batch only with rows of their own
        length and cached width (no padding), and a packed row runs alone."""
        apart = (lambda u: u.packed) if self.unpadded else (lambda u: False)
        units = sorted(units, key=lambda u: (self._block(u), apart(u), u.length, u.root.offset))
        batch: list[Unit] = []
        seg_max = past_max = real = 0
        for unit in units:
            s, p = max(seg_max, unit.length), max(past_max, unit.root.offset)
            rows = len(batch) + 1
            too_big = batch and (rows * s > self.token_budget or rows * (s + p) > 4 * self.token_budget
                                 or (self.batch_size and rows > self.batch_size)
                                 or self._block(unit) != self._block(batch[0])
                                 or (self.unpadded and self._apart(batch[0], unit))
                                 or self._padded(rows * s - real - unit.length, rows * s))
            if too_big:
                yield batch
                batch, s, p, real = [], unit.length, unit.root.offset, 0
            batch.append(unit)
            seg_max, past_max, real = s, p, real + unit.length
        if batch:
            yield batch
