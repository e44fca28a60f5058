"""Judgment methods as one registry: Ide et al.'s readouts and prompts, Hu & Levy's tasks,
SyntaxGym's regions and the word-level LP (corrected word surprisal). A new method is one
:class:`Method` (with an existing or a new :class:`Family`) passed to :func:`register`; the
runner needs no change."""
from __future__ import annotations

import pandas as pd

from ..settings.lists import parse_list
from .applicability import refuse_not_applicable, split
from .base import METHODS_VERSION, Family, Method, PassContext
from . import setting_readers
from .hu_levy import HU_LEVY
from .prompting import PROMPTS
from .readouts import READOUTS
from .syntaxgym import SYNTAXGYM
from .word_readouts import WORD_READOUTS

METHODS: dict[str, Method] = {}
READOUT_METHODS = [m.name for m in READOUTS]
PROMPT_METHODS = [m.name for m in PROMPTS]
HU_LEVY_METHODS = [m.name for m in HU_LEVY]
WORD_METHODS = [m.name for m in WORD_READOUTS]  # by name on any dataset of sentences or pairs, like lp


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


for _m in READOUTS + PROMPTS + HU_LEVY + SYNTAXGYM + WORD_READOUTS:
    register(_m)


def get(name: str) -> Method:
    if name not in METHODS:
        raise KeyError(f"unknown method {name!r}; choose from: {', '.join(METHODS)}")
    return METHODS[name]


def families() -> list[Family]:
    """The families of the registered methods, in registration order."""
    return list(dict.fromkeys(m.family for m in METHODS.values()))


def settings_table() -> str:
    """Every setting: name, what "auto" is, what it takes, and who reads it (for a method setting, the
    registered families and methods that read it)."""
    return setting_readers.table(METHODS.values())


def applicable(methods, scorer) -> tuple[list[str], pd.DataFrame]:
    """The names among ``methods`` (a list, "a,b" or "all") that ``scorer`` can run, and a frame
    (model, method, not_applicable) of the others with the reason (a scorer feature they need)."""
    return split(method_names(methods), scorer, get)


def method_names(selection, all_of: list[str] | None = None) -> list[str]:
    """Method names from "all" (of ``all_of``, default every method), "lp,meanlp" or a list."""
    return parse_list(selection, list(all_of or METHODS) if selection == "all" else list(METHODS),
                           what="method")


__all__ = ["HU_LEVY_METHODS", "METHODS", "METHODS_VERSION", "PROMPT_METHODS", "READOUT_METHODS", "WORD_METHODS",
           "Family", "Method", "PassContext", "applicable", "families", "get", "method_names", "settings_table",
           "refuse_not_applicable", "register", "unregister"]
