"""One forward pass of the executor: a batch of rows as input ids and positions, the
attention mask of its rows (padding, a tree mask for packed rows, or segment or flex attention; with
sliding windows applied where the model has them, :mod:`.attention_layout`), the cached keys
and values of the rows' parents gathered by index into a transformers ``Cache``, and the
caches kept for the children that run next."""
from __future__ import annotations

import inspect
import time
from contextlib import nullcontext

import numpy as np
import torch
from transformers import DynamicCache

from . import flex_rows, segment_attention, segment_blocks
from .plan import Node
from .rows import KV, CachedKV, RunState, Unit, fed


def cache_argument(body) -> str:
    """The keyword ``body.forward`` takes its key/value cache by: ``cache`` (transformers 5.24
    on; ``past_key_values`` is deprecated there) or ``past_key_values`` (older or remote code)."""
    return "cache" if "cache" in inspect.signature(body.forward).parameters else "past_key_values"


def returned_cache(out):
    """The cache a forward pass returned, under either name."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def filled_cache(layers) -> DynamicCache:
    """A ``DynamicCache`` holding ``layers`` (per layer (keys, values)); empty for none. Every
    layer is a full one: the engine applies sliding windows in its masks, by position."""
    cache = DynamicCache()
    for i, (keys, values) in enumerate(layers or ()):
        cache.update(keys, values, i)
    return cache


def _take(t: torch.Tensor, src: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Rows ``src`` [g, 1] at positions ``pos`` [g, width] of a cache ``t`` [rows, kv_heads,
    positions, head_dim]: [g, kv_heads, width, head_dim] (indices moved to ``t``'s device, as a
    device map puts layers apart)."""
    return t.transpose(1, 2)[src.to(t.device), pos.to(t.device)].transpose(1, 2)


def row_segments(unit: Unit) -> list[tuple[int, int, int | None]]:
    """A row's segments for :mod:`.segment_attention`: each member's (first position, tokens fed,
    index of the member it continues; None for the root)."""
    index = {n: i for i, n in enumerate(unit.members)}
    return [(n.offset, fed(n), None if n is unit.root else index[n.parent]) for n in unit.members]


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
        packed = any(u.packed for u in batch)
        how = self.row_attention if packed else "dense"
        extra, attention = {}, None  # the attention's own argument and its registered name, if not the model's
        if how == "segments":
            extra["segments"] = segment_attention.Segments(self._blocks(batch, past), rows, seg, past, self.layout)
            attention = segment_attention.NAME
        elif how == "flex":
            extra["tree_rows"] = flex_rows.TreeRows.of([(u.root.offset, row_segments(u)) for u in batch], past, seg)
            attention = flex_rows.NAME
        if attention is not None:  # the attention reads its argument; transformers takes a 4D mask as it is
            mask = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=dev).expand(rows, 1, seg, past + seg)
        elif packed or (past and self.layout.slides):
            mask = self._mask_4d(batch, past, seg, positions)
        else:  # transformers builds the causal (and any sliding) mask: columns are positions here
            mask = self._pad_mask(batch, past, seg)
        keep = any(u.cached for u in batch)
        cache = filled_cache(self._gather_cache([u.root for u in batch], past, state) if past else None) \
            if past or keep else None
        self.forward_calls += 1
        self.tokens_run += sum(u.length for u in batch)
        if cache is not None:
            extra[self.cache_argument] = cache
        mask = {k: m.to(dev) for k, m in mask.items()} if isinstance(mask, dict) else mask.to(dev)
        with segment_attention.switched(self.body.config, attention) if attention is not None else nullcontext():
            out = self.body(input_ids=input_ids.to(dev), attention_mask=mask, position_ids=positions.to(dev),
                            use_cache=cache is not None, **extra)
        if keep:
            # per layer [rows, kv_heads, past + seg, head_dim]
            kv = [(layer.keys, layer.values) for layer in returned_cache(out).layers]
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
    def _blocks(batch: list[Unit], past: int) -> list[segment_blocks.Block]:
        """Each row's attention blocks: its segments (the members, parents first), each
        seeing the row's cached positions and its ancestors in the row."""
        return [block for r, u in enumerate(batch)
                for block in segment_blocks.row_blocks(r, u.root.offset, past, row_segments(u))]


    @staticmethod
    def _pad_mask(batch: list[Unit], past: int, seg: int) -> torch.Tensor:
        """[rows, past + seg] 0/1: each row's cached positions, then its segment."""
        mask = torch.zeros((len(batch), past + seg), dtype=torch.long)
        for r, u in enumerate(batch):
            mask[r, :u.root.offset] = 1
            mask[r, past:past + u.length] = 1
        return mask

    def _mask_4d(self, batch: list[Unit], past: int, seg: int, positions: torch.Tensor):
        """[rows, 1, seg, past + seg] attention mask of the batch (each row's cached positions,
        then its members along their paths: a tree for packed rows, causal otherwise), with
        any sliding window applied by position (a dict by layer kind where kinds mix), in the
        form the model's attention takes: bool (True = attend) or additive (0 or the dtype's
        minimum)."""
        allowed = torch.zeros((len(batch), 1, seg, past + seg), dtype=torch.bool)
        for r, u in enumerate(batch):
            allowed[r, 0, :u.length, :u.root.offset] = True
            allowed[r, 0, :u.length, past:past + u.length] = u.tree_mask()
            pad = torch.arange(u.length, seg)
            allowed[r, 0, pad, past + pad] = True  # padding attends to itself (no empty row)
        key_pos = torch.cat([torch.arange(past).expand(len(batch), -1), positions], dim=1)  # cached columns: 0, 1, ...
        masks = self.layout.masks(allowed, positions, key_pos)
        if self.mask_form == "bool":
            return masks
        dtype = self.body.get_input_embeddings().weight.dtype

        def additive(m: torch.Tensor) -> torch.Tensor:
            return torch.zeros(m.shape, dtype=dtype).masked_fill_(~m, torch.finfo(dtype).min)

        return {k: additive(m) for k, m in masks.items()} if isinstance(masks, dict) else additive(masks)

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
