"""Judgment methods as a registry: each builds engine requests for pairs and reduces the
scores to a per-pair decision (see :mod:`helpers.methods.readouts`)."""
from __future__ import annotations

from .base import Basis, Method
from .readouts import READOUTS

METHODS: dict[str, Method] = {m.name: m for m in READOUTS}


def get(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")
    return METHODS[name]


def method_names(selection) -> list[str]:
    """Method names from "all", "lp,meanlp" or a list; unknown names are an error."""
    if isinstance(selection, str):
        names = list(METHODS) if selection.strip() == "all" else [s.strip() for s in selection.split(",") if s.strip()]
    else:
        names = list(selection)
    for n in names:
        get(n)
    return names


__all__ = ["METHODS", "Basis", "Method", "get", "method_names"]
