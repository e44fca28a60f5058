"""Run notebooks headlessly over (notebook x model x dataset) with papermill.

Executed notebooks go to ``outputs/notebooks/<notebook>__<model>__<dataset>.ipynb``; a
combination whose executed notebook finished without error is skipped on the next run.
Locally the jobs run one after another; ``executor="slurm"`` submits each one to a Slurm
cluster through submitit. Every parameter a job injects must be declared in the notebook's
parameters cell (papermill itself would only warn and run the defaults).
"""
from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

import papermill as pm

from . import paths
from .results import safe_name

NO_MODEL = "none"  # notebooks that take no model (01_data_prep)


def declared_parameters(notebook: Path) -> set[str]:
    """The names assigned in the notebook's cell tagged "parameters"."""
    return set(pm.inspect_notebook(str(notebook)))


@dataclass(frozen=True)
class Job:
    notebook: Path
    model: str
    dataset: str
    parameters: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def output(self) -> Path:
        parts = [self.notebook.stem] + [p for p in (self.model, self.dataset) if p != NO_MODEL]
        # the extra parameters are part of the name, so a run with other settings is not skipped
        parts += [f"{k}-{_short(v)}" for k, v in sorted(self.parameters.items())]
        return paths.outputs() / "notebooks" / (safe_name("__".join(parts)) + ".ipynb")

    def papermill_parameters(self) -> dict:
        """The parameters injected into the notebook: the extra ones, ``model``, and ``dataset``
        (or ``datasets``, a one-item list, for a notebook that takes several). An error names
        any that the notebook does not declare."""
        declared = declared_parameters(self.notebook)
        params = dict(self.parameters)
        if self.model != NO_MODEL:
            params["model"] = self.model
        if self.dataset not in (NO_MODEL, "all"):
            if "datasets" in declared and "dataset" not in declared:
                params["datasets"] = [self.dataset]
            else:
                params["dataset"] = self.dataset
        unknown = sorted(set(params) - declared)
        if unknown:
            raise ValueError(f"{self.notebook.name} has no parameter {', '.join(unknown)} "
                             f"(its parameters: {', '.join(sorted(declared))})")
        return params

    def run(self) -> Path:
        params = self.papermill_parameters()
        self.output.parent.mkdir(parents=True, exist_ok=True)
        partial = self.output.with_name(self.output.stem + ".running.ipynb")
        pm.execute_notebook(str(self.notebook), str(partial), parameters=params, cwd=str(self.notebook.parent),
                            progress_bar=False)
        partial.replace(self.output)
        return self.output


def _short(value) -> str:
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= 40 else text[:32] + "-" + hashlib.sha256(text.encode()).hexdigest()[:6]


def find_notebook(prefix: str) -> Path:
    """The notebook whose file name starts with ``prefix`` (e.g. "02")."""
    matches = sorted(paths.NOTEBOOKS.glob(f"{prefix}*.ipynb"))
    if len(matches) != 1:
        available = ", ".join(p.name for p in sorted(paths.NOTEBOOKS.glob("*.ipynb"))) or "none"
        raise FileNotFoundError(f"no single notebook starts with {prefix!r} in {paths.NOTEBOOKS} "
                                f"(available: {available})")
    return matches[0]


def finished(path: Path) -> bool:
    """Whether an executed notebook exists and ran to the end without an exception."""
    if not path.is_file():
        return False
    try:
        meta = json.loads(path.read_text())["metadata"].get("papermill", {})
    except (json.JSONDecodeError, KeyError):
        return False
    return meta.get("exception") is False or (meta.get("exception") is None and meta.get("end_time") is not None)


def plan(notebooks: list[str], models: list[str], datasets: list[str], parameters: dict | None = None) -> list[Job]:
    """Every (notebook, model, dataset) job; an error before anything runs when a notebook lacks
    a parameter that its job would inject."""
    jobs = [Job(find_notebook(nb), m, d, parameters or {})
            for nb, m, d in itertools.product(notebooks, models, datasets)]
    for job in jobs:
        job.papermill_parameters()
    return jobs


def run(jobs: list[Job], executor: str = "local", slurm: dict | None = None) -> list[Path]:
    """Run the jobs that are not finished yet; returns the executed notebooks."""
    root = paths.outputs()
    todo = [j for j in jobs if not finished(j.output)]
    for j in jobs:
        if j not in todo:
            print(f"skip (finished): {j.output.relative_to(root.parent)}")
    if executor == "local":
        done = []
        for j in todo:
            print(f"run: {j.notebook.name} model={j.model} dataset={j.dataset} -> {j.output.relative_to(root.parent)}")
            done.append(j.run())
        return done
    if executor == "slurm":
        import submitit  # optional: only cluster runs need it

        ex = submitit.AutoExecutor(folder=str(root / "slurm"))
        ex.update_parameters(**(slurm or {"timeout_min": 240, "gpus_per_node": 1}))
        handles = [ex.submit(j.run) for j in todo]
        return [h.result() for h in handles]
    raise ValueError(f"executor must be 'local' or 'slurm', got {executor!r}")
