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
        read = logprobs_at(self.project, self.project.vocab, selected.to(self.output_device),
                           which.reshape(-1), flat_targets, state.mass, state.greedy)  # each [needed]
        k = 0
        for node, j, count in sinks:
            for array, got in zip(state.values(node), read):  # log-probs, raw logits (log-masses, greedy ids)
                array[j:j + count] = got[k:k + count]
            k += count
