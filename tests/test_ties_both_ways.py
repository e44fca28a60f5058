"""Ties counted both ways (issue 63, item 5): every table and figure that counts a tie wrong gives
beside it the expected accuracy (a tie half) and the accuracy with every tie right, from
:func:`helpers.analysis.accuracy.tie_range`. Tiny tables with planted ties, numbers by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.analysis import (comparisons, cross_model, cross_model_priming, ensembles, hu_levy, length_bias,
                              morcela, paradigms, prefix_similarity, priming_effects, separability, significance,
                              split_half)
from helpers.analysis.accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, tie_credits
from helpers.explore import figures as explore_figures, tables as explore_tables
from helpers.plots import accuracy as plots_accuracy, cross_model_priming as plots_priming
from helpers.plots import separability as plots_separability
from helpers.plots.style import plt

# ----------------------------------------------------------------- 04: ensembles, McNemar, mean, split-half
# per predictor, 4 pairs: right, and tied (a tie is never right)
P_RIGHT = {1: [1, 1, 0, 1], 2: [1, 0, 0, 1], 3: [0, 0, 0, 0], 4: [0, 0, 0, 0], 5: [0, 0, 0, 0]}
P_TIE = {1: [0, 0, 1, 0], 2: [0, 1, 1, 0], 3: [1, 1, 1, 0], 4: [1, 1, 1, 0], 5: [0, 0, 1, 0]}
L_TIE = {1: [1, 0, 0, 0]}  # every other L predictor right on every pair


def _ensemble_scores(model: str = "m") -> pd.DataFrame:
    frames = []
    for t in range(1, 6):
        frames.append(pd.DataFrame({"model": model, "method": "yesno", "template": str(t), "paradigm": "p",
                                    "pair_id": range(4), "correct": np.array(P_RIGHT[t], bool),
                                    "tie": np.array(P_TIE[t], bool)}))
        tie = np.array(L_TIE.get(t, [0] * 4), bool)
        frames.append(pd.DataFrame({"model": model, "method": "intemplate_lp", "template": str(t), "paradigm": "p",
                                    "pair_id": range(4), "correct": ~tie, "tie": tie}))
    return pd.concat(frames, ignore_index=True)


def test_ensemble_ties_are_even_splits_of_the_voters_and_the_oracle_ties_its_templates():
    table = ensembles.ensembles_by_model(_ensemble_scores(), trials=2, seed=0, resamples=10).set_index("setting")
    # P-only votes P1-P5 (abstaining when tied): pair 0 right 2 : wrong 1, pair 1 an even split 1 : 1, pair 2
    # every voter tied 0 : 0, pair 3 right 2 : wrong 3 -> 1 of 4 right, 2 of 4 tied
    p_only = table.loc["P-only"]
    assert (p_only.accuracy, p_only[TIE_SHARE_COLUMN], p_only[EXPECTED], p_only[TIES_RIGHT]) == (0.25, 0.5, 0.5, 0.75)
    l_only = table.loc["L-only"]  # L1 abstains on pair 0, the others are right: no even split
    assert (l_only.accuracy, l_only[TIE_SHARE_COLUMN], l_only[EXPECTED], l_only[TIES_RIGHT]) == (1.0, 0.0, 1.0, 1.0)
    oracle = table.loc["oracle P (best Yes/No template)"]  # P1: 3 of 4 right, its tie on pair 2
    assert (oracle.draws, oracle.accuracy, oracle[TIE_SHARE_COLUMN], oracle[EXPECTED], oracle[TIES_RIGHT]) == \
        ("P1", 0.75, 0.25, 0.875, 1.0)
    wrong = ensembles.ensembles_by_model(_ensemble_scores(), trials=2, resamples=10, ties="wrong").set_index("setting")
    # a tied vote counts wrong: at most 2 of 5 right on any pair, and 5 voters never split evenly
    assert (wrong.loc["P-only", "accuracy"], wrong.loc["P-only", TIE_SHARE_COLUMN]) == (0.0, 0.0)
    assert wrong.loc["oracle P (best Yes/No template)", TIE_SHARE_COLUMN] == 0.25  # the template's own tie


def test_ensembles_mean_over_models_averages_the_tie_range():
    both = pd.concat([_ensemble_scores("a"), _ensemble_scores("b").assign(tie=False)], ignore_index=True)
    table = ensembles.ensembles_by_model(both, trials=2, resamples=10)
    mean = cross_model.ensembles_mean(table).set_index("setting").loc["P-only"]
    # a: 0.25 (0.5, 0.75), as above; b without ties: tied votes become wrong votes, 0 right -> 0 (0, 0)
    assert (mean.models, mean.accuracy_mean, mean[EXPECTED + "_mean"], mean[TIES_RIGHT + "_mean"]) == \
        (2, 0.125, 0.25, 0.375)


A = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0]
A_TIE = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
B = [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]
B_TIE = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]


def test_mcnemar_counts_the_discordant_pairs_that_involve_ties_and_tests_without_them():
    res = significance.mcnemar(np.array(A, bool), np.array(B, bool), tie_a=A_TIE, tie_b=B_TIE)
    # 6 pairs only a right (4 of them b tied), none only b right: exact test 2 * 0.5**6; without b's
    # ties, 2 against 0: 2 * 0.5**2
    assert (res["a_only"], res["b_only"], res["a_only_b_tie"], res["b_only_a_tie"]) == (6, 0, 4, 0)
    assert res["p_value"] == pytest.approx(1 / 32, abs=1e-15) and res["p_value_ties_out"] == pytest.approx(0.5)
    assert (res["accuracy_a"], res[f"{TIE_SHARE_COLUMN}_a"], res[f"{EXPECTED}_a"], res[f"{TIES_RIGHT}_a"]) == \
        pytest.approx((0.7, 0.1, 0.75, 0.8), abs=1e-15)
    assert (res["accuracy_b"], res[f"{TIE_SHARE_COLUMN}_b"], res[f"{EXPECTED}_b"], res[f"{TIES_RIGHT}_b"]) == \
        pytest.approx((0.1, 0.5, 0.35, 0.6), abs=1e-15)


def test_headline_mcnemar_reads_the_stored_ties_of_each_side():
    def rows(method, template, correct, tie):
        return pd.DataFrame({"model": "m", "method": method, "template": template, "paradigm": "p",
                             "pair_id": range(10), "correct": np.array(correct, bool), "tie": np.array(tie, bool)})

    scores = pd.concat([rows("intemplate_lp", "1", A, A_TIE), rows("lp", "none", B, B_TIE),
                        rows("yesno", "1", B, [0] * 10)], ignore_index=True)
    first = pd.DataFrame(comparisons.method_pairs(scores, "lp", "intemplate_lp", "yesno")).iloc[0]
    assert (first.a, first.b, first.a_only, first.a_only_b_tie, first.b_only_a_tie) == \
        ("intemplate_lp (t1)", "lp (tnone)", 6, 4, 0)
    assert first.p_value_ties_out == pytest.approx(0.5) and first[f"{EXPECTED}_b"] == pytest.approx(0.35)


def test_split_half_gives_the_accuracy_range_and_the_reliability_under_each_tie_rule():
    # 4 paradigms of 4 pairs: p0 and p2 all right, p1 and p3 all tied; any split halves alike
    paradigms = np.repeat(["p0", "p1", "p2", "p3"], 4)
    tie = np.isin(paradigms, ["p1", "p3"])
    scores = pd.DataFrame({"model": "m", "method": "lp", "template": "none", "dataset": "d", "paradigm": paradigms,
                           "phenomenon": "ph", "pair_id": np.tile(range(4), 4), "correct": ~tie, "tie": tie})
    row = split_half.split_half(scores, splits=20).iloc[0]
    assert (row.accuracy, row[TIE_SHARE_COLUMN], row[EXPECTED], row[TIES_RIGHT]) == (0.5, 0.5, 0.75, 1.0)
    # ties wrong: 1, 0, 1, 0 per paradigm; half: 1, 0.5, 1, 0.5 (both reliable); right: 1 everywhere (no spread)
    assert (row.reliability, row.reliability_ties_half) == (1.0, 1.0) and np.isnan(row.reliability_ties_right)
    assert list(row.index) == split_half.COLUMNS[:3] + split_half.COLUMNS[4:]  # no precision column here


def test_attractor_and_word_shuffle_tables_carry_the_tie_range():
    base = dict(model="m", method="yesno", template="1", phenomenon="ph", pair_id=range(4))
    scores = pd.concat([
        pd.DataFrame({**base, "paradigm": "a", "attractor": "none", "word_shuffle": True,
                      "correct": [True, False, False, False], "tie": [False, True, True, False]}),
        pd.DataFrame({**base, "paradigm": "b", "attractor": None, "word_shuffle": False,
                      "correct": [True, True, False, False], "tie": [False, False, False, True]})], ignore_index=True)
    row = paradigms.attractors(scores).iloc[0]  # paradigm a only: 1 of 4 right, 2 ties
    assert (row.attractor, row.accuracy, row.ties, row[EXPECTED], row[TIES_RIGHT]) == ("none", 0.25, 2, 0.5, 0.75)
    shuffle = paradigms.word_shuffle_paradigms(scores).set_index("paradigm")
    assert shuffle[[EXPECTED, TIES_RIGHT]].values.tolist() == [[0.5, 0.75], [0.625, 0.75]]
    means = paradigms.word_shuffle_means(shuffle.reset_index()).set_index("word_shuffle")
    assert means.loc[False, ["accuracy", EXPECTED, TIES_RIGHT]].tolist() == [0.5, 0.625, 0.75]


# ----------------------------------------------------------------- 05: Figure 6
def _gap_scores():
    """yesno (a) and intemplate_lp (b), one template, 3 paradigms of 4 pairs; length difference 1, 2, 3."""
    plan = {"p": ([1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 1, 0]),
            "q": ([1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]),
            "r": ([0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0])}
    frames = []
    for k, (paradigm, (ca, ta, cb, tb)) in enumerate(plan.items()):
        for method, c, t in (("yesno", ca, ta), ("intemplate_lp", cb, tb)):
            frames.append(pd.DataFrame({"model": "m", "method": method, "template": "1", "paradigm": paradigm,
                                        "pair_id": range(4), "correct": np.array(c, bool), "tie": np.array(t, bool),
                                        "n_tokens_good": 5 + k + 1, "n_tokens_bad": 5}))
    return pd.concat(frames, ignore_index=True)


def test_figure6_gap_carries_its_range_over_the_ties():
    gaps = length_bias.paradigm_gaps(_gap_scores()).set_index("paradigm")
    # p: a 0.5 (tie 0.25: 0.625, 0.75), b 0.25 (tie 0.5: 0.5, 0.75); q: a 1, b 0 (tie 1: 0.5, 1); r: 0 and 0
    want = {"p": (0.25, 0.125, -0.25, 0.5), "q": (1.0, 0.5, 0.0, 1.0), "r": (0.0, 0.0, 0.0, 0.0)}
    for paradigm, values in want.items():
        assert tuple(gaps.loc[paradigm, ["gap", "gap_ties_half", "gap_low", "gap_high"]]) == values
    assert gaps.mean_length_diff.tolist() == [1.0, 2.0, 3.0]
    assert gaps.pearson_r.iloc[0] == pytest.approx(np.corrcoef([1, 2, 3], [0.25, 1, 0])[0, 1], abs=1e-12)
    assert gaps.pearson_r_ties_half.iloc[0] == pytest.approx(np.corrcoef([1, 2, 3], [0.125, 0.5, 0])[0, 1], abs=1e-12)
    fig = plots_accuracy.gap_scatter(gaps.reset_index(), "yesno minus intemplate_lp")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "accuracy gap (ties wrong; bar: range over the ties)"
    bars = [c for c in ax.collections if c.get_label() == "range over the ties"][0]
    assert [s.tolist() for s in bars.get_segments()] == [[[1, -0.25], [1, 0.5]], [[2, 0], [2, 1]], [[3, 0], [3, 0]]]
    plt.close(fig)


# ----------------------------------------------------------------- 06: PMI, similarity, cross-model curves
def _primed(model: str = "a") -> pd.DataFrame:
    """4 pairs alone (LP good -10, bad -12, -12, -10, -10: 2 right, 2 ties) and under one prefix."""
    base = dict(model=model, dataset="blimp", method="lp", paradigm="p", pair_id=range(4), draw=0)
    alone = pd.DataFrame({**base, "prefix_type": "none", "target_length": 0, "score_good": -10.0,
                          "score_bad": [-12.0, -12.0, -10.0, -10.0]})
    primed = pd.DataFrame({**base, "prefix_type": "in_acceptable", "target_length": 25,
                           "score_good": [-5.0, -8.0, -6.0, -9.0], "score_bad": [-7.0, -6.0, -8.0, -9.0]})
    frame = pd.concat([alone, primed], ignore_index=True)
    return frame.assign(correct=frame.score_good > frame.score_bad, tie=frame.score_good == frame.score_bad)


def test_pmi_accuracy_gives_both_accuracies_their_tie_range():
    row = priming_effects.pmi_accuracy(_primed()).set_index("prefix_type").loc["in_acceptable"]
    # stored: right 1, 0, 1, 0, pair 3 tied; PMI good 5, 2, 4, 1 vs bad 5, 6, 2, 1: right on pair 2, 2 ties
    assert (row.accuracy, row[TIE_SHARE_COLUMN], row[EXPECTED], row[TIES_RIGHT]) == (0.5, 0.25, 0.625, 0.75)
    assert (row.accuracy_pmi, row[f"pmi_{TIE_SHARE_COLUMN}"], row[EXPECTED + "_pmi"], row[TIES_RIGHT + "_pmi"]) == \
        (0.25, 0.5, 0.5, 0.75)


def test_priming_curves_carry_the_tie_range_of_the_accuracy_and_its_baseline():
    curves = priming_effects.figure2(pd.concat([_primed("a"), _primed("b")], ignore_index=True), n_resamples=20)
    longest = cross_model_priming.longest_effects(curves).set_index("model").loc["a"]
    # baseline 0.5 with 2 of 4 ties (0.75, 1.0); under the prefix 0.5 with 1 tie (0.625, 0.75)
    assert (longest.accuracy, longest[EXPECTED], longest[TIES_RIGHT]) == (0.5, 0.625, 0.75)
    assert (longest.baseline, longest[f"baseline_{TIE_SHARE_COLUMN}"], longest[EXPECTED + "_baseline"],
            longest[TIES_RIGHT + "_baseline"], longest.delta, longest.delta_ties_half) == (0.5, 0.5, 0.75, 1.0, 0.0,
                                                                                          -0.125)
    fig = plots_priming.priming_curves(curves, "curves")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "accuracy (%, ties wrong; bar: to ties right, x: ties half)"
    bars = [c for c in ax.collections if hasattr(c, "get_segments") and len(c.get_segments()) == 2][0]
    assert [s.tolist() for s in bars.get_segments()] == [[[0, 50], [0, 100]], [[25, 50], [25, 75]]]
    plt.close(fig)


def test_similarity_correlation_under_each_tie_rule():
    frame = pd.DataFrame({"token_f1": [0.1, 0.2, 0.3, 0.4, 0.5], "correct": [0, 0, 1, 0, 1],
                          "tie": [False, True, False, True, False]})
    row = prefix_similarity.correctness_correlation(frame, "token_f1").iloc[0]
    assert (row.accuracy, row[TIE_SHARE_COLUMN], row[EXPECTED], row[TIES_RIGHT]) == pytest.approx((0.4, 0.4, 0.6, 0.8))
    # credit 0, 0, 1, 0, 1 (r = 0.2 / sqrt(0.1 * 1.2)); ties half 0, .5, 1, .5, 1 (0.2 / sqrt(0.1 * 0.7));
    # ties right 0, 1, 1, 1, 1 (0.2 / sqrt(0.1 * 0.8))
    assert (row.r, row.r_ties_half, row.r_ties_right) == pytest.approx((1 / 3 ** 0.5, 2 / 7 ** 0.5, 1 / 2 ** 0.5))


def test_tie_credits_are_tie_range_of_one_decision():
    credit = tie_credits(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    assert {k: v.tolist() for k, v in credit.items()} == {"wrong": [1, 0, 0], "half": [1, 0.5, 0], "right": [1, 1, 0]}


# ----------------------------------------------------------------- 07: pair accuracy and MORCELA
def _sentences(pairs: dict) -> pd.DataFrame:
    """A metrics_table-like frame: paradigm -> (LP good, LP bad) per pair; unigram -30, 5 tokens."""
    rows = []
    for paradigm, (good, bad) in pairs.items():
        for i, (g, b) in enumerate(zip(good, bad)):
            for side, lp in (("good", g), ("bad", b)):
                rows.append({"model": "m", "dataset": "blimp", "paradigm": paradigm, "item": i, "side": side,
                             "grammatical": int(side == "good"), "lp": lp, "unigram_lp": -30.0, "n_tokens": 5})
    return pd.DataFrame(rows)


def test_pair_accuracy_counts_ties_both_ways():
    table = _sentences({"p": ([-1.0, -2.0, -3.0, -4.0], [-2.0, -2.0, -3.0, -1.0])})
    row = separability.pair_accuracy(table, ["lp"]).iloc[0]
    assert (row.accuracy, row.pairs, row.ties, row[TIE_SHARE_COLUMN], row[EXPECTED], row[TIES_RIGHT]) == \
        (0.25, 4, 2, 0.5, 0.5, 0.75)
    fig = plots_separability.pair_accuracy_bars(separability.pair_accuracy(table, ["lp"]))
    ax = fig.axes[0]
    bars = [c for c in ax.containers if hasattr(c, "has_yerr")][0].lines[2][0]  # the bar from the accuracy up to every tie right
    assert ax.get_ylabel() == "pair accuracy (ties wrong; bar: up to ties right)"
    assert [[y for _, y in s] for s in bars.get_segments()] == [[0.25, 0.75]]
    plt.close(fig)


def test_morcela_blimp_accuracy_per_paradigm_and_overall_with_ties():
    table = _sentences({"p0": ([-10.0, -12.0], [-12.0, -12.0]), "p1": ([-12.0, -12.0], [-12.0, -10.0]),
                        "p2": ([-10.0, -10.0], [-12.0, -12.0])})
    params = pd.DataFrame([{"model": "m", "dataset": "li", "variant": "morcela", "beta": 1.0, "gamma": 0.0,
                            "scale": 1.0, "intercept": 0.0, "sentences": 100}])
    per_paradigm, summary = morcela.blimp_agreement(table, {"p0": 0.7, "p1": 0.8, "p2": 0.9}, params)
    lp = per_paradigm[per_paradigm.function == "lp"].set_index("paradigm")
    assert lp[["accuracy", "ties", TIE_SHARE_COLUMN, EXPECTED, TIES_RIGHT]].values.tolist() == \
        [[0.5, 1, 0.5, 0.75, 1.0], [0.0, 1, 0.5, 0.25, 0.5], [1.0, 0, 0.0, 1.0, 1.0]]
    s = summary.set_index("function")
    for function in ("lp", "slor", "morcela"):  # equal lengths and unigrams: every function ties where LP does
        assert tuple(s.loc[function, ["accuracy", TIE_SHARE_COLUMN, EXPECTED, TIES_RIGHT]]) == \
            pytest.approx((0.5, 1 / 3, 2 / 3, 5 / 6), abs=1e-15)


# ----------------------------------------------------------------- Hu & Levy: balanced accuracy
def _judgments() -> pd.DataFrame:
    base = dict(model="m", dataset="hl_blimp", method="hl_sentence_judgment", paradigm="p", pair_id=[0, 1, 2, 3])
    direct = pd.DataFrame({**base, "template": "direct", "score_good": [-10.0, -12.0, -8.0, -20.0],
                           "score_bad": [-11.0, -11.0, -9.0, -25.0]})
    meta = pd.DataFrame({**base, "template": "metaInstruct", "lp_yes_good": [-1.0, -2.0, -1.0, -1.0],
                         "lp_no_good": [-2.0, -1.0, -1.0, -3.0], "lp_yes_bad": [-1.5, -1.0, -2.0, -1.0],
                         "lp_no_bad": [-1.0, -2.0, -2.0, -1.0]})
    frame = pd.concat([direct, meta.assign(score_good=meta.lp_yes_good, score_bad=meta.lp_yes_bad)], ignore_index=True)
    return frame.assign(correct=frame.score_good > frame.score_bad, tie=frame.score_good == frame.score_bad)


def test_hu_levy_balanced_accuracy_counts_a_yes_no_tie_wrong_and_gives_its_range():
    # acceptable said Yes: 1, 0, tie, 1 -> 2 of 4; unacceptable said No: 1, 0, tie, tie -> 1 of 4 (a tie
    # silently taken as No would make it 3 of 4, 0.625); ties: 1 of 4 and 2 of 4 -> share (1 + 2) / 8
    s = hu_levy.summarize(_judgments()).set_index("prompt").loc["metaInstruct"]
    assert (s.balanced_accuracy, s.balanced_tie_share, s["balanced_" + EXPECTED], s["balanced_" + TIES_RIGHT]) == \
        (0.375, 0.375, 0.5625, 0.75)
    perf = cross_model.performance(_judgments(), pooled=False, n_resamples=20).set_index("prompt").loc["metaInstruct"]
    assert (perf.value, perf.tie_share, perf[EXPECTED], perf[TIES_RIGHT]) == (0.375, 0.375, 0.5625, 0.75)
    values = cross_model.item_values(_judgments())
    assert values[values.prompt == "metaInstruct"][["value", "tie"]].values.tolist() == \
        [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.5, 0.5]]


# ----------------------------------------------------------------- explorer
def _explorer_pairs() -> pd.DataFrame:
    plan = {("1", "p"): ([1, 0], [0, 1]), ("1", "q"): ([1, 1], [0, 0]),
            ("2", "p"): ([0, 0], [1, 1]), ("2", "q"): ([1, 0], [0, 0])}
    return pd.concat([pd.DataFrame({"dataset": "d", "model": "m", "method": "yesno", "template": t, "paradigm": p,
                                    "phenomenon": "ph", "pair_id": [0, 1], "correct": np.array(c, float),
                                    "tie": np.array(tie, bool)}) for (t, p), (c, tie) in plan.items()],
                     ignore_index=True)


def test_explorer_tables_and_figure_carry_the_tie_range():
    pairs = _explorer_pairs()
    overview = explore_tables.overview(pairs)
    row = overview.iloc[0]
    # template 1: 3 of 4 right, 1 tie (0.875, 1.0); template 2: 1 of 4, 2 ties (0.5, 0.75)
    assert (row.accuracy_mean, row.best_template, row.best_accuracy, row.ties) == (0.5, "1", 0.75, 3)
    assert (row[EXPECTED + "_mean"], row[TIES_RIGHT + "_mean"]) == (0.6875, 0.875)
    per_paradigm = explore_tables.paradigms(pairs, overview).set_index("paradigm")
    shown = ["accuracy_mean", "accuracy_best", EXPECTED + "_mean", EXPECTED + "_best", TIES_RIGHT + "_mean",
             TIES_RIGHT + "_best"]
    # p: t1 0.5 (tie 0.5), t2 0 (tie 1); q: t1 1, t2 0.5, no ties
    assert per_paradigm.loc["p", shown].tolist() == [0.25, 0.5, 0.625, 0.75, 1.0, 1.0]
    assert per_paradigm.loc["q", shown].tolist() == [0.75, 1.0, 0.75, 1.0, 0.75, 1.0]
    fig = explore_figures.accuracy_figure(overview, "d")
    hatched = [p for p in fig.axes[0].patches if p.get_hatch() == "///"]
    assert [(p.get_y(), p.get_height()) for p in hatched] == [(0.5, 0.375)]  # from the mean up to every tie right
    plt.close(fig)
