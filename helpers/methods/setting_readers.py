"""Which families and methods read which method settings: a view of the settings table, holding no values.

The method settings (templates, instruct, ab_seed, use_outlines, fewshot, penlp_alpha, unigram_corpus,
order_average, syntaxgym_pass) are fields of :class:`helpers.settings.Settings`, declared,
defaulted and checked there once; a family names the ones it reads in ``takes`` (templates and
instruct: every family) and reads them through its :class:`helpers.methods.base.PassContext`; a method
whose score reads a setting of its own (PenLP's ``penlp_alpha``) names it in its ``takes``. A
setting of families that are not run is checked and then unused, so a notebook passes all of
its settings whatever methods it runs; a setting in :data:`EVERYWHERE` (few-shot examples)
refuses a non-default value when a chosen method's family does not read it.
"""
from __future__ import annotations

from typing import Iterable

from ..settings import KINDS, METHOD_SETTINGS, TABLE, Settings, method_setting
from .hu_levy_prompt_types import PROMPT_TYPES
from .templates import IDE_TEMPLATE_IDS

COMMON = ("templates", "instruct")  # read by every family
EVERYWHERE = ("fewshot",)  # a non-default value needs every chosen method's family to read it


def owners(methods: Iterable) -> dict[str, list[str]]:
    """Method setting -> the families (a family's ``takes``) and methods (a method's own ``takes``,
    e.g. PenLP's alpha) of ``methods`` that read it (the common ones: every method)."""
    out: dict[str, list[str]] = {name: ["every method"] for name in COMMON}
    for method in methods:
        for reader, names in ((method.family.name, method.family.takes), (method.name, method.takes)):
            for name in names:
                if reader not in out.setdefault(name, []):
                    out[name].append(reader)
    return out


def template_ids(settings: Settings) -> tuple:
    """The templates a run selects: Ide et al.'s ids (1 to 5) and Hu & Levy prompt types as
    given, or every Ide et al. template under "auto" (Hu & Levy's families then run every prompt
    type); an unknown one is an error that lists them."""
    given = method_setting("templates", settings.templates)
    if given is None:
        return IDE_TEMPLATE_IDS
    known = (*IDE_TEMPLATE_IDS, *PROMPT_TYPES)
    unknown = [t for t in given if t not in known]
    if unknown:
        raise ValueError(f"unknown template{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"choose from: {', '.join(map(str, known))}")
    return given


def refuse_unread(settings: Settings, chosen: Iterable, registered: Iterable) -> None:
    """A clear error for an unknown template, or where a setting of :data:`EVERYWHERE` is given a
    non-default value while the family of a ``chosen`` method does not read it."""
    template_ids(settings)
    chosen, registered = list(chosen), list(registered)
    for name in EVERYWHERE:
        value = getattr(settings, name)
        if method_setting(name, value) in (METHOD_SETTINGS[name], None) or getattr(value, "k", 1) == 0:
            continue
        refused = sorted(m.name for m in chosen if name not in m.reads())
        if refused:
            raise ValueError(f"{name}={value!r} ({TABLE[name][0]}) applies to the methods of "
                             f"{', '.join(owners(registered)[name])} only; run {', '.join(refused)} with "
                             f"{name}={METHOD_SETTINGS[name]!r} (or leave them out)")


def table(methods: Iterable) -> str:
    """Every setting of the table, one line each: name, what "auto" is, what it takes, and who reads
    it (the families and methods of ``methods`` for a method setting; the model kinds a setting
    names in its declaration; else the loader or the engine of every kind)."""
    takers = owners(methods)

    def readers(name: str) -> str:
        if name in METHOD_SETTINGS:
            return ", ".join(takers.get(name, [])) or "no registered method"
        if name in KINDS:
            return f"{' and '.join(KINDS[name])} models only"
        return "the loader" if name in ("quant", "dtype", "revision") else "the engine, every model kind"
    return "\n".join(f"{name}='auto' ({TABLE[name][1]}): {TABLE[name][0]} ({readers(name)})" for name in TABLE)
