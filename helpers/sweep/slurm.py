"""A sweep on Slurm: resource profiles, submitit job arrays (the analyses after their scoring), task records,
and job states read from Slurm itself.

Resources come from a small YAML profile (``profiles/<name>.yaml`` or a path; the default,
``slurm-gpu``, asks for one GPU per task) with command-line values over it. A submission
is one job array whose tasks are the unfinished jobs that wait on nothing, one task per model
(and shard) running its notebooks with the model loaded once (:mod:`.model_kernel`), then, for the analyses that read their scores, one job array per set of
scoring tasks they wait on (``--dependency=afterok:<array>_<task>...`` and
``--kill-on-invalid-dep=yes``: a failed scoring task cancels them;
:mod:`helpers.sweep.dependencies`). The job id of each task, and those it waits on, are
recorded in ``outputs/slurm/tasks/<executed notebook's name>.json``; submitit keeps its
pickles and logs in ``outputs/slurm/<job id>/``. States come from
``squeue`` while a job is queued or running and from ``sacct`` (where the cluster keeps
accounting) or ``scontrol`` (recent jobs) after it ended; no database is needed.
"""
from __future__ import annotations

import getpass
import json
import math
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from .. import paths
from ..files import write_text
from .dependencies import submit_in_waves
from .model_kernel import group_key, run_group

PROFILES = paths.ROOT / "profiles"
DEFAULT_PROFILE = "slurm-gpu"
PROFILE_KEYS = {
    "partition": "Slurm partition (sbatch --partition)",
    "account": "allocation to charge (sbatch --account)",
    "time": "wall time per task: minutes, HH:MM:SS or D-HH:MM:SS",
    "mem": "memory per task, e.g. 64G or 500M",
    "cpus": "CPU cores per task",
    "gpus": "GPUs per task (0: none)",
    "constraint": "node features (sbatch --constraint), e.g. a100|h100",
    "qos": "quality of service (sbatch --qos)",
    "array_parallelism": "tasks of the array that run at once",
    "setup": "shell lines run before each task, e.g. module load cuda",
}
RUNNING = {"RUNNING", "COMPLETING", "CONFIGURING", "STAGE_OUT", "SIGNALING"}


class SlurmUnavailableError(RuntimeError):
    """Slurm's commands are not on this machine."""


def profile_path(name: str | Path | None = None) -> Path:
    """A profile's file: a path to a YAML file, or a name in profiles/ (default slurm-gpu)."""
    name = DEFAULT_PROFILE if name is None else name
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no Slurm profile {path}")
        return path
    path = PROFILES / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(p.stem for p in sorted(PROFILES.glob("*.yaml"))) or "none"
        raise FileNotFoundError(f"no Slurm profile {name!r} in {PROFILES} (profiles: {known}); "
                                "give a name there or a path to a YAML file")
    return path


def load_profile(name: str | Path | None = None) -> dict:
    """The resources of a profile (keys: see PROFILE_KEYS); an unknown key is an error."""
    path = profile_path(name)
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a mapping of {', '.join(PROFILE_KEYS)}")
    unknown = sorted(set(data) - set(PROFILE_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; a profile takes "
                         + "; ".join(f"{k} ({v})" for k, v in PROFILE_KEYS.items()))
    return data


def resources(profile: str | Path | None = None, **overrides) -> dict:
    """A profile's resources with the given values over it (None leaves the profile's)."""
    unknown = sorted(set(overrides) - set(PROFILE_KEYS))
    if unknown:
        raise ValueError(f"unknown resource(s) {', '.join(unknown)}; known: {', '.join(PROFILE_KEYS)}")
    return {**load_profile(profile), **{k: v for k, v in overrides.items() if v is not None}}


def minutes(value) -> int:
    """Wall time in whole minutes (rounded up) from minutes (a number) or a Slurm time: M, M:S,
    H:M:S, D-H, D-H:M or D-H:M:S."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        total = float(value)
    else:
        match = re.fullmatch(r"(?:(\d+)-)?(\d+(?::\d+){0,2})", str(value).strip())
        if not match:
            raise ValueError(f"time must be minutes or a Slurm time such as 12:00:00 or 2-00:00:00, got {value!r}")
        days, parts = match.group(1), [int(x) for x in match.group(2).split(":")]
        if days is None:
            h, m, s = {1: (0, parts[0], 0), 2: (0, *parts), 3: tuple(parts)}[len(parts)]
        else:
            h, m, s = (parts + [0, 0])[:3]
        total = int(days or 0) * 1440 + h * 60 + m + s / 60
    if not total > 0:
        raise ValueError(f"time must be more than zero, got {value!r}")
    return math.ceil(total)


def executor_parameters(res: dict) -> dict:
    """submitit AutoExecutor parameters for these resources."""
    out = {"name": "helpers-sweep", "timeout_min": minutes(res.get("time", 60))}
    if res.get("mem") is not None:
        mem = str(res["mem"]).strip().upper()
        if not re.fullmatch(r"\d+(\.\d+)?[KMGT]?B?", mem):
            raise ValueError(f"mem must be a size such as 64G or 500M, got {res['mem']!r}")
        out["slurm_mem"] = mem.removesuffix("B")
    for key, param in (("cpus", "cpus_per_task"), ("gpus", "gpus_per_node"), ("array_parallelism",
                                                                            "slurm_array_parallelism")):
        value = res.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (value == 0 and key != "gpus"):
            raise ValueError(f"{key} must be a whole number{' >= 0' if key == 'gpus' else ' >= 1'}, got {value!r}")
        if value:
            out[param] = value
    for key in ("partition", "account", "constraint", "qos"):
        if res.get(key):
            out[f"slurm_{key}"] = str(res[key])
    if res.get("setup"):
        setup = res["setup"]
        out["slurm_setup"] = [setup] if isinstance(setup, str) else [str(line) for line in setup]
    return out


@dataclass
class Record:
    """The Slurm job of one sweep job's latest submission."""

    job_id: str
    submitted: str
    folder: str
    stdout: str
    stderr: str
    resources: dict = field(default_factory=dict)
    earlier: list = field(default_factory=list)  # job ids of earlier submissions
    waits_on: dict = field(default_factory=dict)  # job id -> executed notebook's stem, of the jobs it runs after


def record_path(job) -> Path:
    return paths.outputs() / "slurm" / "tasks" / (job.output.stem + ".json")


def read_record(job) -> Record | None:
    path = record_path(job)
    if not path.is_file():
        return None
    return Record(**json.loads(path.read_text()))


def _write_record(job, handle, res: dict, after: dict | None = None) -> Record:
    old = read_record(job)
    rec = Record(str(handle.job_id), time.strftime("%Y-%m-%dT%H:%M:%S%z"), str(handle.paths.folder),
                 str(handle.paths.stdout), str(handle.paths.stderr), res,
                 (old.earlier + [old.job_id]) if old else [],
                 {i: d.output.stem for i, d in (after or {}).items()})
    write_text(record_path(job), json.dumps(asdict(rec), indent=1))
    return rec


def _command(args: list[str], timeout: float = 60) -> str | None:
    """A Slurm command's output, or None when it is missing or fails."""
    if shutil.which(args[0]) is None:
        return None
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def queue() -> dict[str, tuple[str, str]] | None:
    """Job id (array tasks as ``<array>_<task>``) -> (state, reason) of this user's queued and
    running jobs (squeue; reason "Dependency": waiting on another job), or None where squeue
    does not answer."""
    out = _command(["squeue", "-h", "-r", "-u", getpass.getuser(), "-o", "%i|%T|%r"])
    if out is None:
        return None
    rows = [(line.split("|") + ["", ""])[:3] for line in out.splitlines() if "|" in line]
    return {jid.strip(): (state.strip(), reason.strip()) for jid, state, reason in rows}


def live_states() -> dict[str, str] | None:
    """Job id -> state of this user's queued and running jobs (:func:`queue`), or None."""
    found = queue()
    return None if found is None else {jid: state for jid, (state, _) in found.items()}


def final_state(job_id: str) -> str | None:
    """How an ended job ended (e.g. "CANCELLED", "TIMEOUT", "NODE_FAIL", "FAILED (NonZeroExitCode)"):
    sacct where the cluster keeps accounting, else scontrol while Slurm remembers the job."""
    out = _command(["sacct", "-X", "-n", "-P", "-o", "JobID,State,ExitCode,Reason", "-j", job_id])
    for line in (out or "").splitlines():
        jid, state, _, reason = (line.split("|") + ["", "", ""])[:4]
        if jid == job_id and state:
            return state.split()[0] + (f" ({reason})" if reason and reason != "None" else "")
    out = _command(["scontrol", "show", "job", "-o", job_id])
    match = re.search(r"JobState=(\S+)(?:.*? Reason=(\S+))?", out or "")
    if not match:
        return None
    reason = match.group(2)
    return match.group(1) + (f" ({reason})" if reason and reason != "None" else "")


def model_tasks(jobs: list) -> list[list]:
    """``jobs`` as Slurm tasks: the jobs of one model's kernel (:func:`.model_kernel.group_key`) one task,
    in their order; every other job a task of its own."""
    tasks: dict = {}
    for i, job in enumerate(jobs):
        key = group_key(job)
        tasks.setdefault(i if key is None else key, []).append(job)
    return list(tasks.values())


def submit(jobs: list, res: dict, wait: bool = False, waits: dict | None = None) -> list:
    """Submit the jobs that are not queued or running already: those that wait on nothing as
    one job array, then those that wait on scoring jobs (``waits``: job output -> the jobs it
    reads, :func:`helpers.sweep.dependencies.waits_on`) as one array per set of scoring tasks,
    each with ``afterok`` on exactly those tasks (submitted now, or already queued or running;
    a finished one is not waited on) and ``kill-on-invalid-dep``. Their records are written;
    ``wait`` blocks until they leave the queue. Returns the submitit jobs."""
    if shutil.which("sbatch") is None:
        raise SlurmUnavailableError("no Slurm on this machine (sbatch not found): submit from the cluster's login "
                                    "node, or start the test cluster (tests/slurm/cluster.sh start)")
    params = executor_parameters(res)
    live = live_states() or {}
    todo, queued = [], {}
    for job in jobs:
        rec = read_record(job)
        if rec and rec.job_id in live:
            print(f"already {live[rec.job_id].lower()}: {job.label} (job {rec.job_id})")
            queued[job.output] = rec.job_id
        else:
            todo.append(job)
    if not todo:
        print("nothing to submit")
        return []
    import submitit

    ex = submitit.AutoExecutor(folder=str(paths.outputs() / "slurm" / "%j"), cluster="slurm")
    handles = []

    def array(group: list, after: dict) -> list[str]:  # one job array, after the jobs ``after`` names
        extra = {"dependency": "afterok:" + ":".join(after), "kill_on_invalid_dep": "yes"} if after else None
        ex.update_parameters(**params, slurm_additional_parameters=extra)
        tasks = model_tasks(group)  # one task per model (and shard): its notebooks share one load
        with ex.batch():
            submitted = [ex.submit(run_group, jobs) for jobs in tasks]
        ids = {}
        for jobs, handle in zip(tasks, submitted):
            for job in jobs:
                _write_record(job, handle, res, after)
                print(f"submitted: {job.label} (job {handle.job_id})")
                ids[job.output] = str(handle.job_id)
        then = f", to start after {', '.join(after)} (afterok)" if after else ""
        print(f"submitted {len(tasks)} task(s) as Slurm job {str(submitted[0].job_id).split('_')[0]}{then}")
        handles.extend(submitted)
        return [ids[job.output] for job in group]

    submit_in_waves(todo, waits or {}, queued, array)
    print(f"logs in {paths.outputs() / 'slurm'}")
    if wait:
        wait_for([str(h.job_id) for h in handles])
    return handles


def wait_for(job_ids: list[str], poll_s: float = 2.0, timeout_s: float | None = None) -> None:
    """Block until none of the jobs is queued or running."""
    start = time.monotonic()
    while True:
        live = live_states()
        if live is None:
            raise SlurmUnavailableError("squeue does not answer: cannot follow the jobs")
        if not any(j in live for j in job_ids):
            return
        if timeout_s is not None and time.monotonic() - start > timeout_s:
            raise TimeoutError(f"jobs {', '.join(j for j in job_ids if j in live)} still in the queue "
                               f"after {timeout_s:.0f} s")
        time.sleep(poll_s)
