"""SDPA for packed rows that skips the masked half of a long shared stem.

A packed row (a shared stem, then the branches that continue it, each seeing only its own
path) needs a custom 4D mask, and with a mask SDPA computes every query-key pair: for an
800-token priming prefix that is twice the attention a causal run of the prefix costs. When
the first ``causal_stem`` positions of every row are a plain causal run (nothing cached
before them), this attention splits the queries: the stem's run causally (SDPA's causal
kernel skips the upper triangle), the rest under the mask. Without ``causal_stem`` it is
SDPA itself. PyTorch offers no kernel that skips the masked blocks of an arbitrary mask on
CPU (FlexAttention needs torch.compile), hence these few lines.

The implementation is registered with transformers under :data:`NAME`; the executor switches
a model to it for one forward call (:func:`switched`) and passes ``causal_stem``.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

NAME = "helpers_stem_sdpa"


def stem_sdpa(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
              attention_mask: torch.Tensor | None, causal_stem: int = 0, **kwargs) -> tuple[torch.Tensor, None]:
    """SDPA (query [batch, heads, q, dim], keys and values [batch, kv_heads, k, dim]; output
    [batch, q, heads, dim]) where queries ``:causal_stem`` attend causally within the stem."""
    s = int(causal_stem or 0)
    if not 0 < s < query.shape[2] or attention_mask is None or key.shape[2] != query.shape[2]:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    kwargs.pop("is_causal", None)
    stem, _ = sdpa_attention_forward(module, query[:, :, :s], key[:, :, :s], value[:, :, :s], None,
                                     is_causal=True, **kwargs)
    rest, _ = sdpa_attention_forward(module, query[:, :, s:], key, value, attention_mask[:, :, s:], **kwargs)
    return torch.cat([stem, rest], dim=1), None


def register() -> None:
    """Make :data:`NAME` known to transformers (attention, and SDPA's mask for it)."""
    AttentionInterface.register(NAME, stem_sdpa)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


@contextmanager
def switched(config):
    """The model of ``config`` runs :func:`stem_sdpa` inside the block (it was SDPA)."""
    before = config._attn_implementation
    config._attn_implementation = NAME
    try:
        yield
    finally:
        config._attn_implementation = before


register()
