"""Where methods disagree (helpers.analysis.disagreement), the precision of each score file as a
column (helpers.analysis.precision_columns) and the split-half reliability of a method's accuracy
per paradigm (helpers.analysis.split_half): exact values on made-up decisions."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from helpers.analysis import disagreement, precision_columns, split_half
from helpers.plots import disagreement as plots
from helpers.store import ScoreStore, load_scores

PARADIGMS = ["p0", "p1", "p2"]
BASE = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0]  # 3 paradigms x 4 pairs, 6 right: balanced
FLIPPED = {("p0", 1), ("p1", 1)}  # the pairs the "flip" method decides otherwise (one wrong, one right in BASE)


def frame(columns: dict, paradigms=PARADIGMS, per: int = 4, ties: dict | None = None) -> pd.DataFrame:
    """Score rows of predictors (method, template) -> correct per item, items in paradigm order."""
    items = [(p, i) for p in paradigms for i in range(per)]
    rows = []
    for (method, template), correct in columns.items():
        tie = (ties or {}).get((method, template), [False] * len(items))
        rows += [{"model": "m1", "method": method, "template": template, "dataset": "d", "paradigm": p,
                  "phenomenon": "ph", "pair_id": i, "correct": bool(c), "tie": bool(t)}
                 for (p, i), c, t in zip(items, correct, tie)]
    return pd.DataFrame(rows)


def four() -> dict:
    """a t1 and a t2 identical, mirror their opposite, flip a t1 with FLIPPED decided otherwise."""
    items = [(p, i) for p in PARADIGMS for i in range(4)]
    flip = [1 - b if item in FLIPPED else b for b, item in zip(BASE, items)]
    return {("a", "1"): BASE, ("a", "2"): BASE, ("mirror", "none"): [1 - b for b in BASE], ("flip", "none"): flip}


def test_agreement_of_identical_mirrored_and_flipped_predictors():
    pairs = disagreement.agreement(disagreement.decision_matrix(frame(four())))
    got = pairs.set_index(["a", "b"])
    assert list(dict.fromkeys(pairs.a)) == ["a t1", "a t2", "mirror", "flip"]
    assert len(pairs) == 10 and (pairs["items"] == 12).all()
    assert got.loc[("a t1", "a t2")].tolist()[1:] == [1.0, 1.0]  # agreement, kappa
    assert got.loc[("a t1", "mirror")].tolist()[1:] == [0.0, -1.0]  # balanced: chance agreement 1/2
    assert got.loc[("a t1", "flip"), "agreement"] == 10 / 12
    # po = 10/12, pe = 1/2 (6 right each): kappa = (10/12 - 1/2) / (1/2) = 2/3
    assert got.loc[("a t1", "flip"), "kappa"] == pytest.approx(2 / 3, abs=1e-15)
    assert got.loc[("mirror", "flip"), "agreement"] == 2 / 12
    assert (pairs[pairs.a == pairs.b].agreement == 1.0).all()
    square = disagreement.square(pairs, "agreement")
    assert square.loc["flip", "a t1"] == square.loc["a t1", "flip"] == 10 / 12
    assert np.array_equal(square.to_numpy(), square.to_numpy().T)


def test_the_pairs_listed_as_disagreeing_are_exactly_the_flipped_ones():
    columns = four()
    del columns[("mirror", "none")]
    items = disagreement.item_table(disagreement.decision_matrix(frame(columns)))
    listed = disagreement.most_disagreed(items, top=None)
    assert set(zip(listed.paradigm, listed.pair_id)) == FLIPPED
    assert listed.majority_share.tolist() == [2 / 3, 2 / 3] and listed.distinct.tolist() == [2, 2]
    assert listed.entropy_bits.tolist() == pytest.approx([-(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)] * 2)
    first = listed.iloc[0]  # p0 pair 1: wrong in BASE, so a t1, a t2 say wrong and flip says right
    assert (first.paradigm, first.pair_id, first.majority, first.right, first.wrong, first.tie) == (
        "p0", 1, "wrong", "flip", "a t1,2", "")
    assert (items.distinct == 1).sum() == 10 and (items[items.distinct == 1].entropy_bits == 0.0).all()


def test_with_the_mirror_every_pair_disagrees_and_the_flipped_ones_most():
    matrix = disagreement.decision_matrix(frame(four()))
    listed = disagreement.most_disagreed(disagreement.item_table(matrix), top=None)
    assert len(listed) == 12
    assert set(zip(listed.paradigm[:2], listed.pair_id[:2])) == FLIPPED
    assert listed.majority.tolist()[:2] == ["split", "split"] and listed.majority_share.tolist()[:2] == [0.5, 0.5]
    assert listed.entropy_bits.tolist()[:2] == [1.0, 1.0]
    assert listed.majority_share.tolist()[2:] == [0.75] * 10
    assert len(disagreement.most_disagreed(disagreement.item_table(matrix), top=3)) == 3
    against = disagreement.dissent(matrix).set_index("predictor")
    assert against.clear_majority.tolist() == [10] * 4  # the two split pairs have no clear majority
    assert against.against_majority.tolist() == [0, 0, 10, 0] and against.share_against["mirror"] == 1.0


def test_a_tie_is_a_decision_of_its_own():
    right = [1, 1, 0, 0, 1, 0]
    ties = {("b", "none"): [True, False, False, True, False, False], ("c", "none"): [True] + [False] * 5}
    scores = frame({("a", "none"): right, ("b", "none"): [0, 1, 0, 0, 1, 0], ("c", "none"): [0, 1, 0, 0, 1, 0]},
                   paradigms=["p0", "p1"], per=3, ties=ties)
    matrix = disagreement.decision_matrix(scores).droplevel(["model", "template"], axis=1)
    assert matrix["b"].tolist() == [0.5, 1, 0, 0.5, 1, 0] and matrix["c"].tolist() == [0.5, 1, 0, 0, 1, 0]
    pairs = disagreement.agreement(matrix).set_index(["a", "b"])
    assert pairs.loc[("b", "c"), "agreement"] == 5 / 6  # the first pair's two ties agree
    assert pairs.loc[("a", "b"), "agreement"] == 4 / 6
    names = {1.0: "r", 0.0: "w", 0.5: "t"}
    assert pairs.loc[("a", "b"), "kappa"] == pytest.approx(cohen_kappa_score(
        [names[v] for v in matrix["a"]], [names[v] for v in matrix["b"]]), abs=1e-12)
    items = disagreement.item_table(matrix)
    assert items.loc[0, ["right", "wrong", "tie"]].tolist() == ["a", "", "b; c"]
    assert items.loc[3, ["majority", "tie"]].tolist() == ["wrong", "b"]


def test_kappa_of_two_constant_identical_predictors_is_undefined():
    scores = frame({("a", "none"): [1] * 6, ("b", "none"): [1] * 6}, paradigms=["p0", "p1"], per=3)
    pairs = disagreement.agreement(disagreement.decision_matrix(scores))
    row = pairs[(pairs.a == "a") & (pairs.b == "b")].iloc[0]
    assert row.agreement == 1.0 and np.isnan(row.kappa)


def test_a_pair_stored_twice_for_one_predictor_is_refused():
    scores = frame({("a", "none"): BASE})
    with pytest.raises(ValueError, match="stored twice for one item and predictor"):
        disagreement.decision_matrix(pd.concat([scores, scores.head(1)]))


def test_several_models_pool_their_pairs():
    one, two = frame(four()), frame(four()).assign(model="m2")
    two.loc[two.method == "flip", "correct"] = two.loc[two.method == "a", "correct"].to_numpy()[:12]
    matrix = disagreement.decision_matrix(pd.concat([one, two]))
    assert disagreement.labels(matrix.columns)[:2] == ["m1 a t1", "m1 a t2"]
    pairs = disagreement.agreement(matrix).set_index(["a", "b"])
    assert pairs.loc[("a t1", "flip")].tolist() == [24, 22 / 24, pytest.approx(
        cohen_kappa_score(np.r_[BASE, BASE], np.r_[matrix[("m1", "flip", "none")], BASE]))]
    per_model = disagreement.agreement(matrix, pool=None)
    assert len(per_model) == 8 * 9 // 2


def test_spearman_brown_on_a_hand_computed_case():
    assert split_half.spearman_brown(0.5) == pytest.approx(2 / 3, abs=1e-15)
    assert split_half.spearman_brown(1.0) == 1.0 and np.isnan(split_half.spearman_brown(-1.0))
    # halves (1, 1/2, 0) and (1/2, 1/2, 0): deviations (1/2, 0, -1/2) and (1/6, 1/6, -1/3),
    # r = (1/4) / sqrt(1/2 * 1/6) = sqrt(3)/2, Spearman-Brown 2r/(1+r) = 4 sqrt(3) - 6
    got = split_half.reliability(np.array([[1, 0.5, 0]]), np.array([[0.5, 0.5, 0]]))
    assert got["r"] == pytest.approx(math.sqrt(3) / 2, abs=1e-15)
    assert got["reliability"] == pytest.approx(4 * math.sqrt(3) - 6, abs=1e-15)
    assert got["low"] == got["high"] == got["reliability"] and got["splits_defined"] == 1 and got["reason"] == ""


def test_a_method_the_same_in_every_half_is_exactly_reliable():
    # every paradigm all right or all wrong: any split gives both halves the same accuracies
    per_paradigm = [1, 0, 1, 0]
    scores = frame({("a", "1"): np.repeat(per_paradigm, 6), ("a", "2"): np.repeat(per_paradigm, 6)},
                   paradigms=["p0", "p1", "p2", "p3"], per=6)
    table = split_half.split_half_table(scores, splits=200, seed=3)
    assert table.level.tolist() == ["method", "template", "template"]
    assert table.template.tolist() == ["all", "1", "2"]
    assert (table.reliability == 1.0).all() and (table.r == 1.0).all()
    assert (table.low == 1.0).all() and (table.high == 1.0).all()
    assert (table.splits_defined == 200).all() and (table.paradigms == 4).all() and (table["items"] == 24).all()


def test_a_constant_method_is_undefined_with_a_reason():
    scores = frame({("a", "none"): [1] * 24, ("b", "none"): np.repeat([1, 0, 1, 0], 6)},
                   paradigms=["p0", "p1", "p2", "p3"], per=6)
    table = split_half.split_half(scores, splits=50, level="template").set_index("method")
    assert np.isnan(table.loc["a", ["r", "reliability", "low", "high"]].astype(float)).all()
    assert table.loc["a", "splits_defined"] == 0
    assert table.loc["a", "reason"] == "accuracy 1.000 in every paradigm in every split: no spread across " \
                                       "paradigms to correlate"
    assert table.loc["b", "reliability"] == 1.0 and table.loc["b", "reason"] == ""


def test_too_few_paradigms_or_pairs_per_paradigm_is_undefined():
    one_pair = frame({("a", "none"): [1, 0, 1, 0]}, paradigms=["p0", "p1", "p2", "p3"], per=1)
    row = split_half.split_half(one_pair, splits=10).iloc[0]
    assert row.paradigms == 0 and np.isnan(row.reliability)
    assert row.reason.startswith("0 paradigm(s) with 2 or more items: a correlation across paradigms needs 3")
    two = frame({("a", "none"): [1, 0, 0, 1, 1, 0]}, paradigms=["p0", "p1"], per=3)
    assert split_half.split_half(two, splits=10).iloc[0].reason.startswith("2 paradigm(s)")


def test_half_accuracies_partition_each_paradigm_and_match_scipy():
    rng = np.random.default_rng(7)
    paradigm = np.repeat(["p0", "p1", "p2", "p3", "p4", "one"], [9, 10, 7, 12, 8, 1])
    credit = (rng.random(len(paradigm)) < 0.6).astype(float)
    acc_a, acc_b, kept = split_half.half_accuracies(credit, paradigm, splits=40, seed=1)
    assert kept == ["p0", "p1", "p2", "p3", "p4"] and acc_a.shape == acc_b.shape == (40, 5)
    n = np.array([9, 10, 7, 12, 8])
    totals = np.array([credit[paradigm == p].sum() for p in kept])
    np.testing.assert_allclose(acc_a * (n // 2) + acc_b * (n - n // 2), np.broadcast_to(totals, (40, 5)), atol=1e-12)
    assert np.allclose(acc_a * (n // 2), np.round(acc_a * (n // 2)))  # whole numbers of pairs right
    assert len({tuple(row) for row in acc_a}) > 1  # the splits differ
    r = split_half.pearson_rows(acc_a, acc_b)
    np.testing.assert_allclose(r, [stats.pearsonr(a, b).statistic for a, b in zip(acc_a, acc_b)], atol=1e-12)
    again = split_half.half_accuracies(credit, paradigm, splits=40, seed=1)
    assert np.array_equal(again[0], acc_a)  # seeded
    summary = split_half.reliability(acc_a, acc_b)
    assert summary["reliability"] == pytest.approx(np.mean(2 * r / (1 + r)), abs=1e-12)
    assert summary["low"] == pytest.approx(np.percentile(2 * r / (1 + r), 2.5), abs=1e-12)


def test_method_level_pools_the_templates_and_shares_the_splits():
    rng = np.random.default_rng(11)
    t1, t2 = (rng.random(40) < 0.7).astype(int), (rng.random(40) < 0.4).astype(int)
    scores = frame({("a", "1"): t1, ("a", "2"): t2, ("b", "none"): t1}, paradigms=[f"p{i}" for i in range(5)], per=8)
    table = split_half.split_half_table(scores, splits=100, seed=5)
    method = table[(table.level == "method") & (table.method == "a")].iloc[0]
    acc_a, acc_b, _ = split_half.half_accuracies((t1 + t2) / 2, np.repeat([f"d / p{i}" for i in range(5)], 8), 100, 5)
    assert method.reliability == pytest.approx(split_half.reliability(acc_a, acc_b)["reliability"], abs=1e-12)
    templates = table[table.level == "template"].set_index(["method", "template"])
    assert templates.loc[("a", "1"), "reliability"] == templates.loc[("b", "none"), "reliability"]  # same items


def test_reliability_within_each_phenomenon():
    scores = frame({("a", "none"): np.tile([1, 1, 0, 1, 0, 0], 5)}, paradigms=[f"p{i}" for i in range(5)], per=6)
    scores["phenomenon"] = scores.paradigm.map({"p0": "x", "p1": "x", "p2": "y", "p3": "y", "p4": "y"})
    table = split_half.split_half(scores, splits=20, within="phenomenon")
    assert table.scope.tolist() == ["x", "y"] and table.paradigms.tolist() == [2, 3]
    assert table.reason[0].startswith("2 paradigm(s)") and table["items"].tolist() == [12, 18]
    with pytest.raises(ValueError, match="within must be None"):
        split_half.split_half(scores, within="field")


def test_precision_labels_from_the_configuration():
    label = precision_columns.precision_label
    assert label({"precision": "nf4", "quant": "8bit"}) == "nf4"
    assert label({"quant": "4bit", "dtype": "bfloat16"}) == "nf4" and label({"quant": "8bit"}) == "int8"
    assert label({"quant": None, "dtype": "bfloat16"}) == "bfloat16" and label({}) == "unrecorded"


def test_precision_store_is_the_precision_checks():
    from helpers.runs.precision import store_root

    assert precision_columns.precision_store() == store_root()


def _write(store, decisions, method, template, config):
    info = frame({(method, template): decisions}).drop(columns=["model", "method", "template"])
    frame_ = info.assign(score_good=np.where(info.correct, 1.0, 0.0), score_bad=0.5)
    meta = {"model_name": "m1", "method": method, "template_id": None if template == "none" else template,
            "dataset": "d", "weights": "w", **config}
    return store.write(frame_, "d", "m1", method, None if template == "none" else template, meta,
                       tag=config.get("precision"))


def test_precision_runs_add_a_predictor_per_precision(tmp_path):
    main, runs = ScoreStore(tmp_path / "scores"), ScoreStore(tmp_path / "precision")
    kept = _write(main, BASE, "lp", "none", {"dtype": "float32", "quant": None})
    _write(runs, BASE, "lp", "none", {"precision": "float32", "dtype": "float32", "quant": None})
    nf4 = _write(runs, [1 - b for b in BASE[:6]] + BASE[6:], "lp", "none",
                 {"precision": "nf4", "dtype": "bfloat16", "quant": "4bit"})
    scores = load_scores("d", "m1", ["lp"], root=tmp_path / "scores")
    judged = precision_columns.with_precision_runs(scores, tmp_path / "precision", "d", ["m1"], ["lp"])
    assert judged.groupby("precision").size().to_dict() == {"float32": 12, "nf4": 12}
    assert judged.attrs["score_files"] == [str(kept), str(nf4)]  # the results store's float32 file wins
    matrix = disagreement.decision_matrix(judged)
    assert disagreement.labels(matrix.columns) == ["lp float32", "lp nf4"]
    pairs = disagreement.agreement(matrix).set_index(["a", "b"])
    assert pairs.loc[("lp float32", "lp nf4"), "agreement"] == 0.5
    alone = precision_columns.with_precision_runs(scores, tmp_path / "nothing", "d", ["m1"], ["lp"])
    assert alone.precision.unique().tolist() == ["float32"] and alone.attrs["score_files"] == [str(kept)]
    with pytest.raises(ValueError, match="do not name their score files"):
        precision_columns.with_precision(scores.drop(columns="config_hash"))


def test_figures_show_the_matrices_and_the_intervals():
    pairs = disagreement.agreement(disagreement.decision_matrix(frame(four())))
    fig = plots.agreement_heatmaps(pairs, "agreement")
    share, kappa = fig.axes[:2]  # then their colour bars
    assert [t.get_text() for t in share.get_yticklabels()] == ["a t1", "a t2", "mirror", "flip"]
    cells = [float(t.get_text()) for t in share.texts]
    assert cells[:4] == [1.0, 1.0, 0.0, 0.83] and [float(t.get_text()) for t in kappa.texts][:4] == [1.0, 1.0,
                                                                                                      -1.0, 0.67]
    scores = frame({("a", "1"): np.repeat([1, 0, 1, 0], 6), ("c", "none"): [1] * 24},
                   paradigms=["p0", "p1", "p2", "p3"], per=6)
    fig = plots.reliability_dots(split_half.split_half_table(scores, splits=20), "reliability")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "c"]
    assert [t.get_text() for t in ax.texts] == ["undefined"] and ax.texts[0].get_position()[1] == 1
    bars = ax.containers[0]
    assert bars.lines[0].get_xdata()[0] == 1.0 and bars.lines[0].get_ydata()[0] == 0
