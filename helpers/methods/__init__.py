"""Judgment methods as a registry: each builds engine requests for pairs and reduces the
scores to a per-pair decision (see :mod:`helpers.methods.readouts`)."""
from __future__ import annotations

from .base import Basis, Method
from .prompts import PROMPTS
from .readouts import READOUTS

METHODS: dict[str, Method] = {m.name: m for m in READOUTS + PROMPTS}
READOUT_METHODS = [m.name for m in READOUTS]
PROMPT_METHODS = [m.name for m in PROMPTS]


def get(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")
    return METHODS[name]


def method_names(selection, all_of: list[str] | None = None) -> list[str]:
    """Method names from "all" (of ``all_of``, default every method), "lp,meanlp" or a list."""
    if isinstance(selection, str):
        names = (list(all_of or METHODS) if selection.strip() == "all"
                 else [s.strip() for s in selection.split(",") if s.strip()])
    else:
        names = list(selection)
    for n in names:
        get(n)
    return names


__all__ = ["METHODS", "PROMPT_METHODS", "READOUT_METHODS", "Basis", "Method", "get", "method_names"]
