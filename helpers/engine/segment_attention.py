"""SDPA for packed rows that computes only the query-key pairs the tree mask allows.

A packed row (a shared part, then the branches that continue it, each token seeing only its
own path) under a dense 4D mask costs SDPA every query-key pair of the row: a row of forty
short sentences after a start token spends almost all its attention on masked pairs, and a
long priming prefix twice its causal attention. Here each segment of a row (one plan node's
tokens) attends only to the keys it may see: the row's cached positions, its ancestors'
segments, and itself causally, in the blocks :mod:`.segment_blocks` forms (chunks of whole
segments against the keys some of their queries see; a long segment as one causal block, SDPA's
causal kernel over its keys). Blocks of similar size run as one SDPA call per group and layer,
their queries and keys gathered with ``index_select`` (indexing with ``[]`` ran the same gathers
several times slower), and each query's output is read back from its group's by one more gather
rather than assigned into place. PyTorch offers no CPU kernel that skips the masked blocks of an
arbitrary mask (FlexAttention needs torch.compile), hence this module.

The attention is registered with transformers under :data:`NAME`; the executor switches a
model to it for one forward call (:func:`switched`) and passes ``segments``.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

from .segment_blocks import Block

NAME = "helpers_segment_sdpa"


class _Group:
    """Blocks padded to one size: flat query and key indices and the mask, on one device
    (causal blocks: no mask, SDPA's causal kernel)."""

    def __init__(self, blocks: list[Block], seg: int, width: int, layout=None):
        self.causal = blocks[0].causal
        self.windowed = None  # the mask of sliding layers, where the window hides a pair (else the mask)
        if self.causal:
            self._causal(blocks, seg, width)
            return
        nq = max(len(b.queries) for b in blocks)
        nk = max(len(b.keys) for b in blocks)
        q = np.full((len(blocks), nq), -1, dtype=np.int64)  # -1: padding (its output is not read)
        k = np.zeros((len(blocks), nk), dtype=np.int64)  # padding keys read position 0, masked
        mask = np.zeros((len(blocks), nq, nk), dtype=bool)
        mask[:, :, 0] = True  # padding queries attend to one key (no empty row)
        for v, b in enumerate(blocks):
            q[v, :len(b.queries)] = b.row * seg + b.queries
            k[v, :len(b.keys)] = b.row * width + b.keys
            mask[v, :len(b.queries)] = False
            mask[v, :len(b.queries), :len(b.keys)] = b.mask
        if layout is not None and layout.slides:
            query_pos = np.zeros((len(blocks), nq), dtype=np.int64)
            key_pos = np.zeros((len(blocks), nk), dtype=np.int64)
            for v, b in enumerate(blocks):
                query_pos[v, :len(b.queries)], key_pos[v, :len(b.keys)] = b.query_pos, b.key_pos
            windowed = mask & layout.near(query_pos, key_pos)  # padding sits at position 0: it keeps its key
            if (windowed != mask).any():
                self.windowed = torch.from_numpy(windowed[:, None])
        self.q, self.k = torch.from_numpy(q), torch.from_numpy(k)
        self.mask = torch.from_numpy(mask[:, None])  # [blocks, 1, nq, nk]
        self.read, self._on = torch.from_numpy(np.maximum(q, 0)), {}  # padding reads the first query

    def _causal(self, blocks: list[Block], seg: int, width: int) -> None:
        """Causal blocks padded at the end to the longest, one query slot per key (the causal
        kernel aligns queries and keys from the first): a block's queries fill the slots of its
        own keys; the slots of the keys before them read its first query and their output is not
        read, as padding's; padding keys come after every real query (the kernel hides them)."""
        n = max(len(b.keys) for b in blocks)
        q = np.full((len(blocks), n), -1, dtype=np.int64)
        k = np.zeros((len(blocks), n), dtype=np.int64)
        read = np.zeros((len(blocks), n), dtype=np.int64)
        for v, b in enumerate(blocks):
            lead = len(b.keys) - len(b.queries)
            q[v, lead:len(b.keys)] = b.row * seg + b.queries
            read[v] = b.row * seg + b.queries[0]
            read[v, lead:len(b.keys)] = b.row * seg + b.queries
            k[v] = b.row * width + b.keys[-1]
            k[v, :len(b.keys)] = b.row * width + b.keys
        self.q, self.k, self.mask, self._on = torch.from_numpy(q), torch.from_numpy(k), None, {}
        self.read = torch.from_numpy(read)

    def on(self, device, sliding: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Query indices read (flat), key indices (flat) and the mask (of a sliding layer: the
        windowed one), on ``device``."""
        key = (device, sliding and self.windowed is not None)
        if key not in self._on:
            mask = self.windowed if key[1] else self.mask
            self._on[key] = (self.read.reshape(-1).to(device), self.k.reshape(-1).to(device),
                             None if mask is None else mask.to(device))
        return self._on[key]


def _size_class(n: int) -> int:
    return max(0, int(n - 1).bit_length())


class Segments:
    """The attention plan of one forward call over ``rows`` x ``seg`` new tokens after
    ``past`` cached positions: its blocks grouped by query and key count (powers of two, so that
    padding stays below 2x)."""

    def __init__(self, blocks: list[Block], rows: int, seg: int, past: int, layout=None):
        self.rows, self.seg, self.width = rows, seg, past + seg
        if layout is not None and layout.slides:  # (an :class:`.attention_layout.AttentionLayout`)
            blocks = [b.windowed(layout) for b in blocks]
        groups: dict[tuple, list[Block]] = {}
        for b in blocks:
            groups.setdefault((b.causal, _size_class(len(b.queries)), _size_class(len(b.keys))), []).append(b)
        self.groups = [_Group(g, seg, self.width, layout) for _, g in sorted(groups.items())]
        # where each query's output lies among the groups' outputs one after another (a column no
        # query runs, a row's padding, reads the first: its output is never read)
        source, offset = np.zeros(rows * seg, dtype=np.int64), 0
        for g in self.groups:
            q = g.q.numpy().reshape(-1)
            real = np.flatnonzero(q >= 0)
            source[q[real]] = offset + real
            offset += q.size
        self.source, self._on = torch.from_numpy(source), {}

    def source_on(self, device) -> torch.Tensor:
        """:attr:`source` on ``device``."""
        if device not in self._on:
            self._on[device] = self.source.to(device)
        return self._on[device]

    def pairs(self) -> int:
        """Query-key pairs computed (padding included)."""
        return sum(int(g.k.shape[0] * g.k.shape[1] * (g.k.shape[1] + 1) // 2) if g.causal else
                   int(g.mask.shape[0] * g.mask.shape[2] * g.mask.shape[3]) for g in self.groups)


def _gathered(flat: torch.Tensor, at: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Rows ``at`` (flat indices of a [blocks, n] ``shape``) of ``flat`` [positions, heads, dim]:
    [blocks, heads, n, dim]."""
    return flat.index_select(0, at).view(*shape, flat.shape[1], -1).transpose(1, 2)


def segment_sdpa(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 attention_mask: torch.Tensor | None, segments: Segments | None = None,
                 **kwargs) -> tuple[torch.Tensor, None]:
    """SDPA (query [batch, heads, q, dim], keys and values [batch, kv_heads, k, dim]; output
    [batch, q, heads, dim]) over the blocks of ``segments``; without them SDPA itself."""
    if segments is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    kwargs.pop("is_causal", None)
    rows, heads, seg, _ = query.shape
    flat_q = query.transpose(1, 2).reshape(rows * seg, heads, -1)  # [rows * seg, heads, dim]
    flat_k = key.transpose(1, 2).reshape(rows * key.shape[2], key.shape[1], -1)
    flat_v = value.transpose(1, 2).reshape(rows * value.shape[2], value.shape[1], -1)
    sliding = kwargs.get("sliding_window") is not None  # the layer says it slides (its window: the layout's)
    outs = []
    for group in segments.groups:
        read, k_idx, mask = group.on(query.device, sliding)
        keys = group.k.shape
        got, _ = sdpa_attention_forward(module, _gathered(flat_q, read, group.read.shape),
                                        _gathered(flat_k, k_idx, keys), _gathered(flat_v, k_idx, keys), mask,
                                        is_causal=group.causal, **kwargs)  # [blocks, nq, heads, dim]
        outs.append(got.reshape(-1, heads, got.shape[-1]))
    out = outs[0] if len(outs) == 1 else torch.cat(outs)
    return out.index_select(0, segments.source_on(query.device)).view(rows, seg, heads, -1), None


def register() -> None:
    """Make :data:`NAME` known to transformers (attention, and SDPA's mask for it)."""
    AttentionInterface.register(NAME, segment_sdpa)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


@contextmanager
def switched(config, name: str = NAME):
    """The model of ``config`` runs the attention registered as ``name`` inside the block
    (:func:`segment_sdpa` by default)."""
    before = config._attn_implementation
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = before


register()
