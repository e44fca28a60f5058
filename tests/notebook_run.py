"""Runs a notebook headlessly for the tests, as papermill runs it in a sweep."""
from __future__ import annotations

import json

import papermill as pm

from helpers import paths


def run_notebook(name: str, out, **parameters) -> dict:
    """Execute ``notebooks/<name>`` with ``parameters`` into ``out``; the executed notebook as JSON."""
    pm.execute_notebook(str(paths.NOTEBOOKS / name), str(out), parameters=parameters,
                        cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    return json.loads(out.read_text())
