"""Grammar prompting (Scheinberg et al. 2025): each paradigm's explanation before every judgment,
as a setup of the run (helpers.runs.explanations): read from a user's file, refused where a paradigm
has none, recorded by the file's checksum, scored as a plain context before the same input, and run
once per paradigm through the engine's prefix sharing."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer, Request
from helpers import paths
from helpers.runs.explanations import explained_input, explanations_file, read_explanations
from helpers.runs.run import Run
from helpers.settings import Settings
from helpers.store import ScoreStore, load_files, read_metadata


def selection(paradigms: int = 2, per: int = 2) -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


def write(path, texts: dict) -> str:
    path.write_text(json.dumps(texts))
    return str(path)


def test_each_pair_is_scored_after_its_paradigms_explanation(tiny, tmp_path):
    chosen = selection()
    names = list(chosen.frame.paradigm.unique())
    texts = {p: f"Explanation {i}: in English, a verb agrees with its subject in number and person." for i, p in
             enumerate(names)}
    path = write(tmp_path / "explain.json", texts)
    lm, store = tiny("tiny-gpt2"), ScoreStore(tmp_path / "scores")
    shared, alone = (CausalScorer(lm, Settings(progress=False, share=s)) for s in ("prefix", "none"))
    files = Run.of(shared).files(["lp", "ab"], *explained_input(chosen, path), store=store, templates=[1])
    assert [f.name for f in files] == ["lp__explained.parquet", "ab__t1__explained.parquet"]
    meta = read_metadata(files[0])
    assert meta["explanations"]["file"] == "explain.json" and len(meta["explanations"]["sha256"]) == 64
    scores = load_files(files[:1])
    assert list(scores.explanation) == [texts[p] for p in chosen.frame.paradigm]
    # the same numbers as the explanation (and a space) given as a plain context before each sentence, unshared
    want = alone.score([Request(texts[p] + " ", s) for p, g, b in zip(chosen.frame.paradigm, chosen.frame.good,
                                                                  chosen.frame.bad) for s in (g, b)])
    np.testing.assert_allclose(np.c_[scores.score_good, scores.score_bad].ravel(), [w.total for w in want],
                               rtol=0, atol=1e-4)
    # each paradigm's explanation runs once: sharing feeds fewer tokens than scoring each pair apart
    shared_run = CausalScorer(lm, Settings(progress=False, share="prefix"))
    Run.of(shared_run).files(["lp"], *explained_input(chosen, path), store=ScoreStore(tmp_path / "b"))
    plain_run = CausalScorer(lm, Settings(progress=False, share="none"))
    Run.of(plain_run).files(["lp"], *explained_input(chosen, path), store=ScoreStore(tmp_path / "c"))
    explanation_tokens = sum(len(lm.tokenizer(t)["input_ids"]) for t in texts.values())
    assert plain_run.record()["tokens_run"] - shared_run.record()["tokens_run"] >= 2 * explanation_tokens

    # another file (another checksum) is another configuration: a new file, the old one kept
    other = write(tmp_path / "explain.json", {p: t + " Really." for p, t in texts.items()})
    again = Run.of(shared).files(["lp"], *explained_input(chosen, other), store=store)
    assert again[0] != files[0] and read_metadata(again[0])["explanations"]["sha256"] != meta["explanations"]["sha256"]


def test_a_paradigm_without_an_explanation_and_bad_files_are_clear_errors(tmp_path, monkeypatch):
    chosen = selection()
    first, second = chosen.frame.paradigm.unique()
    with pytest.raises(ValueError, match=rf"explain.json explains no paradigm {second} of blimp: add an explanation"):
        explained_input(chosen, write(tmp_path / "explain.json", {first: "Agreement."}))
    (tmp_path / "e.tsv").write_text(f"paradigm\texplanation\n{first}\tAgreement.\n{second}\tIslands.\n")
    assert read_explanations(tmp_path / "e.tsv") == {first: "Agreement.", second: "Islands."}
    (tmp_path / "e.yaml").write_text(f"{first}: Agreement.\n{second}: ''\n")
    with pytest.raises(ValueError, match=rf"e.yaml has no explanation text for {second}"):
        read_explanations(tmp_path / "e.yaml")
    with pytest.raises(FileNotFoundError, match="no explanations file"):
        read_explanations(tmp_path / "none.json")
    # a relative path: from the folder the command runs in (a notebook's: notebooks/), then the project's
    monkeypatch.chdir(paths.NOTEBOOKS)
    with pytest.raises(FileNotFoundError, match=rf"looked for {paths.NOTEBOOKS / 'mine.json'} and "
                                                rf"{paths.ROOT / 'mine.json'}; a relative path is read from"):
        read_explanations("mine.json")
    monkeypatch.setattr(paths, "ROOT", tmp_path)  # a project whose folder holds e.tsv: found from notebooks/
    assert explanations_file("e.tsv") == tmp_path / "e.tsv" and read_explanations("e.tsv")[first] == "Agreement."
    (tmp_path / "x.txt").write_text(f"{first}: Agreement.")
    with pytest.raises(ValueError, match=r"give the explanations as \.json, \.yaml, \.csv or \.tsv"):
        read_explanations(tmp_path / "x.txt")


def test_a_notebooks_parameters_take_an_explanations_file(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    paradigms = load("blimp").paradigm.unique()
    path = write(tmp_path / "all.json", {p: f"The paradigm {p} tests one rule of English grammar." for p in paradigms})
    run = Run.from_parameters({"model": "tiny-gpt2", "dataset": "blimp", "limit": 1, "methods": "lp",
                               "explanations": path, "progress": False}, methods=["lp", "meanlp"])
    files = run.files()
    assert [f.name for f in files] == ["lp__explained.parquet"] and run.tag() == "tiny-gpt2__blimp__explained__limit-1"
    assert run.config(limit=1)["explanations"]["file"] == "all.json"
    assert len(load_files(files)) == len(paradigms)
