"""A sweep on a real single-node Slurm cluster (tests/slurm/cluster.sh): one job array of one task
per model (its notebooks in one kernel, the model loaded once), a task cancelled while it runs,
--status, and a resubmission that runs only that task's notebooks."""
from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from helpers import sweep
from helpers.sweep import slurm as sweep_slurm
from helpers.sweep import status as sweep_status
from helpers.cli import main
from helpers.models.tiny import ensure

pytestmark = pytest.mark.slurm

MODELS, DATASETS = ["tiny-gpt2", "tiny-llama"], ["blimp", "climp"]
SWEEP = ["sweep", "--notebooks", "02", "03", "--models", *MODELS, "--datasets", *DATASETS,
         "-p", "limit=1", "-p", "templates=1", "-p", "02:methods=lp",
         "-p", "03:methods=yesno", "-p", "03:hu_levy_sets=none", "-p", "03:fewshot_ks=[]"]
SUBMIT = [*SWEEP, "--executor", "slurm", "--profile", "slurm-local"]


def squeue() -> dict[str, str]:
    return sweep_slurm.live_states()


def cells_done(notebook: Path) -> int:
    """Cells papermill has finished in a notebook it is running (0 until it is written)."""
    try:
        cells = json.loads(notebook.read_text())["cells"]
    except (OSError, ValueError, KeyError):
        return 0
    return sum(c.get("metadata", {}).get("papermill", {}).get("status") == "completed" for c in cells)


def test_cluster_is_up(slurm_cluster):
    out = subprocess.run(["sinfo", "-h", "-o", "%P %t %c"], capture_output=True, text=True, check=True).stdout
    partition, state, cpus = out.split()
    assert partition == "local*" and state in ("idle", "mix", "alloc") and int(cpus) >= 1


def test_sweep_array_cancel_status_resubmit(slurm_cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    for name in MODELS:
        ensure(name)  # built once here, not by two tasks at once
    jobs = sweep.plan(["02", "03"], MODELS, DATASETS, {"limit": 1, "templates": 1, "02:methods": "lp",
                                                       "03:methods": "yesno", "03:hu_levy_sets": "none",
                                                       "03:fewshot_ks": []})
    assert len(jobs) == 8
    victim = jobs[2]  # 02 on tiny-llama, blimp: the first notebook of tiny-llama's task
    assert (victim.notebook.stem, victim.model, victim.dataset) == ("02_readout", "tiny-llama", "blimp")
    victim_scores = tmp_path / "outputs" / "scores" / "blimp" / "tiny-llama"
    llama = [j for j in jobs if j.model == "tiny-llama"]

    # one submission = one job array of one task per model, both running at once
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    assert "submitted 2 task(s) as Slurm job" in out
    ids = [sweep_slurm.read_record(j).job_id for j in jobs]
    array = ids[0].split("_")[0]
    assert ids == [f"{array}_{0 if j.model == 'tiny-gpt2' else 1}" for j in jobs]
    first = sweep_status.status(jobs)
    assert {r.state for r in first} <= {"pending", "running", "done"}

    # cancel tiny-llama's task while it runs its first notebook: title, parameters and injected cells done,
    # its scores not written yet
    deadline = time.monotonic() + 150
    while not (squeue().get(ids[2]) == "RUNNING" and cells_done(victim.partial) >= 3
               and not (victim_scores / "lp.parquet").exists()):
        assert time.monotonic() < deadline, f"task {ids[2]} did not start: {squeue()}"
        time.sleep(0.2)
    subprocess.run(["scancel", ids[2]], check=True)
    sweep_slurm.wait_for([ids[2]], poll_s=0.5, timeout_s=60)
    assert not (victim_scores / "lp.parquet").exists(), "the cancel came after the victim's scores were written"
    sweep_slurm.wait_for(ids, poll_s=2, timeout_s=300)

    rows = {(r.job.notebook.stem[:2], r.job.model, r.job.dataset): r for r in sweep_status.status(jobs)}
    failed = rows[("02", "tiny-llama", "blimp")]
    assert failed.state == "failed"
    assert "Slurm: CANCELLED" in failed.error
    assert failed.log == str(tmp_path / "outputs" / "slurm" / ids[2] / f"{ids[2]}_0_log.err")
    # slurmstepd names an array task by its own job number
    assert re.search(r"\*\*\* JOB \d+ ON \S+ CANCELLED AT", Path(failed.log).read_text())
    assert re.search(r"; slurmstepd\S*: error: \*\*\* (JOB|STEP) [\d.]+ ON \S+ CANCELLED AT", failed.error)
    assert [k for k, r in rows.items() if r.state != "done"] == [(j.notebook.stem[:2], j.model, j.dataset) for j in llama]
    assert main([*SWEEP, "--status"]) == 0
    table = capsys.readouterr().out
    assert re.search(r"02_readout\s+tiny-llama\s+blimp\s+failed\s+" + re.escape(ids[2]), table)
    assert "8 jobs: 4 done, 4 failed" in table
    gpt2 = [j for j in jobs if j.model == "tiny-gpt2"]  # its task: one load, the others handed the built scorer
    assert [_said(j.output, "tiny-gpt2") for j in gpt2] == ["loaded", "kept", "kept", "kept"]

    # resubmit: only the cancelled task's notebooks run again, in one task
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "outputs").rglob("*")
              if p.is_file() and ("scores" in p.parts or p.suffix == ".ipynb") and ".scorers" not in p.parts}
    resubmitted = time.time_ns()
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    assert "submitted 1 task(s)" in out and out.count("skip (finished)") == 4
    again = sweep_slurm.read_record(victim)
    assert again.earlier == [ids[2]] and again.job_id != ids[2]
    assert {sweep_slurm.read_record(j).job_id for j in llama} == {again.job_id}
    sweep_slurm.wait_for([again.job_id], poll_s=2, timeout_s=200)

    assert [r.state for r in sweep_status.status(jobs)] == ["done"] * 8
    assert main([*SWEEP, "--status"]) == 0
    assert "8 jobs: 8 done" in capsys.readouterr().out
    assert [_said(j.output, "tiny-llama") for j in llama] == ["loaded", "kept", "kept", "kept"]
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "outputs").rglob("*")
             if p.is_file() and ("scores" in p.parts or p.suffix == ".ipynb") and ".scorers" not in p.parts}
    changed = sorted(str(p.relative_to(tmp_path / "outputs")) for p in after if before.get(p) != after[p])
    assert changed == sorted([*(f"notebooks/{j.output.name}" for j in llama), "scores/blimp/tiny-llama/lp.parquet",
                              "scores/blimp/tiny-llama/yesno__t1.parquet", "scores/climp/tiny-llama/lp.parquet",
                              "scores/climp/tiny-llama/yesno__t1.parquet"])
    assert (victim_scores / "lp.parquet").stat().st_mtime_ns > resubmitted
    forward = re.search(r"forward passes this run: (\d+)", json.dumps(json.loads(victim.output.read_text())))
    assert int(forward.group(1)) > 0  # computed once more
    # nothing half-written or unfinished is left
    assert not list((tmp_path / "outputs").rglob("*.tmp")) and not list((tmp_path / "outputs").rglob("*.running.ipynb"))


def _said(notebook: Path, model: str) -> str:
    """Whether the notebook loaded ``model`` ("loaded") or was handed it by its kernel ("kept")."""
    text = json.dumps(json.loads(notebook.read_text()))
    return "loaded" if f"loaded {model} (" in text else "kept" if f"{model} is loaded already" in text else "neither"
