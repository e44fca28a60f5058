"""What a model does to its logits after the output embedding, read from its configuration.

The engine computes logits only at the positions it reads, as ``head(hidden)``; several
families then change them before the softmax: Gemma 2 and 3 soft-cap them
(``cap * tanh(logits / cap)``, ``final_logit_softcapping``), Cohere multiplies them by
``logit_scale``, Granite divides them by ``logits_scaling``, Falcon-H1 multiplies them by
``lm_head_multiplier``. :class:`LogitTransform` holds those settings and
:class:`helpers.engine.projection.Projection` applies them after the head, in float32. What a
configuration does not say, the start-up probe of :func:`helpers.engine.model_checks.head_disagreement` finds.
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

    def apply_(self, logits: torch.Tensor) -> torch.Tensor:
        """The transform in place on ``logits`` (the same operations as calling it, without new tensors)."""
        if self.scale != 1.0:
            logits.mul_(self.scale)
        if self.softcap is not None:
            logits.div_(self.softcap).tanh_().mul_(self.softcap)
        return logits

    def describe(self) -> str:
        """The transform in words (for errors and model cards)."""
        parts = ([f"logits x {self.scale:g}"] if self.scale != 1.0 else []) + \
            ([f"soft-capped at {self.softcap:g}"] if self.softcap is not None else [])
        return ", ".join(parts) or "none"
