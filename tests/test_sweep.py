"""papermill sweeps over notebooks x models x datasets, skipping finished runs."""
from __future__ import annotations

import json

import pytest

from helpers import sweep
from helpers.cli import main

pytestmark = pytest.mark.slow


def test_sweep_runs_each_combination_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setattr(sweep, "OUTPUTS", tmp_path / "outputs")
    jobs = sweep.plan(["01"], [sweep.NO_MODEL], ["li", "hl_blimp"])
    assert [j.output.name for j in jobs] == ["01_data_prep__li.ipynb", "01_data_prep__hl_blimp.ipynb"]
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
