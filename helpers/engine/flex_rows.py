"""FlexAttention for packed rows: one ``mask_mod`` built from the plan's segments.

A packed row holds segments (plan nodes' tokens) one after another after its parent's cached
positions: a shared stem, then the branches that continue it, each token seeing the cached
positions, its ancestors' tokens and its own segment up to itself. Where attention-gym's
``shared_prefix`` mask gives each document one shared prefix, a row here is a tree of them. The
``mask_mod`` reads a few small tensors (:class:`TreeRows`): each query and key column's segment
and position, each row's ancestry matrix, and where a row's cached keys end; under a sliding
window a key is also no further back than the window (counted in positions, as
:mod:`.attention_layout` does). FlexAttention computes only the 128 x 128 tiles in which some
pair is seen. On CUDA both the attention and the block mask are compiled; on the CPU they run
eagerly (a reference implementation that computes every pair: for the tests).

The attention is registered with transformers under :data:`NAME`; the executor switches a model
to it for one forward call and passes ``tree_rows``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import torch
import torch._dynamo
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

NAME = "helpers_tree_flex"
CACHED, EMPTY = -1, -2  # a key column's segment: a cached position of the row's parent, or padding
UNWINDOWED = 2**31 - 1  # the window of a layer without one: every key is nearer than this
TILE = 128  # the block mask's block size: FlexAttention computes a TILE x TILE block where one pair is seen


@dataclass
class TreeRows:
    """What the ``mask_mod`` of one forward call reads ([rows, ...] each): ``q_seg`` and ``q_pos``
    (each query column's segment, EMPTY for padding, and position), ``k_seg`` and ``k_pos`` (each
    key column's segment, CACHED or EMPTY, and position; columns ``past + c`` are the query
    columns ``c``), and ``on_path`` ([rows, segments, segments]: segment j is i or an ancestor
    of i)."""

    q_seg: torch.Tensor
    q_pos: torch.Tensor
    k_seg: torch.Tensor
    k_pos: torch.Tensor
    on_path: torch.Tensor
    past: int
    _masks: dict = field(default_factory=dict)

    @classmethod
    def of(cls, rows: list[tuple[int, list[tuple[int, int, int | None]]]], past: int, seg: int) -> "TreeRows":
        """From each row's cached positions and segments (first position, tokens, index of the
        segment it continues or None), as :func:`helpers.engine.segment_blocks.row_blocks` takes them."""
        n, most = len(rows), max(len(s) for _, s in rows)
        q_seg = np.full((n, seg), EMPTY, dtype=np.int32)  # numpy: a row's slices cost far less than torch's
        q_pos = np.zeros((n, seg), dtype=np.int32)
        k_seg = np.full((n, past + seg), EMPTY, dtype=np.int32)
        on_path = np.zeros((n, most, most), dtype=bool)
        for r, (cached, segments) in enumerate(rows):
            k_seg[r, :cached] = CACHED
            column = 0
            for i, (first, count, parent) in enumerate(segments):
                if parent is not None:
                    on_path[r, i] = on_path[r, parent]
                on_path[r, i, i] = True
                q_seg[r, column:column + count] = i
                q_pos[r, column:column + count] = np.arange(first, first + count)
                column += count
            q_pos[r, column:] = q_pos[r, column - 1] if column else 0  # padding: a valid position (it sees itself)
        k_seg[:, past:] = q_seg
        k_pos = np.concatenate([np.broadcast_to(np.arange(past, dtype=np.int32), (n, past)), q_pos], axis=1)
        return cls(*(torch.from_numpy(np.ascontiguousarray(a)) for a in (q_seg, q_pos, k_seg, k_pos, on_path)), past)

    def mask_mod(self, window: int | None):
        """Whether query column ``q`` of row ``b`` sees key column ``kv`` (``window``: the layer's
        sliding window, or None). The window and the cached width enter as 0-d tensors, so that a
        compiled mask is one graph for every layer and call (a Python number is a constant to
        the compiler: each new value compiled again, and past its limit, run uncompiled)."""
        q_seg, q_pos, k_seg, k_pos, on_path = self.q_seg, self.q_pos, self.k_seg, self.k_pos, self.on_path
        past = torch.tensor(self.past, dtype=torch.int32, device=q_seg.device)
        window = torch.tensor(UNWINDOWED if window is None else window, dtype=torch.int32, device=q_seg.device)

        def seen(b, h, q, kv):
            qs, ks, qp, kp = q_seg[b, q], k_seg[b, kv], q_pos[b, q], k_pos[b, kv]
            real = qs >= 0
            tree = real & (ks >= 0) & on_path[b, qs.clamp(min=0), ks.clamp(min=0)] & (kp <= qp)
            out = (real & (ks == CACHED)) | tree | (~real & (kv == past + q))  # padding sees itself
            return out & (qp - kp < window)

        return seen

    def block_mask(self, window: int | None, device) -> BlockMask:
        """The block mask of :meth:`mask_mod` on ``device`` (made once per window and device)."""
        key = (window, str(device))
        if key not in self._masks:
            rows, seg = self.q_seg.shape
            moved = TreeRows(*(t.to(device) for t in (self.q_seg, self.q_pos, self.k_seg, self.k_pos, self.on_path)),
                             self.past)
            build = _compiled(create_block_mask) if compiles(device) else create_block_mask
            self._masks[key] = build(moved.mask_mod(window), rows, None, seg, self.k_seg.shape[1], device=device,
                                     BLOCK_SIZE=TILE)
        return self._masks[key]


def computed_pairs(cached: int, segments: list[tuple[int, int, int | None]], past: int, seg: int,
                   tile: int = TILE) -> int:
    """The query-key pairs compiled FlexAttention computes for one row of :class:`TreeRows`
    (``seg`` query columns, ``past + seg`` key columns): ``tile`` x ``tile`` for every block in
    which :meth:`TreeRows.mask_mod` sees a pair (a window left out: an upper bound)."""
    hit = np.zeros((-(-seg // tile), -(-(past + seg) // tile)), dtype=bool)

    def mark(q0: int, q1: int, k0: int, k1: int) -> None:  # query columns q0..q1-1 see key columns k0..k1-1
        if q1 > q0 and k1 > k0:
            hit[q0 // tile:(q1 - 1) // tile + 1, k0 // tile:(k1 - 1) // tile + 1] = True

    def causal(q0: int, q1: int, first: int | None) -> None:  # query tile by tile: keys first (None: itself)..itself
        while q0 < q1:
            end = min(q1, (q0 // tile + 1) * tile)
            mark(q0, end, past + (q0 if first is None else first), past + end)
            q0 = end

    starts = np.concatenate([[0], np.cumsum([n for _, n, _ in segments])]).tolist()
    for i, (_, n, parent) in enumerate(segments):
        a = starts[i]
        mark(a, a + n, 0, cached)
        while parent is not None:
            mark(a, a + n, past + starts[parent], past + starts[parent] + segments[parent][1])
            parent = segments[parent][2]
        causal(a, a + n, a)  # its own tokens
    causal(starts[-1], seg, None)  # padding sees itself
    return int(hit.sum()) * tile * tile


@cache
def _compiled(function):
    """``function`` compiled (once per process). Calls differ in rows, cached width and segment
    width: the compiler's automatic dynamic shapes make those sizes symbolic at their first change."""
    return torch.compile(function)


def compiles(device) -> bool:
    """Whether FlexAttention and its block masks are compiled on ``device``: on CUDA unless the
    user turned the compiler off (``TORCHDYNAMO_DISABLE=1`` or ``TORCH_COMPILE_DISABLE=1``, under
    which ``torch.compile`` runs the function as it is); elsewhere they run eagerly."""
    off = os.environ.get("TORCHDYNAMO_DISABLE", "") == "1" or torch._dynamo.config.disable
    return torch.device(device).type == "cuda" and not off


def _attend(device):
    """``flex_attention``, compiled where :func:`compiles`, eager elsewhere."""
    return _compiled(flex_attention) if compiles(device) else flex_attention


def tree_flex_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask, tree_rows: TreeRows | None = None, scaling: float | None = None,
                        softcap: float | None = None, sliding_window: int | None = None,
                        **kwargs) -> tuple[torch.Tensor, None]:
    """FlexAttention (query [batch, heads, q, dim], keys and values [batch, kv_heads, k, dim];
    output [batch, q, heads, dim]) under ``tree_rows``' mask, with the layer's soft-capping and
    sliding window; without ``tree_rows`` SDPA itself. What FlexAttention cannot express here
    (attention sinks, a position bias) is refused, so the start-up probe falls back."""
    if tree_rows is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                      sliding_window=sliding_window, softcap=softcap, **kwargs)
    if kwargs.get("s_aux") is not None or kwargs.get("position_bias") is not None:
        raise NotImplementedError("FlexAttention for packed rows takes no attention sinks or position bias")

    def capped(score, b, h, q, kv):
        return softcap * torch.tanh(score / softcap)

    dtype = query.dtype
    if not compiles(query.device) and dtype in (torch.bfloat16, torch.float16):
        # eager FlexAttention computes its scores in the inputs' dtype (the compiled kernel, like
        # SDPA, accumulates in float32): in float32 here, then back
        query, key, value = query.float(), key.float(), value.float()
    out = _attend(query.device)(query, key, value, score_mod=capped if softcap else None,
                                block_mask=tree_rows.block_mask(sliding_window, query.device), scale=scaling,
                                enable_gqa=query.shape[1] != key.shape[1])
    return out.to(dtype).transpose(1, 2).contiguous(), None


def register() -> None:
    """Make :data:`NAME` known to transformers (attention, and SDPA's mask for it)."""
    AttentionInterface.register(NAME, tree_flex_attention)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


register()
