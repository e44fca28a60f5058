"""One forward pass of the executor: a batch of rows as input ids and positions, the
attention mask of its rows (padding, a tree mask for packed rows, or segment attention), the
cached keys and values of the rows' parents gathered by index, and the caches kept for the
children that run next."""
from __future__ import annotations

import time
from contextlib import nullcontext

import numpy as np
import torch
from transformers import DynamicCache

from . import segment_attention
from .plan import Node
from .rows import KV, CachedKV, RunState, Unit, fed


def _take(t: torch.Tensor, src: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Rows ``src`` [g, 1] at positions ``pos`` [g, width] of a cache ``t`` [rows, kv_heads,
    positions, head_dim]: [g, kv_heads, width, head_dim] (indices moved to ``t``'s device, as a
    device map puts layers apart)."""
    return t.transpose(1, 2)[src.to(t.device), pos.to(t.device)].transpose(1, 2)


class ForwardPass:
    """The forward half of :class:`helpers.engine.executor.Executor` (the model's body, the
    device and the mask kind are the executor's attributes)."""

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
