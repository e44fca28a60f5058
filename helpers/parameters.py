"""A notebook's injected parameters checked against the ones it declares.

papermill runs a notebook with the parameters it is given (``-p name value``) in a cell of its own,
right after the cell tagged "parameters", and only warns about a name that cell does not assign, so
a misspelt ``-p seeed 7`` would run with the default seed. In the kernel both cells are in the
input history (IPython's ``In``): :func:`check_injected` compares their names and stops with the
names the notebook takes. A notebook run by hand (JupyterLab) has no injected cell: nothing to check.
"""
from __future__ import annotations

import ast
from typing import Mapping

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


def check_injected(namespace: Mapping) -> None:
    """A clear error where papermill injected a parameter that the notebook's parameters cell does
    not declare (``namespace``: the notebook's ``globals()``, whose ``In`` is the input history)."""
    history = [cell for cell in namespace.get("In", []) if isinstance(cell, str)]
    for at, cell in enumerate(history):
        if not cell.startswith(INJECTED) or at == 0:
            continue
        declared = assigned(history[at - 1])
        unknown = [name for name in assigned(cell) if name not in declared]
        if declared and unknown:
            raise ValueError(f"this notebook has no parameter {', '.join(map(repr, unknown))} (papermill injected "
                             f"{'it' if len(unknown) == 1 else 'them'}; a misspelling?): its parameters are "
                             f"{', '.join(declared)}")
