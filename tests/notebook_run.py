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


def first_output(executed: dict) -> str:
    """The text the first code cell after the parameters (and papermill's injected ones) printed first."""
    for cell in executed["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and cell.get("outputs") and not {"parameters", "injected-parameters"} & set(tags):
            return "".join(next(o["text"] for o in cell["outputs"] if o.get("output_type") == "stream"))
    return ""
