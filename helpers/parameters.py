"""A notebook's injected parameters checked against the names it knows: its own parameters and,
in a notebook that scores or reads scores, every setting of :data:`helpers.settings.TABLE`.

papermill runs a notebook with the parameters it is given (``-p name value``) in a cell of its own,
right after the cell tagged "parameters", and only warns about a name that cell does not assign, so
a misspelt ``-p limt 7`` would run with every pair. In the kernel both cells are in the input
history (IPython's ``In``): :func:`check_injected` compares the injected names with the notebook's
parameters and the settings, and stops on any other with the nearest known name. A setting needs
no line in the parameters cell (a cell may show some; it never gates one): the table decides which
settings exist. A notebook run by hand (JupyterLab) has no injected cell: nothing to check.
Every notebook passes here first, so here too a notebook's warnings become plain notes
(:func:`warnings_as_notes`).
"""
from __future__ import annotations

import ast
import difflib
import warnings
from typing import Mapping

from .settings import NAMES, TABLE

INJECTED = "# Parameters\n"  # how papermill opens the cell it injects


def assigned(source: str) -> list[str]:
    """The names a cell's source assigns at its top level, in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def injected(namespace: Mapping) -> tuple[list[str], list[str]]:
    """(the names papermill injected, the names the parameters cell assigns), from the input
    history; both empty in a notebook run by hand."""
    history = [cell for cell in namespace.get("In", []) if isinstance(cell, str)]
    for at, cell in enumerate(history):
        if cell.startswith(INJECTED) and at > 0:
            return assigned(cell), assigned(history[at - 1])
    return [], []


def check_injected(namespace: Mapping, settings: bool = True) -> None:
    """A clear error where papermill injected a name that is neither a parameter the notebook's
    parameters cell declares nor, where ``settings`` (a notebook that scores or reads scores), a
    setting (``namespace``: the notebook's ``globals()``, whose ``In`` is the input history)."""
    warnings_as_notes(namespace)
    given, declared = injected(namespace)
    known = [*declared, *(name for name in NAMES if settings and name not in declared)]
    unknown = [name for name in given if name not in known]
    if declared and unknown:
        near = {name: difflib.get_close_matches(name, known, n=1, cutoff=0.6) for name in unknown}
        hint = "; ".join(f"{name!r}: did you mean {near[name][0]!r}?" for name in unknown if near[name])
        raise ValueError(f"this notebook has no parameter {', '.join(map(repr, unknown))} (papermill injected "
                         f"{'it' if len(unknown) == 1 else 'them'}{'; ' + hint if hint else ''}): its parameters are "
                         f"{', '.join(declared)}" + (f"; and every setting: {', '.join(n for n in TABLE if n not in declared)}"
                                                      if settings else " (it takes no setting)"))


def _as_note(message, category, filename, lineno, line=None) -> str:
    return f"note: {message}\n"


def warnings_as_notes(namespace: Mapping) -> None:
    """In a notebook (``namespace`` holds IPython's input history), each warning prints as one plain
    line, "note: <message>", without the source path and line of code that raised it."""
    if "In" in namespace:
        warnings.formatwarning = _as_note
