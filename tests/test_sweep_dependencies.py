"""Analyses wait for their scores: which scoring jobs of a sweep each analysis reads, the local
order and the skip of an analysis whose scoring failed, the Slurm submission waves (afterok on
exactly the tasks read), and what --status says. Fast: no notebook runs, no Slurm (the real
cluster is in tests/slurm/test_slurm_dependencies.py)."""
from __future__ import annotations

import json
import re

import pytest

from helpers import sweep
from helpers.cli import main
from helpers.sweep import slurm as sweep_slurm
from helpers.sweep import status as sweep_status
from helpers.sweep.dependencies import in_order, producers, submit_in_waves, waits_on
from helpers.sweep.model_kernel import ModelKernels
from helpers.sweep.jobs import ANALYSES


def short(job: sweep.Job) -> str:
    shard = f"/{job.shard}" if job.shards > 1 else ""
    return f"{job.notebook.stem[:2]} {job.model} {job.dataset}{shard}"


def mapping(jobs: list[sweep.Job]) -> dict[str, list[str]]:
    waits = waits_on(jobs)
    return {short(j): [short(d) for d in waits[j.output]] for j in jobs}


def test_analyses_wait_on_the_scoring_jobs_of_their_model_and_dataset():
    jobs = sweep.plan(["05", "02", "03", "04"], ["m1", "m2"], ["blimp", "climp"])
    expected = {f"{nb} {m} {d}": [] for nb in ("02", "03") for m in ("m1", "m2") for d in ("blimp", "climp")}
    for nb in ("04", "05"):  # by default both read Yes/No and A/B (03) and LP, in-template LP (02)
        expected.update({f"{nb} {m} {d}": [f"02 {m} {d}", f"03 {m} {d}"] for m in ("m1", "m2")
                         for d in ("blimp", "climp")})
    assert mapping(jobs) == expected
    # the methods a job reads decide: 05 on readouts only and 04 without prompting wait on 02 alone
    jobs = sweep.plan(["02", "03", "04", "05"], ["m1"], ["blimp"],
                      {"05:methods": "lp,meanlp", "05:gap": "lp,meanlp", "04:p_method": "meanlp",
                       "04:ab_method": None})
    assert mapping(jobs) == {"02 m1 blimp": [], "03 m1 blimp": [], "04 m1 blimp": ["02 m1 blimp"],
                             "05 m1 blimp": ["02 m1 blimp"]}
    assert [sorted(producers(j)) for j in jobs] == [[], [], ["02_readout"], ["02_readout"]]
    # a prompting-only analysis waits on 03 alone; with no scoring job in the sweep, on nothing
    jobs = sweep.plan(["02", "03", "05"], ["m1"], ["blimp"], {"05:methods": "yesno,ab", "05:gap": "yesno,ab_logit",
                                                               "05:linking": "none"})
    assert mapping(jobs)["05 m1 blimp"] == ["03 m1 blimp"]
    assert mapping(sweep.plan(["05"], ["m1"], ["blimp"])) == {"05 m1 blimp": []}


def test_a_sharded_sweep_runs_each_analysis_once_after_every_shard():
    jobs = sweep.plan(["02", "05"], ["m1"], ["blimp", "climp"], shards=3)
    assert [short(j) for j in jobs] == ["02 m1 blimp/1", "02 m1 blimp/2", "02 m1 blimp/3", "02 m1 climp/1",
                                        "02 m1 climp/2", "02 m1 climp/3", "05 m1 blimp", "05 m1 climp"]
    assert jobs[-1].output.name == "05_length_bias__m1__climp.ipynb"  # the whole run: no shard in its name
    assert mapping(jobs)["05 m1 blimp"] == ["02 m1 blimp/1", "02 m1 blimp/2", "02 m1 blimp/3"]
    assert mapping(jobs)["05 m1 climp"] == ["02 m1 climp/1", "02 m1 climp/2", "02 m1 climp/3"]
    # only analyses are left whole: a scoring notebook without shards is still an error
    with pytest.raises(ValueError, match=r"00_quickstart.ipynb has no parameter shard, shards"):
        sweep.plan(["02", "00"], ["m1"], ["blimp"], shards=2)


@pytest.mark.parametrize("stem", sorted(ANALYSES))
def test_the_analyses_declare_the_parameters_the_mapping_reads(stem):
    declared = sweep.declared_parameters(sweep.find_notebook(stem[:2]))
    assert set(ANALYSES[stem]) <= declared and {"model", "dataset"} <= declared


def test_local_order_puts_each_analysis_after_its_scoring():
    jobs = sweep.plan(["05", "03", "02"], ["m1"], ["blimp", "climp"])
    order = in_order(jobs, waits_on(jobs))
    assert [short(j) for j in order] == ["03 m1 blimp", "03 m1 climp", "02 m1 blimp", "02 m1 climp",
                                         "05 m1 blimp", "05 m1 climp"]


def test_a_local_sweep_skips_the_analysis_whose_scoring_failed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    ran = []

    def fake_run(job, km=None):  # the notebook: 02 on climp raises as a failing cell does
        ran.append(short(job))
        if short(job) == "02 m1 climp":
            raise ValueError("no pairs in climp")
        return finish(job)

    monkeypatch.setattr(sweep.Job, "run", fake_run)
    monkeypatch.setattr(ModelKernels, "_kernel", lambda kernels, key: None)  # no kernel for the fake notebooks
    monkeypatch.setattr(ModelKernels, "_start", lambda kernels, *args, **kwargs: None)  # (nor an analysis' own)
    jobs = sweep.plan(["05", "02"], ["m1"], ["blimp", "climp"])
    with pytest.raises(sweep.SweepFailed) as failed:
        sweep.run(jobs)
    assert ran == ["02 m1 blimp", "02 m1 climp", "05 m1 blimp"]  # scoring first; 05 on climp is not run
    assert str(failed.value) == (
        "2 of 4 job(s) did not finish (the other 2 did and are kept; running the sweep again runs only these):\n"
        "failed: 02_readout model=m1 dataset=climp: ValueError: no pairs in climp\n"
        "not run: 05_length_bias model=m1 dataset=climp: waiting for 02_readout model=m1 dataset=climp which failed")
    assert [p.name for p in failed.value.done] == ["02_readout__m1__blimp.ipynb", "05_length_bias__m1__blimp.ipynb"]
    assert isinstance(failed.value.__cause__, ValueError)
    out = capsys.readouterr().out
    assert ("not run: 05_length_bias model=m1 dataset=climp: waiting for 02_readout model=m1 dataset=climp "
            "which failed") in out

    # the rerun runs only what did not finish, in order; the CLI says so with exit status 1 while it fails
    ran.clear()
    assert main(["sweep", "--notebooks", "05", "02", "--models", "m1", "--datasets", "blimp", "climp"]) == 1
    assert ran == ["02 m1 climp"]
    assert "error: 2 of 2 job(s) did not finish" in capsys.readouterr().err
    monkeypatch.setattr(sweep.Job, "run", lambda job, km=None: ran.append(short(job)) or finish(job))  # fixed
    ran.clear()
    assert main(["sweep", "--notebooks", "05", "02", "--models", "m1", "--datasets", "blimp", "climp"]) == 0
    assert ran == ["02 m1 climp", "05 m1 climp"]
    assert capsys.readouterr().out.count("skip (finished)") == 2


def finish(job: sweep.Job):
    """The executed notebook of a job that ran to the end."""
    job.output.parent.mkdir(parents=True, exist_ok=True)
    job.output.write_text(json.dumps({"metadata": {"papermill": {"exception": False}}}))
    return job.output


class FakeSubmit:
    """Slurm's side of submit_in_waves: array k gets ids "<100+k>_<task>"; the calls are kept."""

    def __init__(self):
        self.calls = []

    def __call__(self, group, after):
        array = 100 + len(self.calls)
        self.calls.append(([short(j) for j in group], {i: short(d) for i, d in after.items()}))
        return [f"{array}_{i}" for i in range(len(group))]


def test_slurm_waves_wire_each_analysis_to_exactly_its_scoring_tasks():
    jobs = sweep.plan(["02", "03", "04", "05"], ["m1"], ["blimp", "climp", "li"])
    by = {short(j): j for j in jobs}
    waits = waits_on(jobs)
    # li's scoring finished (not to do), climp's 03 is already queued as job 7_3, the rest is to do
    todo = [j for j in jobs if j.dataset != "li" or j.notebook.stem[:2] in ("04", "05")]
    todo = [j for j in todo if short(j) != "03 m1 climp"]
    submit = FakeSubmit()
    ids = submit_in_waves(todo, waits, {by["03 m1 climp"].output: "7_3"}, submit)
    assert submit.calls == [
        (["02 m1 blimp", "02 m1 climp", "03 m1 blimp", "04 m1 li", "05 m1 li"], {}),  # li's analyses wait on nothing
        (["04 m1 blimp", "05 m1 blimp"], {"100_0": "02 m1 blimp", "100_2": "03 m1 blimp"}),
        (["04 m1 climp", "05 m1 climp"], {"100_1": "02 m1 climp", "7_3": "03 m1 climp"})]
    assert ids[by["05 m1 climp"].output] == "102_1" and ids[by["04 m1 li"].output] == "100_3"
    assert set(ids) == {j.output for j in todo}


def test_a_sharded_analysis_waits_on_every_shard_task():
    jobs = sweep.plan(["02", "05"], ["m1"], ["blimp"], shards=2)
    submit = FakeSubmit()
    submit_in_waves(jobs, waits_on(jobs), {}, submit)
    assert submit.calls == [(["02 m1 blimp/1", "02 m1 blimp/2"], {}),
                            (["05 m1 blimp"], {"100_0": "02 m1 blimp/1", "100_1": "02 m1 blimp/2"})]


@pytest.mark.parametrize("state, reason, expected", [
    ("PENDING", "Dependency", ("waiting", None)),
    ("PENDING", "DependencyNeverSatisfied", ("waiting", "never starts: a job it waits on failed; scancel 9_0, "
                                                        "then resubmit")),
    ("PENDING", "Priority", ("pending", None)),
    ("SUSPENDED", "None", ("pending", "SUSPENDED")),
    ("RUNNING", "None", ("running", None)),
])
def test_queue_states(state, reason, expected):
    assert sweep_status.queued_state(state, reason, "9_0") == expected


def test_status_of_a_local_sweep_whose_scoring_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    monkeypatch.setattr(sweep_slurm, "queue", lambda: None)  # no Slurm here
    jobs = sweep.plan(["02", "05"], ["m1"], ["blimp", "climp"])
    scoring_blimp, scoring_climp, analysis_blimp, _ = jobs
    finish(scoring_blimp), finish(analysis_blimp)
    scoring_climp.partial.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": 4, "outputs": [
        {"output_type": "error", "ename": "ValueError", "evalue": "no pairs in climp"}]}]}))
    rows = sweep_status.status(jobs)
    assert [(short(r.job), r.state, r.waits_on, r.error) for r in rows] == [
        ("02 m1 blimp", "done", "", None),
        ("02 m1 climp", "failed", "", "cell In [4]: ValueError: no pairs in climp"),
        ("05 m1 blimp", "done", "02_readout", None),
        ("05 m1 climp", "not run", "02_readout", "waiting for 02_readout model=m1 dataset=climp which failed")]


def test_status_of_an_analysis_slurm_cancelled(tmp_path, monkeypatch):
    """Slurm cancelled the analysis (kill-on-invalid-dep) because the scoring task it ran after
    failed: "cancelled", naming that task; a queued one waiting on its dependency is "waiting"."""
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    jobs = sweep.plan(["02", "05"], ["m1"], ["blimp", "climp"], {"05:methods": "lp", "05:gap": "lp,meanlp"})
    scoring_blimp, scoring_climp, analysis_blimp, analysis_climp = jobs
    records = {scoring_blimp: ("7_0", {}), scoring_climp: ("7_1", {}),
               analysis_blimp: ("8", {"7_0": scoring_blimp.output.stem}),
               analysis_climp: ("9", {"7_1": scoring_climp.output.stem})}
    for job, (jid, after) in records.items():
        folder = tmp_path / "outputs" / "slurm" / jid
        rec = sweep_slurm.Record(jid, "now", str(folder), str(folder / "out"), str(folder / "err"), waits_on=after)
        sweep_slurm.record_path(job).parent.mkdir(parents=True, exist_ok=True)
        sweep_slurm.record_path(job).write_text(json.dumps(rec.__dict__))
    ended = {"7_1": "FAILED (NonZeroExitCode)", "9": "CANCELLED (DependencyNeverSatisfied)"}
    monkeypatch.setattr(sweep_slurm, "queue", lambda: {"7_0": ("RUNNING", "None"), "8": ("PENDING", "Dependency")})
    monkeypatch.setattr(sweep_slurm, "final_state", ended.get)
    rows = sweep_status.status(jobs)
    assert [(r.state, r.job_id, r.waits_on) for r in rows] == [
        ("running", "7_0", ""), ("failed", "7_1", ""), ("waiting", "8", "02_readout (7_0)"),
        ("cancelled", "9", "02_readout (7_1)")]
    assert rows[3].error == f"its scoring job failed: {scoring_climp.output.stem} (job 7_1: FAILED (NonZeroExitCode))"
    text = sweep_status.format_status(rows)
    assert re.search(r"05_length_bias\s+m1\s+climp\s+cancelled\s+9\s+02_readout \(7_1\)\s+0\s+\S+\s+its scoring job "
                     r"failed: 02_readout__m1__climp \(job 7_1: FAILED \(NonZeroExitCode\)\)", text)
    assert re.search(r"05_length_bias\s+m1\s+blimp\s+waiting\s+8\s+02_readout \(7_0\)", text)
    assert text.endswith("4 jobs: 1 cancelled, 1 failed, 1 running, 1 waiting")


def test_sacct_reason_joins_the_final_state(monkeypatch):
    answers = {"sacct": "9|CANCELLED by 0|0:0|DependencyNeverSatisfied\n", "scontrol": None}
    monkeypatch.setattr(sweep_slurm, "_command", lambda args, timeout=60: answers[args[0]])
    assert sweep_slurm.final_state("9") == "CANCELLED (DependencyNeverSatisfied)"
    answers["sacct"] = "7_1|FAILED|1:0|None\n"
    assert sweep_slurm.final_state("7_1") == "FAILED"
