"""papermill sweeps over notebooks x models x datasets, skipping finished runs."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from helpers import sweep
from helpers.sweep import slurm as sweep_slurm
from helpers.sweep import status as sweep_status
from helpers.cli import main


@pytest.mark.parametrize("prefix", ["02", "03", "05"])
def test_every_model_notebook_takes_the_model_and_dataset_the_sweep_injects(prefix):
    job = sweep.Job(sweep.find_notebook(prefix), "llama3", "blimp", {"methods": "lp"})
    assert job.papermill_parameters() == {"model": "llama3", "dataset": "blimp", "methods": "lp"}
    assert {"model", "dataset", "methods"} <= sweep.declared_parameters(job.notebook)


def test_ensembles_notebook_takes_model_not_models():
    job = sweep.Job(sweep.find_notebook("04"), "llama3", "blimp", {"ab_method": "ab_logit"})
    assert job.papermill_parameters() == {"model": "llama3", "dataset": "blimp", "ab_method": "ab_logit"}


def test_data_prep_gets_a_list_of_datasets_and_no_model():
    job = sweep.Job(sweep.find_notebook("01"), sweep.NO_MODEL, "li")
    assert job.papermill_parameters() == {"datasets": ["li"]}


def test_each_notebook_runs_the_datasets_it_reads_a_variant_or_none_said(capsys):
    """06 primes BLiMP and SyntaxGym, 07 reads Hu et al.'s Table 1 variants: blimp and climp asked of
    02, 06 and 07 give 02 both, 06 blimp, 07 blimp_hu2025 (said), and climp left out of 06 and 07 (said)."""
    jobs = sweep.plan(["02", "06", "07"], ["demo-en"], ["blimp", "climp"], {"limit": 1})
    assert [(j.notebook.stem[:2], j.dataset) for j in jobs] == [("02", "blimp"), ("02", "climp"), ("06", "blimp"),
                                                                ("07", "blimp_hu2025")]
    assert jobs[-1].papermill_parameters()["datasets"] == ["blimp_hu2025"]
    said = capsys.readouterr().err
    assert "07_separability reads blimp as blimp_hu2025" in said
    assert "06_context_priming reads blimp, syntaxgym: climp left out of it" in said
    assert "07_separability reads blimp_hu2025, scamp_plausible" in said and said.count("climp left out") == 2
    assert [j.dataset for j in sweep.plan(["07"], ["demo-en"], ["all"])] == ["all"]  # 07's own "all"


def test_a_parameter_the_notebook_lacks_is_an_error(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('models = "demo-en"  # models',
                                                                   metadata={"tags": ["parameters"]})],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    path = tmp_path / "09_old.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match=r"09_old.ipynb has no parameter dataset, model \(its parameters: models; and every "
                                         r"setting\)"):
        sweep.Job(path, "llama3", "blimp").papermill_parameters()


def test_the_cli_refuses_an_unknown_parameter(capsys):
    assert main(["sweep", "--notebooks", "04", "--models", "llama3", "--param", "models=x"]) == 2
    assert "04_ensembles.ipynb has no parameter models" in capsys.readouterr().err


@pytest.mark.slow
def test_sweep_runs_each_combination_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    jobs = sweep.plan(["01"], [sweep.NO_MODEL], ["li", "hl_blimp"])
    assert [j.output.name for j in jobs] == ["01_data_prep__li.ipynb", "01_data_prep__hl_blimp.ipynb"]
    assert jobs[0].output.parent == tmp_path / "outputs" / "notebooks"
    done = sweep.run(jobs)
    assert len(done) == 2 and all(sweep.finished(p) for p in done)
    assert (tmp_path / "processed" / "li.parquet").is_file()
    nb = json.loads(done[0].read_text())
    assert nb["metadata"]["papermill"]["parameters"]["datasets"] == ["li"]
    assert sweep.run(jobs) == []  # finished: nothing runs again
    other = sweep.plan(["01"], [sweep.NO_MODEL], ["li"], {"examples": 1})
    assert other[0].output.name == "01_data_prep__li__examples-1.ipynb"


def test_sweep_errors_are_clear(capsys):
    assert main(["sweep", "--notebooks", "99", "--models", "gpt2"]) == 2
    assert "no single notebook starts with '99'" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match=r"available: (\S+\.ipynb, )*01_data_prep\.ipynb, 02_readout\.ipynb"):
        sweep.find_notebook("99")


def test_per_notebook_parameters_and_shard_names():
    jobs = sweep.plan(["02", "05"], ["llama3"], ["blimp"], {"02:limit": 1, "02:methods": "lp", "05:clip": 3})
    assert [j.parameters for j in jobs] == [{"limit": 1, "methods": "lp"}, {"clip": 3}]
    assert jobs[1].papermill_parameters() == {"clip": 3, "model": "llama3", "dataset": "blimp"}
    assert jobs[1].output.name == "05_length_bias__llama3__blimp__clip-3.ipynb"
    with pytest.raises(ValueError, match=r"parameter '07:limit' is for notebook '07', which is not in this sweep"):
        sweep.plan(["02"], ["llama3"], ["blimp"], {"07:limit": 1})
    sharded = sweep.plan(["02"], ["llama3"], ["blimp"], {"limit": 1}, shards=2)
    assert [(j.shard, j.output.name) for j in sharded] == [
        (1, "02_readout__llama3__blimp__limit-1__shard1of2.ipynb"),
        (2, "02_readout__llama3__blimp__limit-1__shard2of2.ipynb")]
    assert sharded[1].papermill_parameters() == {"limit": 1, "model": "llama3", "dataset": "blimp", "shard": 2,
                                                 "shards": 2}


def test_shards_need_a_notebook_that_takes_them(capsys):
    assert main(["sweep", "--notebooks", "04", "--models", "llama3", "--shards", "3"]) == 2
    assert ("04_ensembles.ipynb has no parameter shard, shards" in capsys.readouterr().err)
    assert main(["sweep", "--notebooks", "02", "--models", "llama3", "--shards", "0"]) == 2
    assert "shards must be a whole number >= 1, got 0" in capsys.readouterr().err


def test_slurm_profiles(tmp_path):
    gpu = sweep_slurm.resources()
    assert sweep_slurm.executor_parameters(gpu) == {
        "name": "helpers-sweep", "timeout_min": 720, "slurm_mem": "64G", "cpus_per_task": 8, "gpus_per_node": 1,
        "slurm_array_parallelism": 8, "slurm_partition": "gpu"}
    local = sweep_slurm.resources("slurm-local", time="1-00:30", qos="short", account="lab")
    assert sweep_slurm.executor_parameters(local) == {
        "name": "helpers-sweep", "timeout_min": 1470, "slurm_mem": "3G", "cpus_per_task": 1,
        "slurm_array_parallelism": 2, "slurm_partition": "local", "slurm_account": "lab", "slurm_qos": "short"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("partition: gpu\ngpu: 2\n")
    with pytest.raises(ValueError, match=r"bad.yaml: unknown key\(s\) gpu; a profile takes partition"):
        sweep_slurm.load_profile(bad)
    with pytest.raises(FileNotFoundError, match=r"no Slurm profile 'mylab' in .*profiles \(profiles: "
                                                r"slurm-gpu, slurm-local\)"):
        sweep_slurm.load_profile("mylab")
    with pytest.raises(ValueError, match="mem must be a size such as 64G or 500M, got 'lots'"):
        sweep_slurm.executor_parameters({"mem": "lots"})
    with pytest.raises(ValueError, match="cpus must be a whole number >= 1, got 0"):
        sweep_slurm.executor_parameters({"cpus": 0})
    assert [sweep_slurm.minutes(t) for t in (20, "20", "1:30", "12:00:00", "2-00", "1-02:03", "0:00:30")] == [
        20, 20, 2, 720, 2880, 1563, 1]


def test_the_cli_refuses_bad_slurm_resources_before_submitting(capsys):
    assert main(["sweep", "--notebooks", "02", "--models", "llama3", "--executor", "slurm", "--time", "soon"]) == 2
    assert "time must be minutes or a Slurm time such as 12:00:00" in capsys.readouterr().err


HALF_WRITER = """
import io, os, sys, time
import pandas as pd, pyarrow.parquet as pq
from helpers.store import ScoreStore

real = pq.write_table
def half_then_wait(table, where, **kw):  # write half the file's bytes, then wait to be killed
    buffer = io.BytesIO()
    real(table, buffer, **kw)
    data = buffer.getvalue()
    with open(where, "wb") as f:
        f.write(data[: len(data) // 2])
        f.flush()
        os.fsync(f.fileno())
    open(sys.argv[2], "w").write(str(len(data) // 2))
    time.sleep(600)
pq.write_table = half_then_wait
ScoreStore(sys.argv[1]).write(pd.DataFrame(FRAME), "blimp", "tiny-gpt2", "lp", None, CONFIG)
"""
FRAME = {"dataset": ["blimp"] * 500, "pair_id": list(range(500)), "score_good": [-1.5] * 500,
         "score_bad": [-2.5] * 500, "correct": [True] * 500, "tie": [False] * 500}
CONFIG = {"model_name": "tiny-gpt2", "method": "lp", "dataset": "blimp"}


def test_a_writer_killed_mid_file_leaves_no_score_file(tmp_path):
    """SIGKILL while a score file is half written: the store shows nothing, and the temporary
    file goes once a later run has finished the file."""
    import pandas as pd

    from helpers.store import ScoreStore, load_scores

    root, ready = tmp_path / "scores", tmp_path / "ready"
    code = HALF_WRITER.replace("FRAME", repr(FRAME)).replace("CONFIG", repr(CONFIG))
    writer = subprocess.Popen([sys.executable, "-c", code, str(root), str(ready)])
    deadline = time.monotonic() + 120
    while not ready.is_file():
        assert writer.poll() is None and time.monotonic() < deadline, "the writer did not reach the write"
        time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    assert writer.wait(30) == -signal.SIGKILL
    folder = root / "blimp" / "tiny-gpt2"
    (temp,) = folder.glob(".*.tmp")
    assert re.fullmatch(rf"\.lp\.parquet-{writer.pid}-[0-9a-f]{{8}}\.tmp", temp.name)
    assert temp.stat().st_size == int(ready.read_text()) > 0  # half a parquet file
    assert not (folder / "lp.parquet").exists() and ScoreStore(root).files() == []
    assert load_scores(root=root).empty
    assert sweep.clean_partials(root) == []  # its file is not finished: a writer may still be at work

    ScoreStore(root).write(pd.DataFrame(FRAME), "blimp", "tiny-gpt2", "lp", None, CONFIG)  # the rerun
    assert sweep.clean_partials(root) == [temp]
    assert sorted(p.name for p in folder.iterdir()) == ["lp.parquet"]
    assert load_scores(root=root).score_good.tolist() == [-1.5] * 500


FAILING = """{"cells": [
 {"cell_type": "code", "execution_count": null, "id": "a", "metadata": {"tags": ["parameters"]}, "outputs": [],
  "source": ["model = 'x'\\n", "dataset = 'y'"]},
 {"cell_type": "code", "execution_count": null, "id": "b", "metadata": {}, "outputs": [],
  "source": ["raise ValueError(f'no pairs in {dataset}')"]}],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4, "nbformat_minor": 5}"""


@pytest.mark.slow
def test_status_of_a_local_sweep(tmp_path, monkeypatch, capsys):
    """--status without Slurm: a run whose cell raised is failed with that cell's error; one not
    started is "not run"."""
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    notebook = tmp_path / "09_fails.ipynb"
    notebook.write_text(FAILING)
    failing, waiting = sweep.Job(notebook, "tiny-gpt2", "blimp"), sweep.Job(notebook, "tiny-gpt2", "climp")
    with pytest.raises(Exception, match="no pairs in blimp"):
        sweep.run([failing])
    rows = sweep_status.status([failing, waiting])
    assert [(r.state, r.error) for r in rows] == [("failed", "cell In [3]: ValueError: no pairs in blimp"),
                                                  ("not run", None)]
    text = sweep_status.format_status(rows)
    assert re.search(r"09_fails\s+tiny-gpt2\s+blimp\s+failed\s+0\s+cell In \[3\]: ValueError: no pairs in blimp", text)
    assert text.endswith("2 jobs: 1 failed, 1 not run")


@pytest.mark.slow
def test_a_sweep_loads_each_model_once_for_all_its_notebooks_with_the_tables_of_a_notebook_run_alone(scratch):
    """02 and 03 over two models: each model's notebooks run in one kernel that loads it once (the
    second notebook is handed the built scorer), no variable reaches the next notebook, and the tables
    equal those of the notebook run alone in a kernel of its own."""
    from helpers.sweep.dependencies import in_order, waits_on
    from helpers.sweep.model_kernel import ModelKernels

    params = {"limit": 1, "02:methods": "lp,meanlp", "03:methods": "yesno", "03:hu_levy_sets": "none",
              "03:fewshot_ks": [], "03:outlines_sample": 0}
    jobs = sweep.plan(["02", "03"], ["tiny-gpt2", "tiny-llama"], ["blimp"], params, settings={"templates": [1]})
    order = in_order(jobs, waits_on(jobs))
    assert [(j.notebook.stem[:2], j.model) for j in order] == [("02", "tiny-gpt2"), ("03", "tiny-gpt2"),
                                                                ("02", "tiny-llama"), ("03", "tiny-llama")]
    with ModelKernels() as kernels:
        done = [kernels.run(job) for job in order]
    assert kernels.started == 2  # one kernel per model
    said = {p.name[:2] + " " + m: [line for line in _stream_text(p).splitlines() if m in line and "loaded" in line]
            for p in done for m in ("tiny-gpt2", "tiny-llama") if m in p.name}
    assert said == {"02 tiny-gpt2": ["loaded tiny-gpt2 (float32) in " + said["02 tiny-gpt2"][0].split(" in ")[1]],
                    "03 tiny-gpt2": ["tiny-gpt2 is loaded already (kept by this kernel)"],
                    "02 tiny-llama": ["loaded tiny-llama (float32) in " + said["02 tiny-llama"][0].split(" in ")[1]],
                    "03 tiny-llama": ["tiny-llama is loaded already (kept by this kernel)"]}
    tables = scratch / "outputs" / "tables"
    shared = {p.name: p.read_bytes() for p in sorted(tables.glob("03_*tiny-llama*.csv"))}
    alone = scratch / "alone"
    os.environ["HELPERS_OUTPUTS_DIR"] = str(alone)  # the scratch fixture restores it
    order[3].run()  # 03 on tiny-llama in a kernel of its own: it scores everything again
    assert {p.name: p.read_bytes() for p in sorted((alone / "tables").glob("03_*tiny-llama*.csv"))} == shared
    assert len(shared) >= 3


def _stream_text(path) -> str:
    cells = json.loads(path.read_text())["cells"]
    texts = [o.get("text", "") for c in cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    return "".join("".join(t) if isinstance(t, list) else t for t in texts)
