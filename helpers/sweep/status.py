"""What each job of a sweep is doing: done, running, pending, waiting (on the scoring jobs it
reads), failed, cancelled (its scoring job failed), or not run yet.

Read from three places: the executed notebook (done when papermill finished it without an
exception; the cell error of a failed run is in its ``.running.ipynb``), Slurm (squeue while
queued or running, sacct/scontrol for how an ended job ended) with submitit's folder (the
task's log and result pickle), and the score store (how many score files of the job's
dataset and model are there, how many of them are stale: written under another numerics key,
so a rerun recomputes them, and temporary files that a killed writer left). An analysis also
shows the scoring jobs it waits on (:mod:`helpers.sweep.dependencies`), with the Slurm job ids
it was submitted after.
"""
from __future__ import annotations

import json
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from .. import paths
from . import jobs as sweep
from . import slurm as sweep_slurm
from .dependencies import waits_on
from ..score_files import is_stale
from ..store import read_metadata, safe_name

LOG_MARKERS = re.compile(r"CANCELLED|DUE TO TIME LIMIT|NODE FAIL|PREEMPT|oom|Out Of Memory|Killed|Error|error")


@dataclass
class JobStatus:
    job: sweep.Job
    state: str  # done, running, pending, waiting, failed, cancelled, not run, unknown
    job_id: str | None = None
    log: str | None = None
    error: str | None = None
    score_files: int = 0
    temp_files: int = 0
    stale_files: int = 0
    waits_on: str = ""  # the scoring jobs it reads, with the job ids it was submitted after


def cell_error(notebook: Path) -> str | None:
    """The error of the cell that failed in a notebook papermill ran: "cell In [N]: Name: message"
    (N: its execution count, as the notebook shows it)."""
    try:
        nb = json.loads(notebook.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if out.get("output_type") == "error":
                return f"cell In [{cell.get('execution_count')}]: {out.get('ename')}: {out.get('evalue')}".strip()
    return None


def result_error(folder: str, job_id: str) -> str | None:
    """The last line of the traceback that submitit pickled for a task that raised."""
    path = Path(folder) / f"{job_id}_0_result.pkl"
    try:
        outcome, value = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None
    if outcome != "error":
        return None
    lines = [line for line in str(value).splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


def log_error(log: str | None) -> str | None:
    """The last line of a task's stderr log that says how it was stopped (slurmstepd's
    "*** JOB 7 ON node CANCELLED ...", "... DUE TO TIME LIMIT ***", ...), else the last that
    says what failed."""
    try:
        lines = Path(log).read_text(errors="replace").splitlines() if log else []
    except OSError:
        return None
    slurm = [line.strip() for line in lines if "***" in line]  # slurmstepd: "*** JOB 7 ON node CANCELLED AT ..."
    marked = slurm or [line.strip() for line in lines if LOG_MARKERS.search(line)]
    return marked[-1][:300] if marked else None


def _stale(path: Path) -> bool:
    try:
        return is_stale(read_metadata(path))
    except (ValueError, OSError):
        return False  # unreadable: a rerun sets it aside; not a stale file


def store_counts(job: sweep.Job) -> tuple[int, int, int]:
    """Score files (of the job's shard, for a sharded job), temporary files and stale score
    files in the store folder of the job's dataset and model."""
    if job.model == sweep.NO_MODEL:
        return 0, 0, 0
    folder = paths.scores() / safe_name(job.dataset) / safe_name(job.model)
    if not folder.is_dir():
        return 0, 0, 0
    scores = [p for p in folder.glob("*.parquet") if not p.name.startswith(".")]
    if job.shards > 1:
        scores = [p for p in scores if f"__shard{job.shard}of{job.shards}" in p.name]
    return len(scores), len(list(folder.glob(".*.tmp"))), sum(_stale(p) for p in scores)


def status(jobs: list[sweep.Job]) -> list[JobStatus]:
    """The state of every job (see the module's docstring)."""
    live = sweep_slurm.queue()
    waits = waits_on(jobs)
    rows = {}
    for job in jobs:
        rec = sweep_slurm.read_record(job)
        row = JobStatus(job, "not run", rec.job_id if rec else None, rec.stderr if rec else None)
        row.score_files, row.temp_files, row.stale_files = store_counts(job)
        row.waits_on = waits_text(waits[job.output], job, rec)
        if sweep.finished(job.output):
            row.state = "done"
        elif rec is None:
            error = cell_error(job.partial) if job.partial.is_file() else None
            if error:  # a local run that failed
                row.state, row.error = "failed", error
        elif live is None:
            row.state, row.error = "unknown", "squeue does not answer here: run --status where Slurm is"
        elif rec.job_id in live:
            row.state, row.error = queued_state(*live[rec.job_id], rec.job_id)
        else:
            row.state = "failed"
            row.error = failure(job, rec)
            if "DependencyNeverSatisfied" in row.error:  # Slurm cancelled it: a job it ran after failed
                row.state, row.error = "cancelled", scoring_failed(rec, jobs)
        rows[job.output] = row
    for row in rows.values():
        if row.state == "not run":
            row.error = blocked_by([rows[d.output] for d in waits[row.job.output]])
    return list(rows.values())


def queued_state(state: str, reason: str, job_id: str) -> tuple[str, str | None]:
    """The state of a job in squeue, and a note: pending on a dependency is "waiting"."""
    if state in sweep_slurm.RUNNING:
        return "running", None
    if reason == "Dependency":
        return "waiting", None
    if reason == "DependencyNeverSatisfied":  # submitted without kill-on-invalid-dep elsewhere
        return "waiting", f"never starts: a job it waits on failed; scancel {job_id}, then resubmit"
    return "pending", None if state == "PENDING" else state


def waits_text(scoring: list[sweep.Job], job: sweep.Job, rec: sweep_slurm.Record | None) -> str:
    """The scoring jobs an analysis reads, each with the Slurm job id it was submitted after."""
    after = {stem: jid for jid, stem in (rec.waits_on if rec else {}).items()}
    parts = []
    for d in scoring:
        name = d.notebook.stem + (f" {d.model}" if d.model != job.model else "") + \
            (f" {d.shard}/{d.shards}" if d.shards > 1 else "")
        parts.append(f"{name} ({after[d.output.stem]})" if d.output.stem in after else name)
    return ", ".join(parts)


def blocked_by(scoring: list[JobStatus]) -> str | None:
    """Why an analysis that did not run did not: "waiting for <job> which failed"."""
    for row in scoring:
        if row.state in ("failed", "cancelled"):
            return f"waiting for {row.job.label} which {row.state}"
    return None


def scoring_failed(rec: sweep_slurm.Record, jobs: list[sweep.Job]) -> str:
    """Why Slurm cancelled a job: which of the tasks it ran after (afterok) did not complete, each
    named by the notebooks of that task that did not finish (a model's task runs several)."""
    ended = {jid: sweep_slurm.final_state(jid) for jid in rec.waits_on}
    failed = []
    for jid, stem in rec.waits_on.items():
        if ended[jid] and not ended[jid].startswith("COMPLETED"):
            ran = [j.output.stem for j in jobs if not sweep.finished(j.output)
                   and (record := sweep_slurm.read_record(j)) is not None and record.job_id == jid]
            failed.append(f"{', '.join(ran) or stem} (job {jid}: {ended[jid]})")
    return "its scoring job failed: " + (", ".join(failed) or "Slurm: DependencyNeverSatisfied")


def failure(job: sweep.Job, rec: sweep_slurm.Record) -> str:
    """Why a job that left the queue did not finish its notebook."""
    parts = []
    slurm = sweep_slurm.final_state(rec.job_id)
    if slurm and not slurm.startswith("COMPLETED"):
        parts.append(f"Slurm: {slurm}")
    error = (cell_error(job.partial) if job.partial.is_file() else None) or result_error(rec.folder, rec.job_id)
    if error:
        parts.append(error)
    logged = log_error(rec.stderr)
    if logged and (not error or "***" in logged):  # slurmstepd's line says who stopped the job
        parts.append(logged)
    # submitit has Slurm send SIGUSR2 90 s before the limit, then stops the task ("timed-out"); a task
    # that gets the signal before submitit's handler is set dies of it ("User defined signal 2")
    if any(mark in p for p in parts for mark in ("timed-out", "DUE TO TIME LIMIT", "User defined signal 2")):
        parts.append("past its --time (submitit stops a task 90 s before it): resubmit with a longer --time; the "
                     "score files it finished are kept")
    return "; ".join(parts) or "ended without finishing its notebook (no error recorded)"


def format_status(rows: list[JobStatus]) -> str:
    """A table of the jobs and a line of counts."""
    root = paths.outputs().parent

    def short(path: str | None) -> str:
        if not path:
            return ""
        try:
            return str(Path(path).relative_to(root))
        except ValueError:
            return path

    table = [[r.job.notebook.stem, r.job.model, r.job.dataset, f"{r.job.shard}/{r.job.shards}" if r.job.shards > 1
              else "", r.state, r.job_id or "", r.waits_on, r.score_files, r.stale_files or "", short(r.log),
              (r.error or "")[:200]] for r in rows]
    counts = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    text = tabulate(table, headers=["notebook", "model", "dataset", "shard", "state", "job", "waits on",
                                    "score files", "stale", "log", "error"], tablefmt="simple")
    summary = f"{len(rows)} jobs: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    temp = sum(r.temp_files for r in {(r.job.dataset, r.job.model): r for r in rows}.values())
    if temp:
        summary += f"; {temp} temporary file(s) of killed writers in the store (never read; removed when a run " \
                   "finishes their file)"
    stale = sum(r.stale_files for r in {(r.job.dataset, r.job.model): r for r in rows}.values())
    if stale:
        summary += f"; {stale} stale score file(s), written by another engine numerics version or torch/transformers: " \
                   "the next run of their jobs recomputes them (HELPERS_REUSE_STALE=1 reuses them instead)"
    return f"{text}\n{summary}"
