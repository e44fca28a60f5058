"""What the engine must know about a model before running it: its position limit, whether
its own logits are what the engine computes (the output embedding and the configuration's
logit transform), whether its key/value cache can be shared across sequences, and how many
bytes that cache takes per token."""
from __future__ import annotations

import torch
from transformers import DynamicCache


def max_positions(model) -> int | None:
    """The longest sequence the model takes, from its configuration's text part (a multimodal
    model such as Gemma 3 4B and up keeps it in ``text_config``), else its top level (None if
    unknown)."""
    from .logit_transform import text_config

    for cfg in (text_config(model.config), model.config):  # the text part first
        for key in ("max_position_embeddings", "n_positions", "n_ctx"):
            value = getattr(cfg, key, None)
            if isinstance(value, int):
                return value
    return None


PROBE_IDS = (5, 9, 14, 3, 27, 8, 11, 2)  # after the start token: any ids of the vocabulary


@torch.no_grad()
def head_disagreement(model, project, body, first_id: int, device) -> tuple[float, float]:
    """(largest difference, tolerance) between the engine's log-probs, ``log_softmax(
    project(body(x)))``, and those of the model's own forward on a probe input ``x``. The
    tolerance is 1e-3 nats in float32 and float64; in a half-precision dtype (the model's, or its
    logits' where a quantized head computes in bf16), whose logits the model rounds before its own
    transform while the engine transforms in float32, two units in the last place of the largest logit."""
    vocab = project.vocab
    ids = torch.tensor([[first_id, *(i % vocab for i in PROBE_IDS)]], device=device)  # [1, 9]
    raw = model(input_ids=ids).logits[0]  # [9, vocab]
    own = raw.float()
    ours = project(body(input_ids=ids).last_hidden_state[0])  # [9, vocab]
    if own.shape != ours.shape:
        return float("inf"), 0.0
    diff = float((torch.log_softmax(own.to(ours.device), -1) - torch.log_softmax(ours, -1)).abs().max())
    # the rounding of the model's own logits: its dtype, its logits', or a quantized head's compute dtype
    # (bitsandbytes computes in it and casts back to the input's dtype)
    computed = (getattr(project.head, "compute_dtype", None) or torch.bfloat16) \
        if getattr(project, "quantized", False) else None
    half = [d for d in (body.get_input_embeddings().weight.dtype, raw.dtype, computed)
            if d in (torch.bfloat16, torch.float16)]
    dtype = half[0] if half else torch.float32
    tol = 1e-3 if dtype in (torch.float32, torch.float64) else \
        max(1e-3, 2 * torch.finfo(dtype).eps * float(own.abs().max()))
    return diff, tol


def agrees(candidate: torch.Tensor, reference: torch.Tensor, wrong: torch.Tensor, dtype: torch.dtype,
           tol: float = 1e-3) -> bool:
    """Whether a probe's ``candidate`` hidden states equal ``reference`` up to the model's
    rounding: within ``tol`` in float32 and float64; in a half-precision dtype (whose kernels
    round differently for another mask or batch shape) ten times closer to ``reference`` than
    ``wrong``, what a mask that leaked would give."""
    if dtype in (torch.float32, torch.float64):
        return torch.allclose(candidate, reference, atol=tol, rtol=tol)
    off = float((wrong - reference).abs().max())
    err = float((candidate - reference).abs().max())
    return off > 0 and err <= 0.1 * off


def can_share_cache(model, layout, mask_form: str | None) -> bool:
    """Key/value reuse needs transformers' cache classes, and for a model with sliding windows
    (``layout``, :class:`helpers.engine.attention_layout.AttentionLayout`) layer kinds the
    engine knows and an attention that takes its 4D masks (``mask_form``), which carry the
    windows counted by position."""
    try:
        DynamicCache(config=model.config)
    except Exception:  # noqa: BLE001 - a model without cache classes: plain path only
        return False
    return layout.known and (not layout.slides or mask_form is not None)


def hidden_size(model) -> int:
    """Width of the model's hidden states (its text part's, for multimodal configurations)."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", None) or getattr(cfg, "d_model", 1))


# Attention FLOPs per query-key pair over linear-layer FLOPs per token are about 4d / 24d^2:
# a packed row under a dense mask may waste 0.6 d pairs per token, about 10% more work than
# its tokens alone (segment attention computes no wasted pairs: no bound there).
PACK_WASTE_PER_WIDTH = 0.6


def kv_bytes_per_token(model) -> int:
    """Bytes of cached keys and values per token, from the model's configuration."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None) or 1
    hidden = getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", None) or 1
    heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head", None) or 1
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    head_dim = getattr(cfg, "head_dim", None) or hidden // heads
    size = torch.finfo(model.dtype).bits // 8 if model.dtype.is_floating_point else 2
    return max(1, int(layers * 2 * kv_heads * head_dim * size))


# The probe row of the packing checks: a shared stem, then two branches packed after it.
_STEM, _LEFT, _RIGHT = [5, 6], [7, 8], [9, 10]


@torch.no_grad()
def packed_like_alone(body, first_id: int, device, forward) -> bool:
    """Whether ``forward(ids, positions)`` (one row [1, 7]: the start token and a 2-token stem, then
    two 2-token branches packed after it; hidden states [1, 7, hidden]) gives each branch the
    hidden states it has alone. False where ``forward`` raises (an attention that rejects the
    mask or the arguments)."""
    stem, left, right = [first_id, *_STEM], _LEFT, _RIGHT
    ids = torch.tensor([stem + left + right], device=device)  # [1, 7]
    positions = torch.tensor([[0, 1, 2, 3, 4, 3, 4]], device=device)
    try:
        packed = forward(ids, positions).float()[0]
    except Exception:  # noqa: BLE001 - an attention that rejects the mask or the arguments: not this way
        return False
    alone_l = body(input_ids=torch.tensor([stem + left], device=device)).last_hidden_state.float()[0]
    alone_r = body(input_ids=torch.tensor([stem + right], device=device)).last_hidden_state.float()[0]
    leaked = body(input_ids=ids, position_ids=positions).last_hidden_state.float()[0]  # right sees left
    reference = torch.cat([alone_l, alone_r[3:]])  # [7, hidden]: each branch as if alone
    return agrees(packed, reference, torch.cat([alone_l, leaked[5:]]), body.get_input_embeddings().weight.dtype)


# The probe row's segments for segment and flex attention (first position, tokens, parent).
PROBE_SEGMENTS = [(0, 3, None), (3, 2, 0), (3, 2, 0)]


def tree_mask_kind(body, first_id: int, device) -> str | None:
    """The custom attention mask the model's attention honours, for packed subtrees: "bool"
    (SDPA) or "additive" (eager); None when it takes none (e.g. flash attention, which
    ignores a 4D mask) or when the probe (:func:`packed_like_alone`) disagrees."""
    kind = {"sdpa": "bool", "eager": "additive"}.get(getattr(body.config, "_attn_implementation", None))
    if kind is None:
        return None
    allowed = torch.tril(torch.ones((7, 7), dtype=torch.bool))
    allowed[5:, 3:5] = False  # the right branch does not see the left one
    mask = allowed[None, None].to(device)
    if kind == "additive":
        dtype = body.get_input_embeddings().weight.dtype
        mask = torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill_(~mask, torch.finfo(dtype).min)
    forward = lambda ids, pos: body(input_ids=ids, attention_mask=mask, position_ids=pos).last_hidden_state  # noqa: E731
    return kind if packed_like_alone(body, first_id, device, forward) else None


def segments_work(body, first_id: int, device) -> bool:
    """Whether the model's attention can run packed rows segment by segment
    (:mod:`helpers.engine.segment_attention`): SDPA, passing attention keyword arguments
    through, with each branch's hidden states as if it ran alone."""
    from . import segment_attention as sa
    from .segment_blocks import row_blocks

    if getattr(body.config, "_attn_implementation", None) != "sdpa":
        return False
    blocks = row_blocks(0, 0, 0, PROBE_SEGMENTS, chunk=4)  # a chunk spans both branches

    def forward(ids, positions):
        with sa.switched(body.config):
            return body(input_ids=ids, attention_mask=torch.ones((1, 1, 7, 7), dtype=torch.bool, device=device),
                        position_ids=positions, segments=sa.Segments(blocks, 1, 7, 0)).last_hidden_state

    return packed_like_alone(body, first_id, device, forward)


def flex_works(body, first_id: int, device) -> bool:
    """Whether the model's attention can run packed rows through FlexAttention
    (:mod:`helpers.engine.flex_rows`): SDPA or eager attention whose layers pass their keyword
    arguments through, with each branch's hidden states as if it ran alone."""
    from . import flex_rows, segment_attention as sa

    if getattr(body.config, "_attn_implementation", None) not in ("sdpa", "eager"):
        return False

    def forward(ids, positions):
        with sa.switched(body.config, flex_rows.NAME):
            return body(input_ids=ids, attention_mask=torch.ones((1, 1, 7, 7), dtype=torch.bool, device=device),
                        position_ids=positions, tree_rows=flex_rows.TreeRows.of([(0, PROBE_SEGMENTS)], 0, 7)
                        ).last_hidden_state

    return packed_like_alone(body, first_id, device, forward)
