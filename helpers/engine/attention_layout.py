"""Which layers of a model attend through a sliding window, and the masks that say so.

transformers builds a sliding-window mask itself from a 2D padding mask, counting in
columns; a 4D mask it takes as it is, for every layer. The engine's rows are not laid out
as one sequence per row (a parent's cached keys right-padded, branches packed after a shared
stem), so wherever it passes a 4D mask it also applies the window itself, counting in
token positions: a key is seen when ``query position - key position < window``. Models
whose layers mix sliding and full attention (Gemma 2 and 3, Qwen2/3 with windows) take a
mask per kind of layer, keyed by the configuration's ``layer_types``; models whose every layer
slides (Mistral, Mixtral, Phi-3 with ``sliding_window`` set) take the windowed mask alone.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .logit_transform import text_config

FULL, SLIDING = "full_attention", "sliding_attention"


@dataclass(frozen=True)
class AttentionLayout:
    """``window``: the sliding-window length (None: every layer attends fully);
    ``kinds``: the layer kinds of ``layer_types`` (empty when the configuration names none);
    ``known``: whether every kind is one the engine can mask (full or sliding)."""

    window: int | None = None
    kinds: frozenset = frozenset()
    known: bool = True

    @classmethod
    def of(cls, config) -> "AttentionLayout":
        cfg = text_config(config)
        window = getattr(cfg, "sliding_window", None)
        window = int(window) if isinstance(window, int) and window > 0 else None
        if getattr(cfg, "use_sliding_window", True) is False:
            window = None
        types = getattr(cfg, "layer_types", None)
        if types:
            kinds = frozenset(types)
            if SLIDING not in kinds:
                window = None
            return cls(window, kinds, kinds <= {FULL, SLIDING} and (SLIDING not in kinds or window is not None))
        return cls(window)

    @property
    def slides(self) -> bool:
        """Whether some layer attends through a window."""
        return self.window is not None

    def near(self, query_pos, key_pos):
        """[..., queries, keys] bool (numpy or torch, as given): each key within the window of each
        query, by position (``query position - key position < window``); the one place the window's
        rule is written (4D masks and :mod:`.segment_attention` both read it)."""
        return (query_pos[..., :, None] - key_pos[..., None, :]) < self.window

    def masks(self, allowed: torch.Tensor, query_pos: torch.Tensor, key_pos: torch.Tensor):
        """The mask(s) to pass for ``allowed`` [rows, 1, queries, keys] (True: attend), with the
        window applied from ``query_pos`` [rows, queries] and ``key_pos`` [rows, keys]: one
        tensor, or a dict by layer kind where full and sliding layers mix. A query whose every
        key falls outside keeps its own position (padding)."""
        if not self.slides:
            return allowed
        windowed = allowed & self.near(query_pos, key_pos)[:, None]
        if SLIDING in self.kinds and FULL in self.kinds:
            return {FULL: allowed, SLIDING: windowed}
        return windowed
