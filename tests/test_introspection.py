"""Introspection (Song, Hu & Mahowald 2025; helpers.analysis.introspection and
introspection_comparison): a synthetic store of three models written through the real store,
where mA's prompted answers track mB's string probabilities, mB's track its own and mC's
nothing; the matrix recovers the planted structure exactly, the self comparison says "no" for
mA and "yes" for mB, the paper's regression recovers planted coefficients exactly and agrees
with least squares by hand, and notebook 03 runs the section over a list of models."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.analysis import introspection as intro
from helpers.analysis import introspection_comparison as comp
from helpers.analysis.pair_correlation import correlation
from helpers.settings import Settings
from helpers.store import ScoreStore, load_files, load_scores

N = 40  # pairs: two paradigms of 20
TEMPLATES = [1, 2, 3, 4, 5]
HL_PROMPTS = ["metaQuestionSimple", "metaInstruct"]


def _vectors(seed: int = 7) -> dict[str, np.ndarray]:
    """Direct differentials of mA, mB, mC (mA and mB share a component) and mC's unrelated Meta target."""
    rng = np.random.default_rng(seed)
    g, ua, ub, uc, vc = rng.normal(size=(5, N))
    return {"mA": g + 0.8 * ua, "mB": g + 0.8 * ub, "mC": uc, "vC": vc}


def _metas(v: dict, noise: float, k: int, seed: int = 11) -> dict[str, list[np.ndarray]]:
    """Per model, k prompts' Meta differentials: mA's an affine function of mB's Direct, mB's of
    its own, mC's of an unrelated vector; plus ``noise`` times seeded standard normals."""
    rng = np.random.default_rng(seed)
    targets = {"mA": v["mB"], "mB": v["mB"], "mC": v["vC"]}
    return {m: [(0.5 + 0.3 * t) * x + 0.1 * t + noise * rng.normal(size=N) for t in range(k)]
            for m, x in targets.items()}


def _log_sigmoid(z):
    return -np.logaddexp(0.0, -z)


def _pairs(dataset: str) -> pd.DataFrame:
    return pd.DataFrame({"dataset": dataset, "paradigm": np.repeat(["p1", "p2"], N // 2),
                         "phenomenon": "ph", "pair_id": np.tile(np.arange(N // 2), 2)})


def _yes_no(meta: np.ndarray) -> dict:
    """lp_yes/lp_no columns whose log-odds differential (good minus bad) is ``meta``."""
    zg, zb = meta / 2, -meta / 2
    return {"lp_yes_good": _log_sigmoid(zg), "lp_no_good": _log_sigmoid(-zg), "lp_yes_bad": _log_sigmoid(zb),
            "lp_no_bad": _log_sigmoid(-zb)}


def write_store(root, noise: float = 0.0) -> list:
    """lp and yesno (templates 1-5) on "blimp", and Hu & Levy's sentence judgment (direct and two
    prompts) on "hl_blimp", for mA, mB and mC, through ScoreStore."""
    store, v = ScoreStore(root), _vectors()
    metas, hl_metas = _metas(v, noise, len(TEMPLATES)), _metas(v, noise, len(HL_PROMPTS), seed=12)
    files = []
    for model in ("mA", "mB", "mC"):
        d = v[model]
        direct = _pairs("blimp").assign(score_good=-30 + d / 2, score_bad=-30 - d / 2, correct=d > 0, tie=False)
        config = {"model_name": model, "dataset": "blimp", "weights": model}
        files.append(store.write(direct, "blimp", model, "lp", None, {**config, "method": "lp", "template_id": None}))
        for t, meta in zip(TEMPLATES, metas[model]):
            yn = _yes_no(meta)
            p_good, p_bad = np.exp(yn["lp_yes_good"]), np.exp(yn["lp_yes_bad"])
            frame = _pairs("blimp").assign(score_good=p_good, score_bad=p_bad, correct=p_good > p_bad, tie=False,
                                           **yn)
            files.append(store.write(frame, "blimp", model, "yesno", t,
                                     {**config, "method": "yesno", "template_id": t}))
        hl = {**config, "dataset": "hl_blimp", "method": "hl_sentence_judgment"}
        frame = _pairs("hl_blimp").assign(score_good=-30 + d / 2, score_bad=-30 - d / 2, correct=d > 0, tie=False)
        files.append(store.write(frame, "hl_blimp", model, "hl_sentence_judgment", "direct",
                                 {**hl, "template_id": "direct"}))
        for prompt, meta in zip(HL_PROMPTS, hl_metas[model]):
            yn = _yes_no(meta)
            frame = _pairs("hl_blimp").assign(score_good=yn["lp_yes_good"], score_bad=yn["lp_yes_bad"],
                                              correct=meta > 0, tie=False, **yn)
            files.append(store.write(frame, "hl_blimp", model, "hl_sentence_judgment", prompt,
                                     {**hl, "template_id": prompt}))
    return files


def _r(x, y) -> float:
    return float(np.corrcoef(x, y)[0, 1])


@pytest.fixture
def exact(tmp_path):
    return load_files(write_store(tmp_path / "scores", noise=0.0))


@pytest.fixture
def noisy(tmp_path):
    return load_files(write_store(tmp_path / "scores", noise=0.3))


def test_item_measures_read_direct_and_the_log_odds_of_yes_from_the_store(exact, tmp_path):
    items = intro.item_measures(exact)
    assert sorted(set(zip(items.measure, items.stimuli))) == [("hl_sentence_judgment", "hl_blimp"),
                                                               ("yesno", "blimp")]
    assert len(items) == 3 * N * (len(TEMPLATES) + len(HL_PROMPTS)) and items.paired.all()
    v, metas = _vectors(), _metas(_vectors(), 0.0, len(TEMPLATES))
    row = items[(items.measure == "yesno") & (items.model == "mA") & (items.prompt == "3")].set_index("item")
    np.testing.assert_allclose(row.loc[[f"p1:{i}" for i in range(N // 2)], "meta"], metas["mA"][2][:N // 2],
                               atol=1e-12)
    np.testing.assert_allclose(row.loc[[f"p2:{i}" for i in range(N // 2)], "direct"], v["mA"][N // 2:], atol=1e-12)
    again = intro.item_measures(load_scores(root=tmp_path / "scores"))  # load_scores: the same rows
    pd.testing.assert_frame_equal(items.sort_values(["measure", "model", "prompt", "item"]).reset_index(drop=True),
                                  again.sort_values(["measure", "model", "prompt", "item"]).reset_index(drop=True))


def test_ab_measure_is_the_log_prob_of_the_acceptable_slots_letter_minus_the_others():
    base = {"model": "m", "dataset": "blimp", "template": "1", "paradigm": "p", "pair_id": [0, 1, 2],
            "good_slot": ["A", "B", "A"], "lp_a": [-0.5, -0.2, -3.0], "lp_b": [-1.5, -2.2, -0.1]}
    lp = pd.DataFrame({"model": "m", "dataset": "blimp", "method": "lp", "template": "none", "paradigm": "p",
                       "pair_id": [0, 1, 2], "score_good": [-10.0, -11.0, -12.0], "score_bad": [-11.0, -10.0, -15.0]})
    outlines = pd.DataFrame({**base, "method": "ab", "score_good": [1.0, 0.0, 0.0], "score_bad": [0.0, 1.0, 1.0]})
    logit = pd.DataFrame({**base, "method": "ab_logit", "score_good": [-0.5, -2.2, -3.0],
                          "score_bad": [-1.5, -0.2, -0.1]})
    for frame in (outlines, logit):  # an "ab" file alone is read through its letters' log-probs too
        items = intro.item_measures(pd.concat([lp, frame], ignore_index=True))
        assert items.measure.unique().tolist() == ["ab_logit"]
        assert items.meta.tolist() == pytest.approx([1.0, -2.0, -2.9]) and items.direct.tolist() == [1.0, -1.0, 3.0]


def test_the_matrix_recovers_the_planted_structure_exactly(exact):
    v = _vectors()
    table = intro.matrix(intro.item_measures(exact), n_resamples=200)
    mean = table[table.prompt == intro.MEAN].set_index(["measure", "meta_model", "direct_model"])
    for measure in ("yesno", "hl_sentence_judgment"):
        cell = mean.loc[measure]
        assert cell.loc[("mA", "mB"), "r"] == pytest.approx(1.0, abs=1e-12)  # A's answers: B's probabilities
        assert cell.loc[("mB", "mB"), "r"] == pytest.approx(1.0, abs=1e-12)
        for other in ("mA", "mC"):  # an affine function of Direct_B correlates with Direct_X as Direct_B does
            assert cell.loc[("mA", other), "r"] == pytest.approx(_r(v["mB"], v[other]), abs=1e-12)
            assert cell.loc[("mB", other), "r"] == pytest.approx(cell.loc[("mB", other), "r_direct"], abs=1e-12)
        for other in ("mA", "mB", "mC"):
            assert cell.loc[("mC", other), "r"] == pytest.approx(_r(v["vC"], v[other]), abs=1e-12)
        assert cell.loc[("mA", "mC"), "r_direct"] == pytest.approx(_r(v["mA"], v["mC"]), abs=1e-12)
        assert (cell.loc[cell.self, "r_direct"] == 1.0).all() and cell.self.sum() == 3
        assert (cell["items"] == N).all()
    best = intro.wide(table).loc["yesno"].loc["blimp"].idxmax(axis=1)
    assert best["mA"] == "mB" and best["mB"] == "mB"
    per_prompt = table[(table.measure == "yesno") & (table.prompt != intro.MEAN)]
    assert sorted(per_prompt.prompt.unique()) == ["1", "2", "3", "4", "5"] and len(per_prompt) == 9 * 5
    assert (table[(table.measure == "yesno") & (table.prompt == intro.MEAN)].prompts == 5).all()


def test_noise_keeps_the_argmax_and_the_mean_over_prompts_is_the_mean_of_the_prompts(noisy):
    table = intro.matrix(intro.item_measures(noisy), n_resamples=300, seed=3)
    for measure in ("yesno", "hl_sentence_judgment"):
        w = intro.wide(table).xs(measure, level="measure").droplevel("stimuli")
        assert w.idxmax(axis=1)[["mA", "mB"]].tolist() == ["mB", "mB"]
        assert w.loc["mA", "mB"] < 1.0 and w.loc["mA", "mB"] > 0.9
    cells = table[table.measure == "yesno"]
    for (a, b), g in cells.groupby(["meta_model", "direct_model"]):
        assert g[g.prompt == intro.MEAN].r.iloc[0] == pytest.approx(g[g.prompt != intro.MEAN].r.mean(), abs=1e-12)
        row = g[g.prompt == intro.MEAN].iloc[0]
        assert row.ci_low <= row.r <= row.ci_high
    pd.testing.assert_frame_equal(table, intro.matrix(intro.item_measures(noisy), n_resamples=300, seed=3))  # seeded


def test_one_prompt_interval_is_pair_correlations_bootstrap(noisy):
    items = intro.item_measures(noisy)
    one = items[(items.measure == "yesno") & (items.prompt == "2")]
    table = intro.matrix(one, n_resamples=500, seed=5)
    row = table[(table.meta_model == "mC") & (table.direct_model == "mA") & (table.prompt == intro.MEAN)].iloc[0]
    meta = one[one.model == "mC"].set_index("item").sort_index()
    direct = one[one.model == "mA"].set_index("item").sort_index()
    want = correlation(meta.meta.to_numpy(), direct.direct.to_numpy(), n_resamples=500, seed=5)
    assert (row.r, row.ci_low, row.ci_high, row["items"]) == pytest.approx(
        (want["r"], want["ci_low"], want["ci_high"], want["n"]), abs=1e-12)


def test_the_self_comparison_says_no_for_mA_and_yes_for_mB(exact, noisy):
    v = _vectors()
    for scores in (exact, noisy):
        own = intro.self_vs_others(intro.item_measures(scores), n_resamples=500).set_index(["measure", "meta_model"])
        for measure in ("yesno", "hl_sentence_judgment"):
            assert own.loc[(measure, "mA"), "introspection"] == "no"
            assert own.loc[(measure, "mA"), "best_other"] == "mB" and own.loc[(measure, "mA"), "ci_high"] < 0
            assert own.loc[(measure, "mB"), "introspection"] == "yes" and own.loc[(measure, "mB"), "ci_low"] > 0
            assert own.loc[(measure, "mC"), "introspection"] == "no"
    own = intro.self_vs_others(intro.item_measures(exact), n_resamples=200).set_index(["measure", "meta_model"])
    assert own.loc[("yesno", "mA"), "advantage"] == pytest.approx(_r(v["mB"], v["mA"]) - 1.0, abs=1e-12)
    assert own.loc[("yesno", "mB"), "advantage"] == pytest.approx(
        1.0 - max(_r(v["mB"], v["mA"]), _r(v["mB"], v["mC"])), abs=1e-12)


def test_the_filter_keeps_items_the_models_disagree_on():
    rows = []
    # item -> (Direct of m1, m2, m3; Meta of m1, m2, m3)
    plan = {"agree": ((1, 2, 3), (1, 1, 1)), "direct_split": ((1, -2, 3), (1, -1, 1)),
            "meta_agrees": ((1, -2, 3), (1, 1, 1)), "all_wrong": ((-1, -2, -3), (1, -1, 1))}
    for item, (direct, meta) in plan.items():
        for m, d, x in zip(("m1", "m2", "m3"), direct, meta):
            rows.append({"measure": "yesno", "stimuli": "blimp", "model": m, "prompt": "1", "item": item,
                         "direct": d, "meta": x, "paired": True})
    rows.append({"measure": "hl_word_prediction", "stimuli": "hl_p18", "model": "m1", "prompt": "metaInstruct",
                 "item": "1", "direct": -3.0, "meta": -4.0, "paired": False})
    items = pd.DataFrame(rows)
    kept = intro.disagreeing(items, 0.05)
    assert sorted(kept[kept.paired].item.unique()) == ["direct_split"] and (~kept.paired).sum() == 1
    assert len(intro.disagreeing(items, 0.0)) == len(items)
    assert sorted(intro.disagreeing(items, 0.4).item.unique()) == ["1"]  # 1/3 of 3 models is below 0.4
    with pytest.raises(ValueError, match=r"share must be in \[0, 0.5\)"):
        intro.disagreeing(items, 0.5)


def _cells(y, models=("a", "b", "c", "d")):
    """Every (Meta, Direct) cell of four models with fixed similarities and r = y(a, b, similarity)."""
    sim = {frozenset(p): s for p, s in zip([("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")],
                                           [0.9, 0.7, 0.4, 0.8, 0.5, 0.6])}
    rows = []
    for a in models:
        for b in models:
            s = 1.0 if a == b else sim[frozenset((a, b))]
            rows.append({"measure": "yesno", "stimuli": "blimp", "meta_model": a, "direct_model": b,
                         "prompt": intro.MEAN, "r": y(a, b, s), "r_direct": s, "self": a == b})
    return pd.DataFrame(rows)


def test_the_papers_regression_recovers_planted_coefficients():
    family = {("a", "b"): "same family"}
    cells = _cells(lambda a, b, s: 0.1 + 0.5 * s - 0.2 * (a != b) - 0.1 * ({a, b} == {"a", "b"}))
    out = comp.comparison(cells, given=family).set_index("term")
    assert out.index.tolist() == ["intercept", "r_direct", "relation: same family", "relation: other"]
    assert out.coef.tolist() == pytest.approx([0.1, 0.5, -0.3, -0.2], abs=1e-12)
    assert (out.cells == 16).all() and (out.models == 4).all()
    assert out.loc["relation: other", "reading"] == "self above (introspection)"
    # no self advantage: the self cells lie on the others' similarity line (plus seeded noise, sd 0.03)
    rng = np.random.default_rng(0)
    noise = {(a, b): rng.normal(0, 0.03) for a in "abcd" for b in "abcd"}
    flat = comp.comparison(_cells(lambda a, b, s: 0.1 + 0.5 * s + noise[(a, b)])).set_index("term")
    assert flat.loc["relation: other", "reading"] == "no difference from self"
    assert flat.loc["relation: other", "ci_low"] < 0 < flat.loc["relation: other", "ci_high"]


def test_the_regression_agrees_with_least_squares_by_hand(noisy):
    table = intro.matrix(intro.item_measures(noisy), n_resamples=0)
    out = comp.comparison(table)
    cells = table[(table.prompt == intro.MEAN) & (table.measure == "yesno")]
    x = np.column_stack([np.ones(9), cells.r_direct, (~cells.self).astype(float)])
    beta, residual, *_ = np.linalg.lstsq(x, cells.r.to_numpy(), rcond=None)
    got = out[out.measure == "yesno"]
    assert got.term.tolist() == ["intercept", "r_direct", "relation: other"]
    assert got.coef.to_numpy() == pytest.approx(beta, abs=1e-10)
    sigma2 = residual[0] / (9 - 3)
    se = np.sqrt(np.diag(sigma2 * np.linalg.inv(x.T @ x)))
    assert got.se.to_numpy() == pytest.approx(se, rel=1e-8)
    assert comp.comparison(table[table.meta_model.isin(["mA", "mB"]) & table.direct_model.isin(["mA", "mB"])]).empty


def test_relations_from_the_registry_and_given():
    assert comp.relation("llama3", "llama3-instruct") == "base/instruct"
    assert comp.relation("llama3", "llama3-8b") == "same family"
    assert comp.relation("gpt2", "llama3") == "other" and comp.relation("mA", "mA") == "self"
    assert comp.relation("tiny-llama", "tiny-llama-instruct") == "base/instruct"
    assert comp.relation("tiny-gpt2", "tiny-llama") == "other" and comp.relation("demo-en", "demo-zh") == "other"
    assert comp.relation("x", "y", {("y", "x"): "seed variant"}) == "seed variant"
    with pytest.raises(ValueError, match="unknown relation 'twin'"):
        comp.relation("x", "y", {("x", "y"): "twin"})


def test_clear_errors(exact):
    with pytest.raises(ValueError, match="no measure has scores of two or more models"):
        intro.matrix(intro.item_measures(exact[exact.model == "mA"]))
    no_lp = exact[~((exact.method == "lp") & (exact.model == "mB"))]
    with pytest.raises(ValueError, match="yesno of mB on blimp has no Direct measure: score the same pairs with 'lp'"):
        intro.item_measures(no_lp)
    with pytest.raises(ValueError, match="hl_sentence_judgment on hl_blimp for mC: the Direct scores are missing"):
        intro.item_measures(exact[~((exact.template == "direct") & (exact.model == "mC"))])
    items = intro.item_measures(exact)
    few = items[(items.measure == "yesno") & items.item.isin(["p1:0", "p1:1"]) | (items.measure != "yesno")]
    with pytest.warns(UserWarning, match="yesno on blimp left out: 2 items left that every model has"):
        kept = intro.matrix(few, n_resamples=0)
    assert set(kept.measure) == {"hl_sentence_judgment"}  # the other measure is not lost
    with pytest.raises(ValueError, match="no measure has scores of two or more models on 3 or more items"):
        with pytest.warns(UserWarning):
            intro.self_vs_others(few[few.measure == "yesno"])


def test_figures_draw_the_matrix_and_the_similarity_scatter(exact):
    from helpers.plots import introspection as plots

    table = intro.matrix(intro.item_measures(exact), n_resamples=0)
    fig = plots.matrix_heatmaps(table, "introspection")
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert [ax.get_title() for ax in panels] == ["yesno · blimp", "hl_sentence_judgment · hl_blimp"]
    want = intro.wide(table).loc[("yesno", "blimp")]
    assert [t.get_text() for t in panels[0].texts] == [f"{x:.2f}" for x in want.to_numpy().ravel()]
    assert len(panels[0].patches) == 3  # the diagonal outlined
    fig = plots.similarity_scatter(table, "similarity")
    ax = fig.axes[0]
    assert sum(len(c.get_offsets()) for c in ax.collections) == 9
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["self", "other", "other cells: least squares"]
    with pytest.raises(ValueError, match="pass helpers.analysis.introspection.matrix's table"):
        plots.matrix_heatmaps(table.drop(columns="r"), "x")


@pytest.mark.filterwarnings("ignore:tiny-bert's tokenizer turns:UserWarning")  # its English WordPiece: expected
def test_a_run_scores_each_model_in_turn_and_lists_what_its_kind_cannot_run(scratch, tiny_dir):
    from helpers.data.selection import select
    from helpers.models.tiny_masked import build
    from helpers.runs.run import Job, Run

    folder = str(build("bert", scratch / "tiny-bert"))
    selection = select("syntaxgym", 1)
    run = Run.of(["tiny-gpt2", folder], Settings(progress=False), selection=selection)
    jobs = [Job(["yesno", "ab_logit"], changes={"templates": [1]}), Job(["lp"])]
    prompts, direct = run.files_each(jobs, models=run.models)
    refused, none = prompts.not_applicable, direct.not_applicable
    assert [(f.parent.name, f.name) for f in prompts] == [("tiny-gpt2", "yesno__t1.parquet"),
                                                          ("tiny-gpt2", "ab_logit__t1.parquet")]
    assert [f.parent.name for f in direct] == ["tiny-gpt2", "tiny-bert"] and none.empty
    assert refused[["model", "method"]].values.tolist() == [["tiny-bert", "yesno"], ["tiny-bert", "ab_logit"]]
    assert refused.not_applicable.str.contains("continuing a context left to right").all()
    written = {f: f.stat().st_mtime_ns for f in prompts + direct}
    again = run.files_each(jobs, models=run.models)  # the store has them: nothing rescored
    assert again[0] + again[1] == prompts + direct
    assert {f: f.stat().st_mtime_ns for f in prompts + direct} == written


@pytest.mark.slow
def test_03_runs_part_1_for_each_model_of_a_list_and_compares_them(scratch, tiny_dir):
    import json

    import papermill as pm

    from helpers import paths

    models = ["tiny-gpt2", "tiny-llama", "demo-en"]
    pm.execute_notebook(str(paths.NOTEBOOKS / "03_prompting.ipynb"), str(scratch / "03.ipynb"),
                        parameters=dict(model=models, dataset="syntaxgym", limit=1, templates=[1, 2],
                                        methods="yesno,ab_logit", use_outlines=False, fewshot_ks=[0, 1],
                                        fewshot_methods="yesno", hu_levy_sets="hl_syntaxgym", hu_levy_limit=1,
                                        introspection_disagree=0.0),
                        cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    tables, figures = scratch / "outputs" / "tables", scratch / "outputs" / "figures"
    tag = "+".join(models) + "__syntaxgym__limit-1"
    t3 = pd.read_csv(tables / f"03_prompting__{tag}.csv")
    assert sorted(t3.model.unique()) == sorted(models) and set(t3.method) == {"yesno", "ab_logit"}
    assert set(pd.read_csv(tables / f"03_fewshot__{tag}.csv").model) == set(models)
    matrix = pd.read_csv(tables / f"03_introspection__{tag}.csv", dtype={"prompt": str})
    assert set(zip(matrix.measure, matrix.stimuli)) == {
        ("yesno", "syntaxgym"), ("ab_logit", "syntaxgym"), ("hl_sentence_judgment", "hl_syntaxgym"),
        ("hl_sentence_comparison", "hl_syntaxgym")}
    from helpers.reporting.outputs import sidecar_score_files

    files = sidecar_score_files(tables / f"03_introspection__{tag}.csv.json")
    want = intro.matrix(intro.item_measures(load_files(files)), seed=42)
    got = matrix.set_index(["measure", "meta_model", "direct_model", "prompt"]).sort_index()
    want = want.set_index(["measure", "meta_model", "direct_model", "prompt"]).sort_index()
    assert got.index.equals(want.index)
    columns = ["r", "ci_low", "ci_high", "r_direct"]
    np.testing.assert_allclose(got[columns], want[columns], atol=1e-9)
    assert (matrix[matrix.self].relation == "self").all() and set(matrix.relation) == {"self", "other"}
    own = pd.read_csv(tables / f"03_introspection_self__{tag}.csv")
    assert len(own) == 4 * 3 and set(own.introspection) <= {"yes", "no"}
    paper = pd.read_csv(tables / f"03_introspection_comparison__{tag}.csv")
    assert set(paper.term) == {"intercept", "r_direct", "relation: other"} and (paper.models == 3).all()
    for stem in ("03_introspection", "03_introspection_similarity"):
        assert (figures / f"{stem}__{tag}.png").is_file(), stem
