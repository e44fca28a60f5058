"""A store written by the code before wave 6 (tests/fixtures/store_37d9d1a: format 1, PenLP files
without penlp_alpha) reads right with today's code: its files are found for today's configuration
(nothing scored again), read with the values that code used, and 04 and 05 run on it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "store_37d9d1a"


@pytest.fixture
def old_store(scratch):
    target = scratch / "outputs" / "scores"
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("README.md"))
    return target / "blimp" / "demo-en"


def test_an_old_file_reads_with_the_values_its_code_used_and_todays_hash(old_store):
    from helpers.score_files import META_KEY, read_metadata
    from helpers.store_format import config_hash, configuration

    raw = json.loads(pq.read_schema(old_store / "penlp.parquet").metadata[META_KEY])
    assert "penlp_alpha" not in raw and "store_format" not in raw and raw["git_commit"].startswith("37d9d1a")
    read = read_metadata(old_store / "penlp.parquet")
    assert (read["penlp_alpha"], read["store_format"]) == (0.8, 1)
    assert read["config_hash"] == config_hash({**configuration(raw), "penlp_alpha": 0.8}) != raw["config_hash"]
    lp = read_metadata(old_store / "lp.parquet")  # a method that reads no alpha: as written
    assert "penlp_alpha" not in lp and lp["config_hash"] == raw_hash(old_store / "lp.parquet")


def raw_hash(path: Path) -> str:
    from helpers.score_files import META_KEY

    return json.loads(pq.read_schema(path).metadata[META_KEY])["config_hash"]


def test_todays_run_finds_the_old_files_and_scores_nothing(old_store):
    from helpers.data.picking import choose
    from helpers.runs.run import Run
    from helpers.settings import Settings
    from helpers.store import ScoreStore, load_scores

    store = ScoreStore()
    run = Run.of("demo-en", Settings(progress=False, templates=[1, 2]))
    found = run.files(["lp", "penlp", "intemplate_lp", "yesno", "ab"], choose("blimp", 1), store=store)
    assert store.writes == 0  # every file found, none scored again
    assert sorted(Path(p).name for p in found) == [
        "ab__t1.parquet", "ab__t2.parquet", "intemplate_lp__t1.parquet", "intemplate_lp__t2.parquet", "lp.parquet",
        "penlp.parquet", "yesno__t1.parquet", "yesno__t2.parquet"]
    scores = load_scores("blimp", "demo-en", where=Settings(penlp_alpha=0.8).score_filter())
    assert scores.groupby("method").size().to_dict() == {
        "ab": 5 * 67, "intemplate_lp": 5 * 67, "lp": 67, "lp_per_byte": 67, "meanlp": 67, "penlp": 67, "slln_lp": 67,
        "yesno": 5 * 67}
    other = load_scores("blimp", "demo-en", where=Settings(penlp_alpha=1.0).score_filter())
    assert "penlp" not in set(other.method) and len(other) == len(scores) - 67  # no file of that alpha


def test_04_and_05_read_an_old_store_and_04_chooses_by_a_setting_name(old_store, tmp_path):
    from notebook_run import first_output, run_notebook

    from helpers.reporting.outputs import MissingScoresError, required_scores
    from helpers.settings import Settings

    run_notebook("05_length_bias.ipynb", tmp_path / "05.ipynb", model="demo-en", resamples=200)
    done = run_notebook("04_ensembles.ipynb", tmp_path / "04.ipynb", model="demo-en", resamples=200, trials=4,
                        penlp_alpha=0.8)
    assert first_output(done).startswith("reads the scores stored under settings: penlp_alpha=0.8; the others 'auto'")
    # -p instruct true: 04's read (stored_choice's filter into required_scores) finds no chat-template prompts
    with pytest.raises(MissingScoresError, match=r"- yesno for demo-en: run notebooks/03_prompting.ipynb"):
        required_scores("demo-en", "blimp", ["lp", "intemplate_lp", "yesno"], where=Settings(instruct=True).score_filter())


def test_a_wave_5_file_reads_as_of_todays_methods_version_and_rows_hash_where_nothing_changed(scratch):
    """A file of methods version 3 (before Hu & Levy's prompt fixes 4 and 5) and without its dataset's
    rows hash (written before files recorded it) reads as today's configuration when no later version
    changed its method: version 5 and the processed table's rows hash; a Hu & Levy file, changed by 4 and
    5, keeps its version (and is scored again); so does a file of version 2."""
    from helpers.data.picking import choose
    from helpers.data.table_version import recorded
    from helpers.data import processed_path
    from helpers.score_files import as_today as upgraded
    from helpers.store_format import config_hash

    choose("blimp", 1)  # the processed table, with its rows hash
    rows = recorded(processed_path("blimp"))["rows_sha256"]

    def written(method: str, version: str) -> dict:
        config = {"dataset": "blimp", "method": method, "methods_version": version, "model_name": "m", "limit": 1,
                  "n_pairs": 67}
        return {**config, "config_hash": config_hash(config), "accuracy": 0.5}

    lp = upgraded(written("lp", "3"))
    assert (lp["methods_version"], lp["data_sha256"], lp["store_format"]) == ("5", rows, 1)
    assert lp["config_hash"] == config_hash({k: lp[k] for k in ("dataset", "method", "methods_version", "model_name",
                                                                 "limit", "n_pairs", "data_sha256")})
    assert upgraded(written("hl_sentence_comparison", "3"))["methods_version"] == "3"
    assert upgraded(written("lp", "2"))["methods_version"] == "2"
    tampered = {**written("lp", "3"), "config_hash": "0123456789"}  # its configuration not recovered: as it is
    assert upgraded(tampered)["config_hash"] == "0123456789" and "data_sha256" not in upgraded(tampered)
