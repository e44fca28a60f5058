"""Method options: each family declares the options it takes, with a default and a check.

``run_methods(..., options={"seed": 7, "fewshot": 4})`` passes one dictionary; every name
must be an option some family declares (a typo is an error that lists them), and each value
is checked by its option. Options of families that are not run are checked and then unused,
so a notebook may pass all of its settings whatever methods it runs; an option marked
``everywhere`` (few-shot examples) refuses a non-default value when a chosen method's family
does not take it. The checked values become the fields of the run's
:class:`helpers.methods.base.Runtime`, which the families read.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from ..settings import method_setting
from .templates import IDE_TEMPLATE_IDS


@dataclass(frozen=True)
class Option:
    """One option: its name (a field of Runtime), default, check (returns the value as used,
    or raises ValueError saying what to give) and a one-line description."""

    name: str
    default: object
    check: Callable[[object], object]
    help: str
    everywhere: bool = False  # a non-default value needs every chosen family to take it


def _templates(value) -> tuple:
    """Template ids (ints, Ide et al.) and Hu & Levy prompt types (names), as a tuple."""
    items = [value] if isinstance(value, (int, str)) else value
    if not isinstance(items, (list, tuple)) or not items or isinstance(items[0], bool):
        raise ValueError(f"templates must be template ids (1 to 5) and/or Hu & Levy prompt types, got {value!r}")
    return tuple(items)


def _instruct(value) -> bool | None:
    return method_setting("instruct", value)  # the one check (helpers.settings); None: the model's own


# Options every family takes: which templates to run, and whether prompts use the chat template.
TEMPLATES = Option("templates", IDE_TEMPLATE_IDS, _templates,
                   "template ids (Ide et al., 1 to 5) and Hu & Levy prompt types (all when none is named)")
INSTRUCT = Option("instruct", None, _instruct, "chat templates for prompts (None or 'auto': the model's registry "
                                                "entry, else whether its tokenizer has a chat template)")
COMMON = (TEMPLATES, INSTRUCT)


def owners(families: Iterable) -> dict[str, list[str]]:
    """Option name -> the families that declare it (the common options: every family)."""
    out: dict[str, list[str]] = {o.name: ["every method"] for o in COMMON}
    for family in families:
        for option in family.options:
            out.setdefault(option.name, []).append(family.name)
    return out


def declared(families: Iterable) -> dict[str, Option]:
    """Every option the families declare, by name, with the common ones."""
    out = {o.name: o for o in COMMON}
    for family in families:
        out.update((o.name, o) for o in family.options)
    return out


def checked_options(given: Mapping | None, chosen: Iterable, registered: Iterable) -> dict:
    """The value of every option the ``registered`` families declare: ``given`` checked by its
    option, the defaults elsewhere. An unknown name, or an ``everywhere`` option given a
    non-default value while the family of a ``chosen`` method does not take it, is a clear error."""
    if given is not None and not isinstance(given, Mapping):
        raise TypeError(f"options must be a dict of option name -> value, e.g. {{'templates': [1]}}, got {given!r}")
    given = dict(given or {})
    registered, chosen = list(registered), list(chosen)
    options = declared(registered)
    unknown = sorted(set(given) - set(options))
    if unknown:
        table = "; ".join(f"{name} ({', '.join(fams)})" for name, fams in sorted(owners(registered).items()))
        raise ValueError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"the options (and the methods that take them) are: {table}")
    values = {}
    for name, option in options.items():
        values[name] = option.check(given[name]) if name in given else option.check(option.default)
        if option.everywhere and name in given and values[name] != option.check(option.default):
            refused = sorted(m.name for m in chosen if option not in m.family.options)
            if refused:
                raise ValueError(f"{name}={given[name]!r} ({option.help}) applies to the methods of "
                                 f"{', '.join(owners(registered)[name])} only; run {', '.join(refused)} with "
                                 f"{name}={option.default!r} (or leave them out)")
    return values
