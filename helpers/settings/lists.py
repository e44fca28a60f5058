"""One parser for the selections users type in notebooks and on the command line:
"all", "a,b", "[1, 2]", a single value, or a list."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")


def parse_list(selection, choices: Sequence[T] | None = None, *, what: str = "name",
                    convert: Callable[[str], T] = str, none: Iterable = ()) -> list[T]:
    """The items of ``selection``: "all" (every one of ``choices``), a comma-separated string
    (brackets allowed), one value, or a list. Items not among ``choices`` are an error that
    lists them; an empty selection is an error too, unless it is one of ``none`` ("none")."""
    if selection is None or (isinstance(selection, str) and selection.strip().lower() in {"none", ""}):
        if "none" in none or None in none:
            return []
        raise ValueError(f"no {what} selected; choose from: {', '.join(map(str, choices or []))}")
    if isinstance(selection, str):
        text = selection.strip().strip("[]")
        if text.strip().lower() == "all":
            if choices is None:
                raise ValueError(f"'all' needs a list of {what}s to choose from")
            items = list(choices)
        else:
            items = [convert(part.strip().strip("'\"")) for part in text.split(",") if part.strip()]
    elif isinstance(selection, (list, tuple)):
        items = [convert(x) if isinstance(x, str) and convert is not str else x for x in selection]
    else:
        items = [selection]
    if not items:
        raise ValueError(f"no {what} selected in {selection!r}")
    if choices is not None:
        unknown = [x for x in items if x not in choices]
        if unknown:
            raise ValueError(f"unknown {what}{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                             f"choose from: {', '.join(map(str, choices))}")
    return items
