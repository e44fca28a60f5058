"""Reading the store for an analysis, writing tables and figures with their provenance
sidecars, and the figures themselves (inspected through their matplotlib axes)."""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from synthetic_scores import PAIRS_PER_PARADIGM, PARADIGMS, write_store

from helpers import provenance
from helpers.plots import accuracy as plots
from helpers.reporting import outputs as report


@pytest.fixture
def store(tmp_path, monkeypatch):
    """Outputs in a scratch folder holding the synthetic score files of models m1 and m2."""
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path))
    return write_store(tmp_path / "scores", ["m1", "m2"])


def test_stored_scores_name_their_files_and_what_is_missing(store):
    scores, missing = report.stored_scores("m1, m2", "blimp", ["lp", "yesno"])
    assert missing == ""
    assert sorted(scores.attrs["score_files"]) == sorted(
        str(f) for f in store if f.parent.name in ("m1", "m2") and f.name.startswith(("lp.", "yesno__")))
    assert len(scores) == 2 * 6 * len(PARADIGMS) * PAIRS_PER_PARADIGM
    scores, missing = report.stored_scores(["m1", "zz"], "blimp", "lp,yesno")
    assert missing.splitlines() == [
        "The results store has no scores for:",
        "- lp for zz: run notebooks/02_readout.ipynb with model='zz', dataset='blimp'",
        "- yesno for zz: run notebooks/03_prompting.ipynb with model='zz', dataset='blimp'"]
    assert set(scores.model) == {"m1"}
    # a method the model's kind cannot run: no "run 03", which cannot produce it, but what to set
    _, missing = report.stored_scores("tiny-t5", "blimp", ["ab", "yesno"], {"ab": "ab_method"})
    assert missing.splitlines()[1:] == [
        "- ab for tiny-t5: ab needs constrained decoding with outlines continuing the prompt exactly as the engine "
        "encodes it (a causal LM; an encoder-decoder starts its answer with a word-initial token such as '▁A', which "
        "outlines' answer strings exclude), which the Seq2SeqScorer lacks, so no notebook scores it for this seq2seq "
        "model: set ab_method='ab_logit' (or None to skip it)",
        "- yesno for tiny-t5: run notebooks/03_prompting.ipynb with model='tiny-t5', dataset='blimp'"]


def test_a_table_never_mixes_settings_and_the_analyses_choose_as_02_scored(store, tmp_path):
    """m1's lp also stored in bfloat16 and 4-bit: reading m1 without a choice is an error naming
    both settings; the choice of 04/05/08's parameters reads one of them, never both."""
    from helpers.settings import Settings
    from helpers.store import ScoreStore, read_metadata

    first = next(f for f in store if f.parent.name == "m1" and f.name == "lp.parquet")
    meta = read_metadata(first)
    frame = pd.read_parquet(first).assign(score_good=0.25)
    config = {k: meta[k] for k in ("model_name", "method", "template_id", "dataset", "weights")}
    ScoreStore(tmp_path / "scores").write(frame, "blimp", "m1", "lp", None, {**config, "quant": "4bit", "dtype": "bfloat16"})
    with pytest.raises(ValueError) as err:
        report.stored_scores("m1", "blimp", ["lp", "yesno"])
    assert str(err.value).startswith(
        "- m1 on blimp has scores under 2 settings (quant=4bit, dtype=bfloat16, start=None, revision=None (lp); "
        "quant=None, dtype=None, start=None, revision=None (lp, yesno)), and a table never mixes them: choose one")
    chosen, _ = report.stored_scores("m1", "blimp", ["lp"], where=Settings(quant="4bit").score_filter())
    assert set(chosen.score_good) == {0.25}  # the 4-bit file only
    assert Settings(quant="none", dtype="bfloat16", start="token:<s>", revision="v1").score_filter() == {
        "quant": None, "dtype": "bfloat16", "start_convention": "token", "start_token": "<s>", "revision": "v1"}


def test_save_table_writes_csv_markdown_and_sidecar(store, tmp_path):
    scores, _ = report.stored_scores("m1", "blimp", ["lp"])
    table = pd.DataFrame({"method": ["lp", "yesno"], "accuracy": [0.8125, 0.5], "pairs": [24, 24]})
    config = {"model": "m1", "dataset": "blimp", "seed": 0}
    written = report.save_table(table, "t1__blimp", config=config, sources=scores)
    folder = tmp_path / "tables"
    assert written == [folder / "t1__blimp.csv", folder / "t1__blimp.md", folder / "t1__blimp.csv.json"]
    pd.testing.assert_frame_equal(pd.read_csv(written[0]), table)
    assert written[1].read_text().splitlines() == [
        "| method   |   accuracy |   pairs |", "|:---------|-----------:|--------:|",
        "| lp       |      0.812 |      24 |", "| yesno    |      0.500 |      24 |"]
    sidecar = json.loads(written[2].read_text())
    assert sidecar["config"] == config and sidecar["files"] == ["t1__blimp.csv", "t1__blimp.md"]
    assert sidecar["score_files"] == ["scores/blimp/m1/lp.parquet"]  # relative to the outputs folder it sits in
    assert report.sidecar_score_files(written[2]) == [tmp_path / "scores" / "blimp" / "m1" / "lp.parquet"]
    assert sidecar["git_commit"] == provenance.git_commit()
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in written)  # no temporary files left


def test_save_table_needs_known_sources(tmp_path):
    table = pd.DataFrame({"a": [1]})
    with pytest.raises(ValueError, match="does not name its score files"):
        report.save_table(table, "x", config={}, sources=table, root=tmp_path)
    assert not (tmp_path / "tables" / "x.csv").exists()
    written = report.save_table(table, "x", config={"k": 1}, sources=["s1.parquet", "s2.parquet"], root=tmp_path)
    assert json.loads(written[2].read_text())["score_files"] == ["s1.parquet", "s2.parquet"]


def test_save_figure_writes_png_pdf_and_sidecar(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    written = report.save_figure(fig, "f__blimp", config={"model": "m1"}, sources=["a.parquet"], root=tmp_path)
    folder = tmp_path / "figures"
    assert written == [folder / "f__blimp.png", folder / "f__blimp.pdf", folder / "f__blimp.png.json"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written[1].read_bytes()[:5] == b"%PDF-"
    sidecar = json.loads(written[2].read_text())
    assert sidecar == {**sidecar, "files": ["f__blimp.png", "f__blimp.pdf"], "config": {"model": "m1"},
                       "score_files": ["a.parquet"], "git_commit": provenance.git_commit()}
    plt.close(fig)


def _titles(fig):
    return [ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_phenomena_vs_humans_one_panel_per_model():
    table = pd.DataFrame({"model": ["m1"] * 4 + ["m2"] * 4, "method": ["lp", "lp", "yesno", "yesno"] * 2,
                          "phenomenon": ["X", "Y"] * 4, "accuracy": [0.5, 0.75, 0.25, 1.0, 0.6, 0.7, 0.8, 0.9],
                          "human": [0.9, 0.8] * 4})
    fig = plots.phenomena_vs_humans(table, "accuracy by phenomenon on blimp")
    assert fig._suptitle.get_text() == "accuracy by phenomenon on blimp" and _titles(fig) == ["m1", "m2"]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "accuracy" and ax.get_xlabel() == "phenomenon" and ax.get_ylim() == (0, 1)
    heights = sorted(round(p.get_height(), 6) for p in ax.patches if p.get_height() > 0)
    assert heights == [0.25, 0.5, 0.75, 1.0]
    humans = ax.collections[-1].get_offsets()
    assert np.asarray(humans).tolist() == [[0, 0.9], [1, 0.8]]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["lp", "yesno", "humans"]
    plt.close(fig)
    # with each cell's n, every bar says it, and ° where its Wilson interval covers 50% (4 of 4 right does not)
    fig = plots.phenomena_vs_humans(table.assign(pairs=[8, 4, 8, 4] * 2), "accuracy by phenomenon on blimp")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts[:4] == ["°8", "°4", "°8", "4"] and texts[-1] == "bar labels: n pairs; ° 95% interval covers 50%"
    plt.close(fig)


def test_attractor_and_word_shuffle_figures():
    sv = pd.DataFrame({"model": "m1", "method": ["lp", "lp"], "attractor": ["none", "relational noun"],
                       "accuracy": [0.9, 0.6]})
    fig = plots.attractor_bars(sv, "subject-verb agreement by attractor")
    ax = fig.axes[0]
    assert fig._suptitle.get_text() == "subject-verb agreement by attractor" and ax.get_title() == "m1"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("method", "accuracy")
    assert sorted(round(p.get_height(), 6) for p in ax.patches if p.get_height() > 0) == [0.6, 0.9]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["none", "relational noun"]
    plt.close(fig)
    shuffle = pd.DataFrame({"model": "m1", "method": ["lp"] * 3, "paradigm": ["a", "b", "c"],
                            "accuracy": [0.2, 0.4, 0.9], "word_shuffle": [True, True, False]})
    fig = plots.word_shuffle_dots(shuffle, "word-shuffling paradigms")
    ax = fig.axes[0]
    assert (ax.get_title(), ax.get_ylabel(), ax.get_legend().get_title().get_text()) == (
        "m1", "paradigm accuracy", "word-shuffling paradigm")
    dots = sorted(y for c in ax.collections for _, y in np.asarray(c.get_offsets()))
    assert dots == pytest.approx([0.2, 0.4, 0.9])
    plt.close(fig)


def test_accuracy_by_length_and_gap_scatter():
    by_len = pd.DataFrame({"model": "m1", "method": ["lp"] * 3, "length_diff": [-1, 0, 1],
                           "accuracy": [0.2, 0.5, 0.9], "ci_low": [0.1, 0.4, 0.8], "ci_high": [0.3, 0.6, 1.0]})
    fig = plots.accuracy_by_length(by_len, "accuracy by length difference")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "token length difference, acceptable - unacceptable (clipped)"
    assert ax.get_lines()[0].get_label() == "lp"
    assert ax.get_lines()[0].get_xydata().tolist() == [[-1, 0.2], [0, 0.5], [1, 0.9]]
    plt.close(fig)
    gaps = pd.DataFrame({"model": ["m1"] * 3 + ["m2"] * 3, "paradigm": list("pqr") * 2,
                         "gap": [0.1, 0.2, 0.3, 0.0, -0.1, 0.1], "mean_length_diff": [0, 1, 2, 0, 1, 2],
                         "pearson_r": [1.0] * 3 + [0.0] * 3})
    fig = plots.gap_scatter(gaps, "yesno minus intemplate_lp per paradigm")
    assert _titles(fig) == ["m1 (Pearson r = 1.00)", "m2 (Pearson r = 0.00)"]
    assert fig.axes[0].get_xlabel() == "mean token length difference (acceptable - unacceptable)"
    assert fig.axes[0].get_ylabel() == "accuracy gap"
    plt.close(fig)


def test_phenomenon_heatmap_annotates_percentages():
    matrix = pd.DataFrame({"lp": [0.5, 0.755], "yesno": [1.0, 0.25]}, index=["X", "Y"])
    fig = plots.phenomenon_heatmap(matrix, "demo-en on blimp")
    ax = fig.axes[0]
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("demo-en on blimp", "method (best template)",
                                                                  "phenomenon")
    assert [t.get_text() for t in ax.texts] == ["50", "100", "76", "25"]
    plt.close(fig)
    counts = pd.DataFrame({"lp": [10, 200], "yesno": [4, 8]}, index=["X", "Y"])
    fig = plots.phenomenon_heatmap(matrix, "demo-en on blimp", counts=counts)  # each cell's n; ° where it covers 50%
    # Wilson: 4 of 4 is 51.0-100 (not chance), 2 of 8 is 7.1-59.1 (covers 50)
    assert [t.get_text() for t in fig.axes[0].texts] == ["50°\nn=10", "100\nn=4", "76\nn=200", "25°\nn=8"]
    assert "° its 95% interval covers 50%" in fig.axes[0].get_xlabel()
    plt.close(fig)


def test_figure_numbers_follow_ide_et_al():
    """Figure 4 is subject-verb agreement by attractor, Figure 5 word shuffling."""
    assert "Fig. 4" in plots.attractor_bars.__doc__ and "Fig. 5" in plots.word_shuffle_dots.__doc__
