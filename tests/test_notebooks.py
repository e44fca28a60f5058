"""Notebook smoke tests: each notebook runs headlessly through papermill and writes its files."""
from __future__ import annotations

import json
import os

import pandas as pd
import papermill as pm
import pytest

from helpers import paths

pytestmark = pytest.mark.slow


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """Processed data and outputs go to a scratch folder (the kernel inherits the env)."""
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    return tmp_path


def run(name: str, out, **parameters):
    pm.execute_notebook(str(paths.NOTEBOOKS / name), str(out), parameters=parameters,
                        cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    return json.loads(out.read_text())


def test_01_data_prep_writes_parquet(scratch):
    nb = run("01_data_prep.ipynb", scratch / "01.ipynb", datasets="blimp,climp,li,cola,syntaxgym_suites",
             drop_identical=True)
    processed = scratch / "processed"
    blimp = pd.read_parquet(processed / "blimp.parquet")
    assert len(blimp) == 66_993
    climp = pd.read_parquet(processed / "climp.parquet")
    assert len(climp) == 16_000 and climp.good.str.endswith("。").all()
    assert len(pd.read_parquet(processed / "cola.parquet")) == 8551
    assert pd.read_parquet(processed / "syntaxgym_suites.parquet").suite.nunique() == 34
    text = json.dumps(nb)
    assert "word-shuffling paradigms: 13" in text and "templates 2 and 4 are identical" in text


@pytest.mark.parametrize("model,dataset,methods", [
    ("tiny-llama", "blimp", "lp,meanlp,penlp,slor,intemplate_lp,intemplate_meanlp,intemplate_penlp,comparative_lp"),
    ("tiny-qwen2", "climp", "lp,bf_unigram,intemplate_lp,comparative_lp"),
])
def test_02_readout_runs_and_writes_the_documented_files(scratch, model, dataset, methods):
    corpus = scratch / "unigram.txt"
    corpus.write_text("The cat sees a dog.\n我喜欢看书。\n")
    nb = run("02_readout.ipynb", scratch / "02.ipynb", model=model, dataset=dataset, methods=methods,
             templates=[1, 2], limit=1, unigram_corpus=str(corpus))
    outputs = scratch / "outputs"
    files = sorted((outputs / "scores" / dataset / model).glob("*.parquet"))
    templated = sum(m.startswith(("intemplate", "comparative")) for m in methods.split(","))
    assert len(files) == (len(methods.split(",")) - templated) + 2 * templated
    from helpers.results import SCORE_COLUMNS, read_metadata

    for f in files:
        df = pd.read_parquet(f)
        assert set(SCORE_COLUMNS) <= set(df.columns) and len(df) == df.paradigm.nunique()
        assert read_metadata(f)["model_name"] == model
    table = pd.read_csv(outputs / "tables" / f"02_readout__{model}__{dataset}.csv")
    assert set(table.method) == set(methods.split(",")) and (table.pairs == len(df)).all()
    assert (outputs / "figures" / f"02_readout_phenomena__{model}__{dataset}.svg").is_file()
    assert "accuracy (%)" in json.dumps(nb)


def test_notebooks_are_committed_without_outputs():
    for path in sorted(paths.NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), path.name
        tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: exactly one cell tagged 'parameters'"
        twin = path.with_suffix(".py")
        assert twin.is_file(), f"{path.name} has no py:percent twin"


def test_every_parameter_line_parses_for_papermill():
    from papermill.translators import PythonTranslator

    for path in sorted(paths.NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
        source = "".join(cell["source"])
        lines = [ln for ln in source.splitlines() if ln.strip() and not ln.startswith("#")]
        parsed = PythonTranslator.inspect({"source": source})
        assert len(parsed) == len(lines), f"{path.name}: a parameter line papermill cannot parse"
        assert all(p.help for p in parsed), f"{path.name}: every parameter needs a comment"


@pytest.mark.parametrize("model", ["tiny-gpt2", "tiny-llama-instruct"])
def test_03_prompting_runs_on_base_and_instruct(scratch, model):
    nb = run("03_prompting.ipynb", scratch / "03.ipynb", model=model, dataset="blimp", limit=1, templates=[1],
             hu_levy_sets="hl_blimp,hl_dtfit", hu_levy_limit=6)
    tables = scratch / "outputs" / "tables"
    t3 = pd.read_csv(tables / f"03_prompting__{model}__blimp.csv")
    assert set(t3.method) == {"yesno", "yesno_released", "ab"}
    ab = pd.read_csv(tables / f"03_ab_answers__{model}__blimp.csv")
    assert ab.agreement.iloc[0] >= 0.98
    hl = pd.read_csv(tables / f"03_hu_levy__{model}.csv")
    assert set(hl.task) == {"sentence_judgment", "sentence_comparison", "word_comparison"}
    assert len(list((scratch / "outputs" / "scores" / "blimp" / model).glob("*.parquet"))) == 3
    assert ("<|start_header_id|>" in json.dumps(nb)) == model.endswith("instruct")


@pytest.fixture
def smoke_scores(scratch, tiny):
    """Scores of a tiny model as the 02 and 03 smoke runs write them (limit 2, all templates)."""
    from helpers import data
    from helpers.readout import run_methods, select_pairs
    from helpers.results import ScoreStore
    from helpers.scoring import Scorer

    model, tok = tiny("tiny-llama-instruct")
    store = ScoreStore(scratch / "outputs" / "scores")
    pairs = select_pairs(data.load("blimp"), 2)
    scorer = Scorer(model, tok, progress=False)
    run_methods(scorer, pairs, ["lp", "intemplate_lp", "yesno", "ab"], model_name="tiny-llama-instruct",
                dataset="blimp", limit=2, store=store, use_outlines=False)
    return scratch


def test_04_and_05_read_the_store_and_write_figures_and_tables(smoke_scores):
    out = smoke_scores / "outputs"
    run("04_ensembles.ipynb", smoke_scores / "04.ipynb", models="tiny-llama-instruct", resamples=200)
    ens = pd.read_csv(out / "tables" / "04_ensembles__blimp.csv")
    assert list(ens.setting[:4]) == ["P-only", "Mix-P3", "Mix-L3", "L-only"]
    assert ens.accuracy.between(0, 1).all() and (ens.ci_low <= ens.accuracy).all()
    assert len(pd.read_csv(out / "tables" / "04_mcnemar__blimp.csv")) == 4
    for stem in ("04_phenomena", "04_word_shuffle", "04_attractors"):
        assert (out / "figures" / f"{stem}__tiny-llama-instruct__blimp.png").is_file()
        assert (out / "figures" / f"{stem}__tiny-llama-instruct__blimp.svg").is_file()
    assert (out / "tables" / "04_ab_share__blimp.md").is_file()
    run("05_length_bias.ipynb", smoke_scores / "05.ipynb", models="tiny-llama-instruct", resamples=200,
        methods="lp,intemplate_lp,yesno,ab")
    t4 = pd.read_csv(out / "tables" / "05_point_biserial__blimp.csv")
    assert set(t4.method) == {"lp", "intemplate_lp", "yesno", "ab"} and t4.r.between(-1, 1).all()
    assert (out / "figures" / "05_paradigm_gap__tiny-llama-instruct__blimp.svg").is_file()


def test_analysis_notebooks_explain_missing_scores(scratch):
    nb = run("04_ensembles.ipynb", scratch / "04.ipynb", models="no-such-model")
    text = json.dumps(nb)
    assert "The results store has no scores for" in text and "run notebooks/03_prompting.ipynb" in text
    assert "Traceback" not in text and "- ab for no-such-model" in text
    text = json.dumps(run("04_ensembles.ipynb", scratch / "04b.ipynb", models="no-such-model", ab_method=None))
    assert "- yesno for no-such-model" in text and "- ab for" not in text  # A/B not asked for
