"""Stale score files are never reused silently (issue 33): a file of the same configuration written
under another numerics key (the engine's numerics version, torch's or transformers' major.minor,
or none recorded) is recomputed and the old one set aside; reused only when asked, with a
warning; an unreadable (truncated) file is set aside with a message that says so; the analyses
and `sweep --status` name stale files."""
from __future__ import annotations

import warnings

import pandas as pd
import pyarrow.parquet as pq
import pytest

from helpers import paths, provenance, store as store_module
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer
from helpers.runner import run_methods
from helpers.store import META_KEY, ScoreStore, load_scores, read_metadata
from helpers.sweep import jobs as sweep_jobs
from helpers.sweep.status import JobStatus, format_status, store_counts
from helpers.settings import Settings


@pytest.fixture(scope="module")
def selection():
    df = load("blimp")
    keep = sorted(df.paradigm.unique())[:2]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], 2), limit=2)


@pytest.fixture(scope="module")
def scorer(tiny):
    return CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))


def run(scorer, selection, root, **store_options):
    st = ScoreStore(root, **store_options)
    (path,) = run_methods(scorer, selection, ["lp"], store=st)
    return st, path


def set_aside(root):
    return sorted(p.name for p in root.glob("*/*/set_aside/*"))


def test_the_same_numerics_key_reuses_and_a_new_engine_version_recomputes(scorer, selection, tmp_path, monkeypatch):
    st, path = run(scorer, selection, tmp_path)
    assert st.writes == 1 and read_metadata(path)["numerics"] == provenance.numerics()
    first = pd.read_parquet(path)
    st, again = run(scorer, selection, tmp_path)
    assert st.writes == 0 and again == path  # same key: reused
    monkeypatch.setattr(provenance, "ENGINE_NUMERICS", "2")
    with pytest.warns(UserWarning, match=r"is stale \(computed under engine 1, torch [\d.]+, transformers [\d.]+; "
                                         r"now engine 2, .*moved to .*set_aside.*and recomputed"):
        st, new = run(scorer, selection, tmp_path)
    assert st.writes == 1 and new == path and read_metadata(new)["numerics"]["engine"] == "2"
    assert [n.split("__stale-")[0] for n in set_aside(tmp_path)] == ["lp"]  # the old file kept, never read
    pd.testing.assert_frame_equal(pd.read_parquet(new), first)  # the same engine really: the same numbers
    st, _ = run(scorer, selection, tmp_path)
    assert st.writes == 0


@pytest.mark.parametrize("library, now", [("transformers", "99.1.0"), ("torch", "3.0.0+cpu")])
def test_another_library_major_minor_recomputes(scorer, selection, tmp_path, monkeypatch, library, now):
    run(scorer, selection, tmp_path)
    real = provenance.version
    monkeypatch.setattr(provenance, "version", lambda name: now if name == library else real(name))
    assert provenance.numerics()[library] == ".".join(now.split("+")[0].split(".")[:2])
    with pytest.warns(UserWarning, match=rf"now engine 1, .*{library} {provenance.major_minor(now)}"):
        st, _ = run(scorer, selection, tmp_path)
    assert st.writes == 1


def test_a_patch_release_is_the_same_key():
    assert provenance.major_minor("2.13.1+cu128") == provenance.major_minor("2.13.0") == "2.13"


def test_a_file_without_a_numerics_key_is_stale(scorer, selection, tmp_path):
    _, path = run(scorer, selection, tmp_path)
    table = pq.read_table(path)
    meta = read_metadata(path)
    del meta["numerics"]  # as written before the key was recorded
    pq.write_table(table.replace_schema_metadata({META_KEY: store_module.json.dumps(meta).encode()}), path)
    with pytest.warns(UserWarning, match=r"no numerics key"):
        st, _ = run(scorer, selection, tmp_path)
    assert st.writes == 1


def test_reuse_when_asked_with_a_warning_by_option_or_environment(scorer, selection, tmp_path, monkeypatch):
    _, path = run(scorer, selection, tmp_path)
    monkeypatch.setattr(provenance, "ENGINE_NUMERICS", "7")
    with pytest.warns(UserWarning, match=r"is stale .* reused as asked"):
        st, again = run(scorer, selection, tmp_path, reuse_stale=True)
    assert st.writes == 0 and again == path and read_metadata(path)["numerics"]["engine"] == "1"
    monkeypatch.setenv(provenance.REUSE_STALE_ENV, "1")
    with pytest.warns(UserWarning, match=r"reused as asked"):
        st, _ = run(scorer, selection, tmp_path)
    assert st.writes == 0 and set_aside(tmp_path) == []


def test_a_truncated_file_is_set_aside_as_unreadable_and_recomputed(scorer, selection, tmp_path):
    _, path = run(scorer, selection, tmp_path)
    good = pd.read_parquet(path)
    path.write_bytes(path.read_bytes()[:3000])
    with pytest.warns(UserWarning, match=r"is not a readable score file .*truncated or damaged: moved to "):
        st, again = run(scorer, selection, tmp_path)
    assert st.writes == 1 and again == path  # the plain name, not a second file alongside
    pd.testing.assert_frame_equal(pd.read_parquet(again), good)
    (kept,) = set_aside(tmp_path)
    assert kept.startswith("lp__unreadable-") and len(list(path.parent.glob("*.parquet"))) == 1


def test_analyses_and_sweep_status_name_stale_files(scorer, selection, tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUTS_ENV, str(tmp_path / "outputs"))
    root = paths.scores()
    run(scorer, selection, root)
    job = sweep_jobs.Job(paths.NOTEBOOKS / "02_readout.ipynb", scorer.loaded.name, "blimp")
    assert store_counts(job)[::2] == (1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(load_scores("blimp", root=root)) == 4  # fresh: no warning
    monkeypatch.setattr(provenance, "ENGINE_NUMERICS", "2")
    with pytest.warns(UserWarning, match=r"1 of the score files read are stale .*rerun the scoring notebooks"):
        load_scores("blimp", root=root)
    assert store_counts(job)[::2] == (1, 1)
    text = format_status([JobStatus(job, "done", score_files=1, stale_files=1)])
    assert "1 stale score file(s)" in text and "recomputes them" in text
