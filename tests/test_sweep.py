"""papermill sweeps over notebooks x models x datasets, skipping finished runs."""
from __future__ import annotations

import json

import nbformat
import pytest

from helpers import sweep
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


def test_a_parameter_the_notebook_lacks_is_an_error(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('models = "demo-en"  # models',
                                                                   metadata={"tags": ["parameters"]})],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    path = tmp_path / "09_old.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match=r"09_old.ipynb has no parameter dataset, model \(its parameters: models\)"):
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
    with pytest.raises(FileNotFoundError, match="available: 01_data_prep.ipynb"):
        sweep.find_notebook("99")
