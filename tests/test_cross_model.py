"""Cross-model tables (helpers.analysis.cross_model): exact values on hand-made scores, parity
with the one-model summaries, and the notebooks 03/04/05 over two tiny models and demo-en,
with the list form of ``model`` through papermill's command line and through the sweep."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from helpers import paths
from helpers.analysis import accuracy, cross_model, hu_levy
from helpers.analysis.metrics import balanced_accuracy
from helpers.settings import Settings

MODELS = ["tiny-gpt2", "tiny-llama", "demo-en"]


def _pairs(model, method, phenomenon, n_correct, n, template=1):
    return pd.DataFrame({"model": model, "method": method, "template": str(template), "phenomenon": phenomenon,
                         "paradigm": phenomenon, "pair_id": range(n), "correct": np.arange(n) < n_correct,
                         "tie": False})


def test_phenomenon_wins_counts_models_and_marks_as_the_paper_does():
    # X: a beats b by 50, 50 and 0 points; Y: b beats a by exactly 1 point, 50 and 25 points
    rows = []
    for model, (xa, xb, ya, yb) in {"m1": (100, 50, 49, 50), "m2": (75, 25, 0, 50), "m3": (50, 50, 25, 50)}.items():
        rows += [_pairs(model, "a", "X", xa, 100), _pairs(model, "b", "X", xb, 100),
                 _pairs(model, "a", "Y", ya, 100), _pairs(model, "b", "Y", yb, 100)]
    scores = pd.concat(rows, ignore_index=True)
    wins = cross_model.phenomenon_wins(scores, "a", "b").set_index("phenomenon")
    assert wins.loc["X", ["models", "a_wins", "b_wins"]].tolist() == [3, 2, 0]
    assert wins.loc["Y", ["a_wins", "b_wins"]].tolist() == [0, 3]  # exactly the margin counts
    assert wins.marked.to_dict() == {"X": "", "Y": "b"}  # k defaults to every model
    assert cross_model.phenomenon_wins(scores, "a", "b", k=2).set_index("phenomenon").marked.to_dict() == {
        "X": "a", "Y": "b"}
    assert cross_model.phenomenon_wins(scores, "a", "b", margin=0.02).set_index("phenomenon").loc["Y", "b_wins"] == 2
    assert wins.loc["X", "mean_difference"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    with pytest.raises(ValueError, match="between 1 and the number of models"):
        cross_model.phenomenon_wins(scores, "a", "b", k=4)
    with pytest.raises(ValueError, match=r"no scores of \['c'\]"):
        cross_model.phenomenon_wins(scores, "a", "c")


def test_table4_mean_averages_over_models():
    t4 = pd.DataFrame({"model": ["m1", "m2", "m1", "m2"], "method": ["lp", "lp", "yesno", "yesno"],
                       "r": [0.2, 0.4, -0.1, 0.1], "accuracy": [0.7, 0.9, 0.8, 0.6],
                       "tie_share_counted_wrong": [0.0, 0.0, 0.1, 0.3]})
    t4 = accuracy.with_tie_range(t4)
    mean = cross_model.table4_mean(t4).set_index("method")
    assert mean.loc["lp", "r_mean"] == pytest.approx(0.3) and mean.loc["lp", "r_sd"] == pytest.approx(0.2 / 2 ** 0.5)
    assert mean.loc["yesno", "accuracy_mean"] == pytest.approx(0.7) and (mean.models == 2).all()
    assert mean.loc["yesno", "expected_accuracy_mean"] == pytest.approx((0.85 + 0.75) / 2)  # ties half
    assert mean.loc["yesno", "accuracy_ties_right_mean"] == pytest.approx(0.9)  # every tie right
    assert mean.loc["lp", "expected_accuracy_mean"] == pytest.approx(0.8)


def _hl_scores(seed=0) -> pd.DataFrame:
    """Made-up stored Hu & Levy scores of two models: word prediction and sentence judgment."""
    rng = np.random.default_rng(seed)
    frames = []
    for model in ("m1", "m2"):
        for prompt in ("direct", "metaQuestionSimple"):
            lp = rng.normal(-8, 2, 12)
            frames.append(pd.DataFrame({"model": model, "method": "hl_word_prediction", "template": prompt,
                                        "dataset": "hl_p18", "item_id": range(1, 13), "score": lp}))
            good, bad = rng.normal(-30, 3, 10), rng.normal(-31, 3, 10)
            frame = pd.DataFrame({"model": model, "method": "hl_sentence_judgment", "template": prompt,
                                  "dataset": "hl_blimp", "paradigm": "p", "pair_id": range(10)})
            if prompt == "direct":
                frame = frame.assign(score_good=good, score_bad=bad, correct=good > bad, tie=False)
            else:
                yes_good, no_good = rng.normal(-1, 1, 10), rng.normal(-1.2, 1, 10)
                yes_bad, no_bad = rng.normal(-1.1, 1, 10), rng.normal(-1, 1, 10)
                frame = frame.assign(score_good=yes_good, score_bad=yes_bad, correct=yes_good > yes_bad, tie=False,
                                     lp_yes_good=yes_good, lp_no_good=no_good, lp_yes_bad=yes_bad, lp_no_bad=no_bad)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_hu_levy_measures_equal_the_one_model_summary():
    scores = _hl_scores()
    summary = hu_levy.summarize(scores).set_index(["model", "stimuli", "task", "prompt"])
    perf = cross_model.performance(scores, pooled=False, n_resamples=500).set_index(
        ["model", "stimuli", "task", "prompt"])
    for key, row in perf.iterrows():
        want = summary.loc[key]
        expected = (want.mean_logprob if key[2] == "word_prediction" else
                    want.balanced_accuracy if key[3] != "direct" else want.accuracy)
        assert row.value == pytest.approx(expected, abs=1e-12), key
        assert row.ci_low <= row.value <= row.ci_high
    meta = scores[(scores.model == "m2") & (scores.template == "metaQuestionSimple") & (scores.method ==
                                                                                         "hl_sentence_judgment")]
    by_hand = balanced_accuracy([True] * 10 + [False] * 10,
                                list(meta.lp_yes_good > meta.lp_no_good) + list(meta.lp_yes_bad > meta.lp_no_bad))
    assert perf.loc[("m2", "hl_blimp", "sentence_judgment", "metaQuestionSimple"), "value"] == pytest.approx(by_hand)


def test_the_mean_over_models_and_its_bootstrap_over_models():
    perf = cross_model.performance(_hl_scores(), pooled=True, n_resamples=500)
    across = cross_model.across_models(perf, n_resamples=500).set_index(["task", "prompt"])
    for (task, prompt), g in perf.groupby(["task", "prompt"]):
        row = across.loc[(task, prompt)]
        assert row.value == pytest.approx(g.value.mean()) and row.models == 2
        assert g.value.min() - 1e-12 <= row.ci_low <= row.ci_high <= g.value.max() + 1e-12
    table = cross_model.figure2_table(_hl_scores(), n_resamples=500)
    assert list(table.model.unique()) == ["m1", "m2", cross_model.ALL_MODELS]
    again = cross_model.figure2_table(_hl_scores(), n_resamples=500)
    pd.testing.assert_frame_equal(table, again)  # seeded


def test_consistency_matrices_and_scatter_points_agree_with_the_summary():
    scores = _hl_scores()
    summary = hu_levy.summarize(scores)
    table = cross_model.consistency(scores)
    fig3 = cross_model.consistency_matrix(table)
    meta = summary[summary.prompt == "metaQuestionSimple"]
    for (task, stimuli), g in meta.groupby(["task", "stimuli"]):
        assert fig3.loc[f"{task} · {stimuli}", "metaQuestionSimple"] == pytest.approx(g.consistency_r.mean())
    fig6 = cross_model.consistency_matrix(table, by_model=True)
    assert fig6.loc[("m1", "word_prediction · hl_p18"), "metaQuestionSimple"] == pytest.approx(
        meta[(meta.model == "m1") & (meta.task == "word_prediction")].consistency_r.iloc[0])
    points = cross_model.direct_vs_meta(scores)
    for (model, task), g in points.groupby(["model", "task"]):
        r = np.corrcoef(g.direct, g.meta)[0, 1]
        assert r == pytest.approx(meta[(meta.model == model) & (meta.task == task)].consistency_r.iloc[0])
    assert len(points) == 2 * (12 + 10) and cross_model.models_tag(["a", "b/c"]) == "a+b_c"


def test_plots_draw_each_figure():
    from helpers.plots import cross_model as pcm

    scores = _hl_scores()
    assert len(pcm.prompt_performance(cross_model.figure2_table(scores, n_resamples=200), "t").axes) == 2
    table = cross_model.consistency(scores)
    assert pcm.consistency_heatmap(cross_model.consistency_matrix(table), "t").axes
    assert len(pcm.consistency_heatmaps(cross_model.consistency_matrix(table, by_model=True), "t").axes) >= 2
    assert len(pcm.direct_meta_scatter(cross_model.direct_vs_meta(scores), "t").axes) == 2


def test_mandarin_word_prediction_sets_load_and_run(tmp_path, monkeypatch, tiny):
    """Appendix D: News-zh (90 items) and the simple sentences (3), with the Chinese prompts."""
    from helpers import data
    from helpers.data.selection import select
    from helpers.methods.hu_levy import default_sets
    from helpers.store import ScoreStore, load_files, read_metadata
    from helpers.runner import run_methods
    from helpers.engine import Request, CausalScorer

    assert len(data.load("hl_news_zh")) == 90 and len(data.load("hl_simple_zh")) == 3
    assert data.load("hl_simple_zh").continuation.tolist() == ["内", "的", "的"]
    assert default_sets("zh") == ["hl_mandarin", "hl_news_zh", "hl_simple_zh"]
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    scorer = CausalScorer(tiny("tiny-qwen2"), Settings(progress=False))
    files = run_methods(
        scorer,
        select("hl_simple_zh"),
        ["hl_word_prediction"],
        {"templates": ["direct", "metaQuestionSimple"]},
        store=ScoreStore(tmp_path / "scores"),
    )
    scores = load_files(files)
    direct = scores[scores.template == "direct"].set_index("item_id").score
    assert direct[1] == pytest.approx(scorer.score([Request("孩子们在大楼", "内")])[0].total, abs=1e-6)
    assert "哪一个词" in read_metadata(files[1])["template_text"]


# ------------------------------------------------------------------ the notebooks
@pytest.fixture(scope="module")
def store(tmp_path_factory, tiny_dir):
    """02/03's scores of the three models on SyntaxGym (one pair per suite), in a scratch outputs folder."""
    import os

    from helpers.data.selection import select
    from helpers.runner import run_methods
    from helpers.engine import scorer_for

    root = tmp_path_factory.mktemp("cross")
    os.environ["HELPERS_PROCESSED_DIR"] = str(root / "processed")
    os.environ["HELPERS_OUTPUTS_DIR"] = str(root / "outputs")
    selection = select("syntaxgym", 1)
    for model in MODELS:
        run_methods(
            scorer_for(model, Settings(progress=False)),
            selection,
            ["lp", "meanlp", "penlp", "slln_lp", "lp_per_byte", "intemplate_lp", "yesno", "ab_logit"],
            {"templates": [1, 2, 3, 4, 5], "use_outlines": False},
        )
    yield root
    for key in ("HELPERS_PROCESSED_DIR", "HELPERS_OUTPUTS_DIR"):
        os.environ.pop(key, None)


@pytest.mark.slow
def test_04_and_05_take_a_list_of_models_through_papermill_and_the_sweep(store):
    from helpers import sweep
    from helpers.analysis import length_bias
    from helpers.analysis.accuracy import at_best_template
    from helpers.store import load_scores

    out = store / "outputs"
    listed = json.dumps(MODELS)
    cli = subprocess.run([sys.executable, "-m", "papermill", str(paths.NOTEBOOKS / "04_ensembles.ipynb"),
                          str(store / "04.ipynb"), "-p", "model", listed, "-p", "dataset", "syntaxgym",
                          "-p", "ab_method", "ab_logit", "-p", "resamples", "100", "-p", "trials", "3",
                          "-p", "k_models", "2", "--cwd", str(paths.NOTEBOOKS)], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr[-3000:]
    scores = load_scores("syntaxgym", None, ["lp", "intemplate_lp", "yesno", "ab_logit"])
    wins = pd.read_csv(out / "tables" / "04_phenomenon_wins__syntaxgym.csv", keep_default_na=False)
    expected = cross_model.phenomenon_wins(scores, "intemplate_lp", "yesno", 0.01, 2)
    assert (wins.models == 3).all() and wins.marked.tolist() == expected.marked.tolist()
    assert wins.intemplate_lp_wins.tolist() == expected.intemplate_lp_wins.tolist()
    ens = pd.read_csv(out / "tables" / "04_ensembles_mean__syntaxgym.csv")
    assert (ens.models == 3).all() and len(ens) == 6
    assert (out / "figures" / "04_phenomenon_wins__syntaxgym.png").is_file()

    jobs = sweep.plan(["05"], [listed], ["syntaxgym"], {"methods": "lp,intemplate_lp,yesno,ab_logit",
                                                        "resamples": 100})
    done = sweep.run(jobs)
    assert len(done) == 1 and sweep.finished(done[0])
    t4 = pd.read_csv(out / "tables" / "05_point_biserial__syntaxgym.csv", dtype={"template": str})
    assert sorted(t4.model.unique()) == sorted(MODELS)
    mean = pd.read_csv(out / "tables" / "05_point_biserial_mean__syntaxgym.csv").set_index("method")
    best = at_best_template(scores, ["lp", "intemplate_lp", "yesno", "ab_logit"])
    by_model = length_bias.correlation_table(best).groupby("method").r.mean()
    for method, r in by_model.items():
        assert mean.loc[method, "r_mean"] == pytest.approx(r) and mean.loc[method, "models"] == 3
    linking = pd.read_csv(out / "tables" / "05_linking_point_biserial__syntaxgym.csv")  # the functions side by side
    functions = ["lp", "meanlp", "penlp", "slln_lp", "lp_per_byte"]
    assert sorted(zip(linking.model, linking.method)) == sorted((m, f) for m in MODELS for f in functions)
    expected = length_bias.table4(at_best_template(load_scores("syntaxgym", None, functions), functions), 100, 0)
    np.testing.assert_allclose(linking.sort_values(["model", "method"]).r.to_numpy(float),
                               expected.sort_values(["model", "method"]).r.to_numpy(float), equal_nan=True)


@pytest.mark.slow
def test_03_hu_levy_part_across_two_tiny_models_and_demo_en(store):
    import papermill as pm

    out = store / "outputs"
    pm.execute_notebook(str(paths.NOTEBOOKS / "03_prompting.ipynb"), str(store / "03.ipynb"),
                        parameters=dict(model="tiny-gpt2", dataset="syntaxgym", limit=1, templates=[1],
                                        methods="yesno", use_outlines=False, fewshot_ks=[],
                                        hu_levy_sets="hl_syntaxgym,hl_p18", hu_levy_limit=1,
                                        hu_levy_models=MODELS),
                        cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    tag = "+".join(MODELS)
    fig2 = pd.read_csv(out / "tables" / f"03_hl_figure2__{tag}.csv")
    assert set(fig2.model) == {*MODELS, cross_model.ALL_MODELS}
    assert set(fig2.task) == {"word_prediction", "sentence_judgment", "sentence_comparison"}
    mean = fig2[fig2.model == cross_model.ALL_MODELS].set_index(["task", "prompt"]).value
    per_model = fig2[fig2.model != cross_model.ALL_MODELS].groupby(["task", "prompt"]).value.mean()
    pd.testing.assert_series_equal(mean.sort_index(), per_model.sort_index(), check_names=False)
    summary = pd.read_csv(out / "tables" / f"03_hu_levy__{tag}.csv")
    assert set(summary.model) == set(MODELS)
    fig3 = pd.read_csv(out / "tables" / f"03_hl_figure3__{tag}.csv").set_index("row")
    meta = summary[summary.prompt == "metaInstruct"]
    sj = meta[(meta.task == "sentence_judgment") & (meta.stimuli == "hl_syntaxgym")].consistency_r.mean()
    assert fig3.loc["sentence_judgment · hl_syntaxgym", "metaInstruct"] == pytest.approx(sj)
    for stem in ("03_hl_figure2", "03_hl_figures4-5", "03_hl_figure3", "03_hl_figure6",
                 "03_hl_scatter_word_prediction_hl_p18", "03_hl_scatter_sentence_comparison_hl_syntaxgym"):
        assert (out / "figures" / f"{stem}__{tag}.png").is_file(), stem
