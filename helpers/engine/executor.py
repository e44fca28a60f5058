"""Runs a plan (:mod:`.plan`) through the model and reads the log-probs it needs.

Nodes run level by level in batches formed by a token budget after sorting by length;
each node runs after its parent's cached keys and values, expanded across the batch.
Sibling nodes are taken in chunks whose caches fit a memory budget, each chunk's
descendants before the next chunk. Vocabulary logits are computed only at the needed
positions; log-softmax runs in float32 and results are float64. On CUDA out-of-memory a
batch is halved and the run goes on.
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from transformers import DynamicCache

from .plan import Node

# Logit rows computed at once: bounds memory at rows x vocabulary floats.
LOGIT_ELEMENTS = 1 << 25

KV = list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values)


class RunState:
    """What one run reads and holds, keyed by plan node: log-probs and raw logits of each
    node's tokens (NaN where not needed), the caches of nodes whose children wait, and each
    request's result."""

    def __init__(self, n_requests: int, on_result: Callable[[], object] | None = None):
        self.logprobs: dict[Node, np.ndarray] = {}
        self.logits: dict[Node, np.ndarray] = {}
        self.kv: dict[Node, KV] = {}
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
        if node.request is None:
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
                 kv_bytes_per_token: int, batch_size: int | None = None):
        self.body, self.head, self.device, self.pad_id = body, head, device, pad_id
        self.token_budget, self.batch_size = int(token_budget), batch_size
        self.kv_budget_bytes, self.kv_bytes_per_token = kv_budget_bytes, kv_bytes_per_token
        self.forward_calls = 0  # forward passes run so far (for tests and benchmarks)
        self.tokens_run = 0  # real (not padding) tokens fed to the model so far

    def run(self, roots: Sequence[Node], n_requests: int,
            on_result: Callable[[], object] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each request of the plan, (log-prob, raw logit) of every token given those
        before it; entries that were not needed are NaN. ``on_result`` is called as each
        request finishes (a progress bar's update)."""
        state = RunState(n_requests, on_result)
        self._run_nodes(list(roots), state)
        return state.results  # type: ignore[return-value]

    # ------------------------------------------------------------ order of work
    def _chunks(self, nodes: list[Node]) -> Iterable[list[Node]]:
        """Groups of sibling-level nodes whose cached keys/values fit the KV budget together."""
        limit = max(1, self.kv_budget_bytes // self.kv_bytes_per_token)
        chunk, size = [], 0
        for node in sorted(nodes, key=lambda n: (n.offset, len(n.ids))):
            cost = node.end if node.children else 0
            if chunk and size + cost > limit:
                yield chunk
                chunk, size = [], 0
            chunk.append(node)
            size += cost
        if chunk:
            yield chunk

    def _run_nodes(self, nodes: list[Node], state: RunState) -> None:
        """Run ``nodes`` (their parents' caches are ready) chunk by chunk, each chunk's
        descendants before the next chunk, so that the caches held stay within budget."""
        for group in self._chunks(nodes):
            runnable = [n for n in group if n.needs_forward]
            for batch in self._batches(runnable):
                self._forward_with_retry(batch, state)
            for node in group:
                state.finish(node)
            children = [child for node in group for child in node.children]
            if children:
                self._run_nodes(children, state)
            for node in group:
                state.kv.pop(node, None)

    def _batches(self, nodes: list[Node]) -> Iterable[list[Node]]:
        """Length-sorted batches within the token budget (segment tokens, and cached plus
        segment tokens up to four times that) and the batch size."""
        nodes = sorted(nodes, key=lambda n: (n.offset, len(n.ids)))
        batch: list[Node] = []
        seg_max = past_max = 0
        for node in nodes:
            s, p = max(seg_max, len(node.ids)), max(past_max, node.offset)
            rows = len(batch) + 1
            too_big = batch and (rows * s > self.token_budget or rows * (s + p) > 4 * self.token_budget
                                 or (self.batch_size and rows > self.batch_size))
            if too_big:
                yield batch
                batch, s, p = [], len(node.ids), node.offset
            batch.append(node)
            seg_max, past_max = s, p
        if batch:
            yield batch

    def _forward_with_retry(self, batch: list[Node], state: RunState) -> None:
        try:
            self._forward(batch, state)
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            torch.cuda.empty_cache()
            self.token_budget = max(64, self.token_budget // 2)
            half = len(batch) // 2
            self._forward_with_retry(batch[:half], state)
            self._forward_with_retry(batch[half:], state)

    # ------------------------------------------------------------ one forward pass
    @torch.inference_mode()
    def _forward(self, batch: list[Node], state: RunState) -> None:
        """Run the segments of ``batch`` (each after its parent's cached keys/values)."""
        rows = len(batch)
        seg = max(len(n.ids) for n in batch)
        past = max(n.offset for n in batch)
        input_ids = torch.full((rows, seg), self.pad_id, dtype=torch.long)  # [rows, seg]
        mask = torch.zeros((rows, past + seg), dtype=torch.long)  # [rows, past + seg]: cache, then segment
        positions = torch.zeros((rows, seg), dtype=torch.long)  # [rows, seg]
        for r, n in enumerate(batch):
            input_ids[r, :len(n.ids)] = torch.tensor(n.ids)
            mask[r, :n.offset] = 1
            mask[r, past:past + len(n.ids)] = 1
            positions[r, :len(n.ids)] = n.offset + torch.arange(len(n.ids))
            positions[r, len(n.ids):] = n.end - 1  # padding: any valid position (it is masked)
        cache = None
        if past:
            cache = DynamicCache(ddp_cache_data=self._gather_cache(batch, past, state))
        keep = any(n.children for n in batch)
        self.forward_calls += 1
        self.tokens_run += sum(len(n.ids) for n in batch)
        dev = self.device
        out = self.body(input_ids=input_ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev),
                        past_key_values=cache, use_cache=keep or cache is not None)
        if keep:
            # per layer [rows, kv_heads, past + seg, head_dim]
            kv = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
            for r, n in enumerate(batch):
                if n.children and n.offset == 0:  # a root: its own positions, a view (no copy)
                    state.kv[n] = [(k[r, :, :len(n.ids)], v[r, :, :len(n.ids)]) for k, v in kv]
                elif n.children:  # keep the row's real positions: [kv_heads, n.end, head_dim]
                    state.kv[n] = [(torch.cat([k[r, :, :n.offset], k[r, :, past:past + len(n.ids)]], dim=1),
                                    torch.cat([v[r, :, :n.offset], v[r, :, past:past + len(n.ids)]], dim=1))
                                   for k, v in kv]
        self._read_logprobs(batch, out.last_hidden_state, state)  # [rows, seg, hidden]

    def _gather_cache(self, batch: list[Node], past: int, state: RunState) -> KV:
        """Each row's parent cache, right-padded to ``past``: per layer [rows, kv_heads, past, head_dim]."""
        parents = [n.parent for n in batch]
        unique = list(dict.fromkeys(id(p) for p in parents))
        if len(unique) == 1:  # one shared context: expand without copying
            return [(k.unsqueeze(0).expand(len(batch), -1, -1, -1)[:, :, :past],
                     v.unsqueeze(0).expand(len(batch), -1, -1, -1)[:, :, :past]) for k, v in state.kv[parents[0]]]
        layers = []
        for layer in range(len(state.kv[parents[0]])):
            # one copy: each row's parent cache written into its place, [rows, kv_heads, past, head_dim]
            k0, _ = state.kv[parents[0]][layer]
            keys = k0.new_zeros((len(batch), k0.shape[0], past, k0.shape[2]))
            values = torch.zeros_like(keys)
            for r, parent in enumerate(parents):
                k, v = state.kv[parent][layer]  # [kv_heads, parent.end, head_dim]
                keys[r, :, :k.shape[1]] = k
                values[r, :, :v.shape[1]] = v
            layers.append((keys, values))
        return layers

    # ------------------------------------------------------------ log-probs
    def _read_logprobs(self, batch: list[Node], hidden: torch.Tensor, state: RunState) -> None:
        """Log-probs at the needed positions: own tokens from this pass, and the first token
        of each child from the last position."""
        rows, cols, targets, sinks = [], [], [], []
        for r, n in enumerate(batch):
            for j in n.own_positions():  # entry j of the node is predicted at position j-1
                rows.append(r), cols.append(j - 1), targets.append(n.ids[j]), sinks.append((n, j))
            for child in n.children:
                if child.needs_first:
                    rows.append(r), cols.append(len(n.ids) - 1), targets.append(child.ids[0]), sinks.append((child, 0))
        if not rows:
            return
        selected = hidden[torch.tensor(rows, device=hidden.device), torch.tensor(cols, device=hidden.device)]
        values, raw = self._logprob_of(selected, torch.tensor(targets, device=hidden.device))  # [needed]
        for (node, j), value, logit in zip(sinks, values.tolist(), raw.tolist()):
            lp, logits = state.values(node)
            lp[j] = value
            logits[j] = logit

    def _logprob_of(self, hidden: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log softmax(head(hidden))[target], head(hidden)[target]) for hidden [n, hidden]
        and targets [n]: float32 arithmetic, float64 results, in row chunks."""
        vocab = self.head.weight.shape[0]
        step = max(1, LOGIT_ELEMENTS // vocab)
        out, raw = [], []
        for i in range(0, hidden.shape[0], step):
            logits = self.head(hidden[i:i + step]).float()  # [step, vocab]
            picked = logits.gather(1, targets[i:i + step, None])[:, 0]  # [step]
            # log_softmax(x)[t] = x[t] - logsumexp(x), without writing the whole normalised row
            out.append(picked - torch.logsumexp(logits, dim=-1))
            raw.append(picked)
        return torch.cat(out).double().cpu(), torch.cat(raw).double().cpu()
