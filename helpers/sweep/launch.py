"""Running a sweep's jobs: locally one after another, or as Slurm job arrays; either way an
analysis runs after the scoring jobs whose scores it reads (:mod:`.dependencies`)."""
from __future__ import annotations

import logging
from pathlib import Path

from .. import paths
from . import slurm as sweep_slurm
from .dependencies import in_order, waits_on
from .jobs import Job, clean_partials, finished
from .model_kernel import ModelKernels


class SweepFailed(RuntimeError):
    """Jobs of a local sweep failed or could not run; the others ran, and what they wrote stays."""

    def __init__(self, message: str, done: list[Path]):
        super().__init__(message)
        self.done = done


class SweepInterrupted(SweepFailed):
    """A local sweep stopped by Ctrl-C (SIGINT): the jobs finished before it are kept."""


def run(jobs: list[Job], executor: str = "local", resources: dict | None = None, wait: bool = False) -> list:
    """Run the jobs that are not finished yet, each analysis after the scoring jobs it reads.
    Locally: one after another, returning the executed notebooks; a job that fails does not stop
    the others, but the analyses that read its scores are not run, and a :class:`SweepFailed`
    at the end names both. On Slurm: the unfinished jobs that are not already queued or running,
    as job arrays with ``afterok`` dependencies (``resources`` from
    :func:`helpers.sweep.slurm.resources`), returning the submitted submitit jobs; ``wait``
    blocks until they leave the queue."""
    if executor not in ("local", "slurm"):
        raise ValueError(f"executor must be 'local' or 'slurm', got {executor!r}")
    root = paths.outputs()
    for tmp in clean_partials():
        print(f"removed a killed writer's temporary file: {tmp.relative_to(root.parent)}")
    todo = [j for j in jobs if not finished(j.output)]
    for j in jobs:
        if finished(j.output):
            print(f"skip (finished): {j.output.relative_to(root.parent)}")
    waits = waits_on(jobs)
    if executor == "local":
        return run_local(in_order(todo, waits), waits)
    return sweep_slurm.submit(todo, resources if resources is not None else sweep_slurm.resources(), wait=wait,
                              waits=waits)


def _how(failure) -> str:
    return failure if isinstance(failure, str) else "failed"


def _reason(err: Exception) -> str:
    """One line: a notebook cell's error (papermill's ename and evalue), else the exception."""
    if hasattr(err, "ename"):
        return f"{err.ename}: {err.evalue}"
    return f"{type(err).__name__}: {err}"


def run_local(jobs: list[Job], waits: dict[Path, list[Job]]) -> list[Path]:
    """Run ``jobs`` in their order; a job that waits on one that failed or was not run in this
    run is not run ("waiting for <job> which failed")."""
    root = paths.outputs()
    done, failed, lines = [], {}, []
    with ModelKernels() as kernels:  # one model's scoring notebooks in one kernel, the model loaded once
        _run_each(jobs, waits, kernels, root, done, failed, lines)
    if failed:
        first = next((e for e in failed.values() if isinstance(e, BaseException)), None)
        raise SweepFailed(f"{len(failed)} of {len(jobs)} job(s) did not finish (the other {len(done)} did and are "
                          "kept; running the sweep again runs only these):\n" + "\n".join(lines), done) from first
    return done


def _run_each(jobs, waits, kernels, root, done, failed, lines) -> None:
    for job in jobs:
        blocked = [d for d in waits.get(job.output, []) if d.output in failed]
        if blocked:
            why = f"waiting for {blocked[0].label} which {_how(failed[blocked[0].output])}"
            print(f"not run: {job.label}: {why}")
            failed[job.output] = "was not run"
            lines.append(f"not run: {job.label}: {why}")
            continue
        print(f"run: {job.label} -> {job.output.relative_to(root.parent)}")
        try:
            done.append(kernels.run(job))
        except KeyboardInterrupt:
            clean_partials()
            # papermill's cell task dies with the kernel; asyncio would print its traceback at exit, after this error
            logging.getLogger("asyncio").setLevel(logging.CRITICAL)
            raise SweepInterrupted(
                f"interrupted (Ctrl-C) while running {job.label}: the {len(done)} job(s) finished before it and the "
                f"score files it finished are kept; its notebook ({job.partial.name}) is never taken as finished. "
                "Run the same sweep again to run only what is missing.", done) from None
        except Exception as err:  # noqa: BLE001 -- reported below and raised at the end; the others still run
            print(f"failed: {job.label}: {_reason(err)}")
            failed[job.output] = err
            lines.append(f"failed: {job.label}: {_reason(err)}")
        clean_partials()
