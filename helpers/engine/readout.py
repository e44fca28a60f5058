"""Reading log-probs after a forward pass: each row member's own tokens, and each child's
first token at its parent's last position, a position read for several tokens only once,
through the shared vocabulary head (:func:`helpers.engine.head.logprobs_at`); in a run that
reads a token class's mass (``RunState.mass``: word-initial tokens), that mass at the same
positions from the same logits, and in a run that asks (``RunState.greedy``) the greedy token there."""
from __future__ import annotations

import numpy as np
import torch

from .head import logprobs_at
from .rows import RunState, Unit


class LogprobReading:
    """The reading half of :class:`helpers.engine.executor.Executor` (its projection and
    output device are the executor's attributes)."""

    def _read_logprobs(self, batch: list[Unit], hidden: torch.Tensor, state: RunState) -> None:
        """Log-probs at the needed positions: each member's own tokens, and the first token
        of each child at its parent's last position."""
        width = hidden.shape[1]
        starts, counts, targets, sinks = [], [], [], []  # per run of entries (sinks: its node and first entry)
        first_at, first_targets, firsts = [], [], []  # per child read at its parent's last position
        for r, u in enumerate(batch):
            for n in u.members:
                at = r * width + u.starts[n]  # the member's first position in the flattened batch
                own = n.own_positions()  # entry j of the node is predicted at position j-1
                if own:
                    starts.append(at + own.start - 1), counts.append(len(own))
                    targets.extend(n.ids[own.start:own.stop]), sinks.append((n, own.start))
                for c in n.children:
                    if c.needs_first:
                        first_at.append(at + len(n.ids) - 1), first_targets.append(c.ids[0]), firsts.append(c)
        if not sinks and not firsts:
            return
        counts = np.array(counts, dtype=np.int64)
        begins = np.cumsum(counts) - counts  # each run's first entry
        own_at = np.repeat(np.array(starts, dtype=np.int64) - begins, counts) + np.arange(int(counts.sum()))
        # a position read for several tokens (children's first tokens, answer options) once
        where, which = np.unique(np.concatenate([own_at, np.array(first_at, dtype=np.int64)]), return_inverse=True)
        selected = hidden.reshape(-1, hidden.shape[-1]).index_select(0, torch.from_numpy(where).to(hidden.device))
        read = logprobs_at(self.project, self.project.vocab, selected.to(self.output_device), which.reshape(-1),
                           np.array(targets + first_targets, dtype=np.int64), state.mass, state.greedy)
        got = np.stack(read)  # [kinds, entries]: log-probs, raw logits (log-masses, greedy ids)
        for (node, j), k, count in zip(sinks, begins.tolist(), counts.tolist()):
            state.values(node)[:, j:j + count] = got[:, k:k + count]
        k = len(targets)
        for child in firsts:
            state.values(child)[:, 0] = got[:, k]
            k += 1
