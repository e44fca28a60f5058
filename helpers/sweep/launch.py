"""Running a sweep's jobs: locally one after another, or as one Slurm job array."""
from __future__ import annotations

from .. import paths
from . import slurm as sweep_slurm
from .jobs import Job, clean_partials, finished


def run(jobs: list[Job], executor: str = "local", resources: dict | None = None, wait: bool = False) -> list:
    """Run the jobs that are not finished yet. Locally: one after another, returning the executed
    notebooks. On Slurm: one job array of the unfinished jobs that are not already queued or
    running (``resources`` from :func:`helpers.sweep.slurm.resources`), returning the submitted
    submitit jobs; ``wait`` blocks until they leave the queue."""
    if executor not in ("local", "slurm"):
        raise ValueError(f"executor must be 'local' or 'slurm', got {executor!r}")
    root = paths.outputs()
    for tmp in clean_partials():
        print(f"removed a killed writer's temporary file: {tmp.relative_to(root.parent)}")
    todo = [j for j in jobs if not finished(j.output)]
    for j in jobs:
        if finished(j.output):
            print(f"skip (finished): {j.output.relative_to(root.parent)}")
    if executor == "local":
        done = []
        for j in todo:
            print(f"run: {j.label} -> {j.output.relative_to(root.parent)}")
            done.append(j.run())
            clean_partials()
        return done
    return sweep_slurm.submit(todo, resources if resources is not None else sweep_slurm.resources(), wait=wait)
