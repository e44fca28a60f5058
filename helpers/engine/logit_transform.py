"""What a model does to its logits after the output embedding, read from its configuration.

The engine computes logits only at the positions it reads, as ``head(hidden)``; several
families then change them before the softmax: Gemma 2 and 3 soft-cap them
(``cap * tanh(logits / cap)``, ``final_logit_softcapping``), Cohere multiplies them by
``logit_scale``, Granite divides them by ``logits_scaling``, Falcon-H1 multiplies them by
``lm_head_multiplier``. :class:`LogitTransform` holds those settings and :class:`Projection`
applies them after the head, in float32 (a half-precision head multiplies in float32 too). What a configuration does not say, the start-up
probe of :func:`helpers.engine.model_checks.head_disagreement` finds.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


def text_config(config):
    """The text (decoder) part of a configuration (itself for a text-only model)."""
    return config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config


def _number(cfg, key: str) -> float | None:
    value = getattr(cfg, key, None)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class LogitTransform:
    """``softcap * tanh(scale * logits / softcap)`` (no cap when ``softcap`` is None)."""

    scale: float = 1.0
    softcap: float | None = None

    @classmethod
    def of(cls, config) -> "LogitTransform":
        """The transform a model of ``config`` applies (the identity for most models)."""
        cfg = text_config(config)
        scale = 1.0
        if (value := _number(cfg, "logit_scale")) is not None:  # Cohere, Cohere 2
            scale *= value
        if (value := _number(cfg, "logits_scaling")) is not None:  # Granite, Granite MoE
            scale /= value
        if (value := _number(cfg, "lm_head_multiplier")) is not None:  # Falcon-H1
            scale *= value
        cap = _number(cfg, "final_logit_softcapping")  # Gemma 2, Gemma 3
        return cls(scale, cap if cap else None)

    @property
    def is_identity(self) -> bool:
        return self.scale == 1.0 and self.softcap is None

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        if self.scale != 1.0:
            logits = logits * self.scale
        if self.softcap is not None:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def describe(self) -> str:
        """The transform in words (for errors and model cards)."""
        parts = ([f"logits x {self.scale:g}"] if self.scale != 1.0 else []) + \
            ([f"soft-capped at {self.softcap:g}"] if self.softcap is not None else [])
        return ", ".join(parts) or "none"


class Projection:
    """The output embedding then the model's logit transform, in float32 whatever the model's
    dtype: hidden states [positions, width] to logits [positions, vocab].

    A half-precision head (bfloat16, float16: the model's dtype, or the unquantized head of a 4-bit
    or 8-bit model) multiplies float32 copies of the hidden states and of its weight (converted once,
    kept by the projection: twice the head's memory), so the logits are not rounded to the model's
    dtype before the softmax; it runs only at the positions the engine reads. A float32 or float64
    head, and a head that is no plain linear layer (quantized, offloaded by hooks), runs as it is."""

    def __init__(self, head: torch.nn.Module, transform: LogitTransform):
        self.head, self.transform = head, transform
        self.vocab = int(head.weight.shape[0])
        self._float32: tuple[torch.Tensor, torch.Tensor | None] | None = None

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        weights = self.float32_weights()
        if weights is None:
            return self.transform(self.head(hidden).float())
        weight, bias = weights
        return self.transform(torch.nn.functional.linear(hidden.float(), weight, bias))

    @property
    def sliceable(self) -> bool:
        """Whether the head is a plain linear layer whose rows can be read a slice at a time
        (:meth:`columns`); a quantized head or one offloaded by hooks is run whole."""
        weight = getattr(self.head, "weight", None)
        return type(self.head) is torch.nn.Linear and weight is not None and weight.device.type != "meta" \
            and not hasattr(self.head, "_hf_hook")

    def prepared(self, hidden: torch.Tensor) -> torch.Tensor:
        """The hidden states as :meth:`columns` multiplies them (float32 for a half-precision head)."""
        return hidden.float() if self.float32_weights() is not None else hidden

    def columns(self, hidden: torch.Tensor, start: int, stop: int) -> torch.Tensor:
        """Float32 logits of vocabulary entries ``start`` to ``stop`` (the transform applied) for
        hidden states from :meth:`prepared`."""
        weight, bias = self.float32_weights() or (self.head.weight, self.head.bias)
        part = torch.nn.functional.linear(hidden, weight[start:stop], None if bias is None else bias[start:stop])
        return self.transform(part.float())

    def float32_weights(self) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """(weight, bias) in float32 for a half-precision plain linear head, else None."""
        head = self.head
        weight = getattr(head, "weight", None)
        if type(head) is not torch.nn.Linear or weight is None or weight.dtype not in (torch.bfloat16, torch.float16) \
                or weight.device.type == "meta" or hasattr(head, "_hf_hook"):
            return None
        if self._float32 is None:
            self._float32 = (weight.detach().float(), None if head.bias is None else head.bias.detach().float())
        return self._float32
