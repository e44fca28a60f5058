"""Judgment methods as one registry: Ide et al.'s readouts and prompts, and Hu & Levy's
tasks. A new method is one :class:`Method` (with an existing or a new :class:`Family`)
passed to :func:`register`; the runner needs no change."""
from __future__ import annotations

from ..selection import parse_selection
from .base import METHODS_VERSION, Family, Method, Runtime
from .hu_levy import HU_LEVY
from .prompting import PROMPTS
from .readouts import READOUTS
from .syntaxgym import SYNTAXGYM

METHODS: dict[str, Method] = {}
READOUT_METHODS = [m.name for m in READOUTS]
PROMPT_METHODS = [m.name for m in PROMPTS]
HU_LEVY_METHODS = [m.name for m in HU_LEVY]


def register(method: Method, replace: bool = False) -> Method:
    """Add ``method`` to the registry (an existing name is an error unless ``replace``)."""
    if not isinstance(method, Method):
        raise TypeError(f"register a helpers.methods.Method, got {type(method).__name__}")
    if method.name in METHODS and not replace:
        raise ValueError(f"a method named {method.name!r} is registered already; pass replace=True to override")
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    METHODS.pop(name, None)


for _m in READOUTS + PROMPTS + HU_LEVY + SYNTAXGYM:
    register(_m)


def get(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")
    return METHODS[name]


def method_names(selection, all_of: list[str] | None = None) -> list[str]:
    """Method names from "all" (of ``all_of``, default every method), "lp,meanlp" or a list."""
    return parse_selection(selection, list(all_of or METHODS) if selection == "all" else list(METHODS),
                           what="method")


__all__ = ["HU_LEVY_METHODS", "METHODS", "METHODS_VERSION", "PROMPT_METHODS", "READOUT_METHODS", "Family", "Method",
           "Runtime", "get", "method_names", "register", "unregister"]
