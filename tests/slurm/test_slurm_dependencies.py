"""Analyses after their scores on a real single-node Slurm cluster (tests/slurm/cluster.sh).

02 scores tiny-gpt2 on BLiMP and CLiMP in one task (one task per model: the model loads once); 05
reads those scores (it stops with MissingScoresError when they are not stored). The CLiMP data file
is broken first, so 02 on CLiMP fails while 02 on BLiMP finishes in the same task; the task fails and
Slurm cancels the two 05 waiting on it; with the file mended, a resubmission runs only the three that
did not finish, 05 on BLiMP at once and 05 on CLiMP wired to the new scoring task; an analysis
resubmitted alone, its scoring finished, waits on nothing."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from helpers import sweep
from helpers.cli import main
from helpers.data import load_processed, processed_path
from helpers.models.tiny import ensure
from helpers.sweep import slurm as sweep_slurm
from helpers.sweep import status as sweep_status

pytestmark = pytest.mark.slurm

MODEL = "tiny-gpt2"
PARAMETERS = {"02:limit": 1, "02:methods": "lp,meanlp", "02:templates": 1, "05:methods": "lp,meanlp",
              "05:gap": "lp,meanlp", "05:linking": "lp,meanlp", "05:resamples": 200}
SWEEP = ["sweep", "--notebooks", "02", "05", "--models", MODEL, "--datasets", "blimp", "climp",
         *[arg for key, value in PARAMETERS.items() for arg in ("-p", f"{key}={value}")]]
SUBMIT = [*SWEEP, "--executor", "slurm", "--profile", "slurm-local"]


def scontrol(job_id: str) -> dict[str, str]:
    """scontrol's fields of one job (Slurm keeps ended jobs for MinJobAge, an hour here)."""
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True).stdout
    return dict(field.split("=", 1) for field in out.split() if "=" in field)


def job_id(job: sweep.Job) -> str:
    return sweep_slurm.read_record(job).job_id


def test_analyses_wait_for_their_scoring_tasks(slurm_cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    ensure(MODEL)  # built once here, not by two tasks at once
    load_processed("blimp"), load_processed("climp")  # prepared from the mirror before the tasks start
    climp = processed_path("climp")
    mended = climp.read_bytes()
    climp.write_bytes(b"not a parquet file")  # 02 on CLiMP fails reading its pairs
    jobs = sweep.plan(["02", "05"], [MODEL], ["blimp", "climp"], PARAMETERS)
    score_blimp, score_climp, read_blimp, read_climp = jobs
    assert [(j.notebook.stem, j.dataset) for j in jobs] == [("02_readout", "blimp"), ("02_readout", "climp"),
                                                            ("05_length_bias", "blimp"), ("05_length_bias", "climp")]

    # the scoring as one task per model (02 on both datasets, the model loaded once); each analysis its own
    # job, afterok on that task
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    task = job_id(score_blimp)  # one task: a job of its own, not an array
    assert task == job_id(score_climp) and "_" not in task
    assert f"submitted 1 task(s) as Slurm job {task}\n" in out
    for analysis in (read_blimp, read_climp):
        assert f"submitted 1 task(s) as Slurm job {job_id(analysis)}, to start after {task} (afterok)\n" in out
        waiting = scontrol(job_id(analysis))
        assert (waiting["JobState"], waiting["Reason"]) == ("PENDING", "Dependency")
        assert waiting["Dependency"] == f"afterok:{task}(unfulfilled)"
        assert waiting["KillOInInvalidDependent"] == "Yes"
    assert sweep_slurm.read_record(read_climp).waits_on == {task: score_climp.output.stem}
    assert sweep_slurm.read_record(read_blimp).waits_on == {task: score_blimp.output.stem}
    rows = sweep_status.status(jobs)
    assert [(r.state, r.waits_on) for r in rows[2:]] == [("waiting", f"02_readout ({task})")] * 2
    assert main([*SWEEP, "--status"]) == 0
    table = capsys.readouterr().out
    assert re.search(rf"05_length_bias\s+{MODEL}\s+climp\s+waiting\s+{job_id(read_climp)}\s+02_readout "
                     rf"\({task}\)", table)

    first = {j.output: job_id(j) for j in jobs}
    sweep_slurm.wait_for(list(first.values()), poll_s=2, timeout_s=400)
    # 02 on CLiMP failed, 02 on BLiMP finished in the same task; the task failed, so both analyses were cancelled
    rows = sweep_status.status(jobs)
    assert [r.state for r in rows] == ["done", "failed", "cancelled", "cancelled"]
    assert rows[1].error.startswith("Slurm: FAILED (NonZeroExitCode); cell In [")
    for row in rows[2:]:
        assert row.error == f"its scoring job failed: {score_climp.output.stem} (job {task}: FAILED (NonZeroExitCode))"
    cancelled = scontrol(first[read_climp.output])
    assert (cancelled["JobState"], cancelled["Reason"]) == ("CANCELLED", "DependencyNeverSatisfied")
    assert cancelled["Dependency"] == f"afterok:{task}(failed)"
    assert not read_climp.partial.exists()  # it never started
    assert main([*SWEEP, "--status"]) == 0
    table = capsys.readouterr().out
    assert re.search(rf"05_length_bias\s+{MODEL}\s+climp\s+cancelled\s+{first[read_climp.output]}\s+02_readout "
                     rf"\({task}\)\s+0\s+\S+\s+its scoring job failed: 02_readout__{MODEL}__climp", table)
    assert "4 jobs: 2 cancelled, 1 done, 1 failed" in table

    # the data mended, a resubmission runs only the three that did not finish: 05 on BLiMP at once (its
    # scoring finished), 05 on CLiMP after the new 02 task
    climp.write_bytes(mended)
    finished = {score_blimp.output: score_blimp.output.stat().st_mtime_ns}
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    assert out.count("skip (finished)") == 1
    rescore, reread = job_id(score_climp), job_id(read_climp)
    assert job_id(read_blimp) == f"{rescore.split('_')[0]}_1"  # its own task, beside the scoring
    assert f"submitted 2 task(s) as Slurm job {rescore.split('_')[0]}\n" in out
    assert f"submitted 1 task(s) as Slurm job {reread}, to start after {rescore} (afterok)\n" in out
    assert sweep_slurm.read_record(score_climp).earlier == [task]
    again = sweep_slurm.read_record(read_climp)
    assert again.earlier == [first[read_climp.output]] and again.waits_on == {rescore: score_climp.output.stem}
    assert sweep_slurm.read_record(read_blimp).waits_on == {}
    assert scontrol(reread)["Dependency"] in (f"afterok:{rescore}(unfulfilled)", "(null)")  # (null): fulfilled
    sweep_slurm.wait_for([rescore, reread, job_id(read_blimp)], poll_s=2, timeout_s=300)
    assert [r.state for r in sweep_status.status(jobs)] == ["done"] * 4
    assert scontrol(reread)["StartTime"] >= scontrol(rescore)["EndTime"]
    assert {p: p.stat().st_mtime_ns for p in finished} == finished  # the finished one did not run again
    sidecar = json.loads((tmp_path / "outputs" / "tables" / "05_point_biserial__blimp.csv.json").read_text())
    assert sidecar["score_files"] == [f"scores/blimp/{MODEL}/lp.parquet", f"scores/blimp/{MODEL}/meanlp.parquet"]

    # an analysis resubmitted alone, its scoring finished: no dependency
    read_blimp.output.unlink()
    assert main(SUBMIT) == 0
    out = capsys.readouterr().out
    alone = job_id(read_blimp)
    assert out.count("skip (finished)") == 3 and f"submitted 1 task(s) as Slurm job {alone}\n" in out
    assert sweep_slurm.read_record(read_blimp).waits_on == {} and scontrol(alone)["Dependency"] == "(null)"
    sweep_slurm.wait_for([alone], poll_s=2, timeout_s=300)
    assert main([*SWEEP, "--status"]) == 0
    assert "4 jobs: 4 done" in capsys.readouterr().out
