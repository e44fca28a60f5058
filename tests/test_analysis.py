"""Analysis functions on small synthetic score tables with hand-computed values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from helpers.analysis import accuracy, comparisons, ensembles, length_bias, paradigms, prompting, significance


def _scores(method, template, correct, n_good=None, n_bad=None, model="m", paradigm="p"):
    n = len(correct)
    return pd.DataFrame({"model": model, "method": method, "template": str(template), "paradigm": paradigm,
                         "phenomenon": "ph", "pair_id": range(n), "correct": np.asarray(correct, bool),
                         "tie": [False] * n, "n_tokens_good": n_good or [5] * n, "n_tokens_bad": n_bad or [5] * n})


def test_table3_mean_sd_best_and_ties():
    s = pd.concat([_scores("yesno", t, c) for t, c in
                   [(1, [1, 1, 0, 0]), (2, [1, 1, 1, 0]), (3, [1, 0, 0, 0]), (4, [1, 1, 1, 1]), (5, [0, 0, 0, 0])]])
    s.loc[s.template == "5", "tie"] = [True, False, False, False]
    t = accuracy.table3(s).iloc[0]
    accs = [0.5, 0.75, 0.25, 1.0, 0.0]
    assert t.accuracy_mean == pytest.approx(np.mean(accs)) and t.accuracy_sd == pytest.approx(np.std(accs, ddof=1))
    assert t.best_template == "4" and t.best_accuracy == 1.0 and t.ties == 1 and t.pairs == 4
    assert accuracy.at_best_template(s, ["yesno"]).template.unique().tolist() == ["4"]
    shown = accuracy.format_table3(accuracy.table3(s)).iloc[0]  # the planted tie: 1 of 5 x 4 decisions, counted wrong
    assert shown["ties"] == 1 and shown[accuracy.TIE_SHARE] == 5.0 and shown["accuracy (%)"] == "50.0 ± 39.5"
    untied = accuracy.format_table3(accuracy.table3(s[s.template != "5"]))  # no ties: no tie columns
    assert "ties" not in untied and accuracy.EXPECTED_SHOWN not in untied and "best (%)" in untied
    per_template = accuracy.by_template(s).set_index("template")[accuracy.TIE_SHARE_COLUMN]
    assert per_template.to_dict() == {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.25}  # 1 of template 5's 4 pairs
    phenomena = accuracy.by_phenomenon(s, best_only=False).iloc[0]
    assert (phenomena.ties, phenomena[accuracy.TIE_SHARE_COLUMN], phenomena.accuracy) == (1, 1 / 20, 10 / 20)


def _bootstrap_by_hand(x, n_resamples, level, seed):
    """Percentile bootstrap written out: resamples of 256 rows drawn in turn, linear quantiles."""
    rng = np.random.default_rng(seed)
    means = np.concatenate([x[rng.integers(0, x.size, size=(min(256, n_resamples - start), x.size))].mean(axis=1)
                            for start in range(0, n_resamples, 256)])
    alpha = (1 - level) / 2
    return np.quantile(means, alpha), np.quantile(means, 1 - alpha)


@pytest.mark.parametrize("n,p,resamples,level,seed", [(400, 0.7, 2000, 0.95, 3), (37, 0.4, 1000, 0.9, 0)])
def test_bootstrap_ci_matches_a_percentile_bootstrap_by_hand(n, p, resamples, level, seed):
    correct = np.random.default_rng(1).random(n) < p
    lo, hi = significance.bootstrap_ci(correct, n_resamples=resamples, level=level, seed=seed)
    ref_lo, ref_hi = _bootstrap_by_hand(correct.astype(float), resamples, level, seed)
    assert lo == pytest.approx(ref_lo, abs=1e-12) and hi == pytest.approx(ref_hi, abs=1e-12)


def test_bootstrap_ci_edge_cases():
    assert significance.bootstrap_ci([True]) == (1.0, 1.0)
    assert significance.bootstrap_ci([0, 0, 0]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="no pairs"):
        significance.bootstrap_ci([])


def test_by_template_with_ci():
    s = pd.concat([_scores("yesno", 1, [1, 0, 1, 1]), _scores("yesno", 2, [0, 0, 1, 0])])
    t = significance.by_template_with_ci(s, 500, seed=4).set_index("template")
    assert t.loc["1", "accuracy"] == 0.75 and t.loc["2", "accuracy"] == 0.25 and (t.pairs == 4).all()
    assert (t.loc["2", "ci_low"], t.loc["2", "ci_high"]) == significance.bootstrap_ci([0, 0, 1, 0], 500, seed=4)


def test_mcnemar_against_statsmodels_and_by_hand():
    # 20 both right, 10 only A, 3 only B, 7 both wrong
    a = np.array([1] * 20 + [1] * 10 + [0] * 3 + [0] * 7, bool)
    b = np.array([1] * 20 + [0] * 10 + [1] * 3 + [0] * 7, bool)
    res = significance.mcnemar(a, b)
    assert (res["a_only"], res["b_only"], res["exact"]) == (10, 3, True)
    assert res["p_value"] == pytest.approx(2 * (1 + 13 + 78 + 286) / 2**13)  # exact binomial, n=13, k<=3
    ref = sm_mcnemar([[20, 10], [3, 7]], exact=True)
    assert res["statistic"] == ref.statistic and res["p_value"] == pytest.approx(ref.pvalue)
    big_a, big_b = np.r_[a, a, a], np.r_[b, b, b]
    chi = significance.mcnemar(big_a, big_b)
    assert not chi["exact"] and chi["statistic"] == pytest.approx((abs(30 - 9) - 1) ** 2 / 39)


def test_point_biserial_by_hand():
    correct = np.array([1, 0, 1, 1, 0])
    diff = np.array([2, -1, 0, 3, -2])
    r, _ = length_bias.point_biserial(correct, diff)
    # r = (M1 - M0) / s_n * sqrt(p q): means 5/3 and -3/2, population sd of diff
    m1, m0, p = 5 / 3, -1.5, 0.6
    assert r == pytest.approx((m1 - m0) / np.std(diff) * np.sqrt(p * (1 - p)))


@pytest.mark.parametrize("k,n", [(8, 10), (0, 7), (50, 50), (13, 29)])
def test_wilson_interval_by_hand(k, n):
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert length_bias.wilson(k, n) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert np.isnan(length_bias.wilson(0, 0)).all()


def test_accuracy_by_length_and_paradigm_gap():
    s = pd.concat([_scores("yesno", 1, [1, 1, 0, 1], [6, 5, 4, 7], [5, 5, 6, 5]),
                   _scores("intemplate_lp", 1, [0, 1, 1, 0], [6, 5, 4, 7], [5, 5, 6, 5])])
    by_len = length_bias.accuracy_by_length(s)
    row = by_len[(by_len.method == "yesno") & (by_len.length_diff == -2)].iloc[0]
    assert row.accuracy == 0.0 and row.pairs == 1
    assert (row.ci_low, row.ci_high) == pytest.approx(length_bias.wilson(0, 1))
    table, r = length_bias.paradigm_gap(pd.concat([s, s.assign(paradigm="q", correct=[True] * 8)]))
    assert table.set_index("paradigm").loc["p", "gap"] == pytest.approx(0.75 - 0.5)


def test_table4_and_paradigm_gaps_per_model():
    bad = [5, 5, 6, 5, 4, 4]
    good = {"p": [6, 5, 4, 7, 5, 3], "q": [7, 6, 6, 8, 5, 4], "r": [5, 5, 5, 5, 4, 4]}  # mean diffs 1/6, 7/6, -1/6
    yesno = {("a", "p"): [1, 1, 0, 1, 0, 0], ("a", "q"): [1, 1, 1, 1, 1, 0], ("a", "r"): [0, 0, 0, 1, 0, 0],
             ("b", "p"): [0, 1, 1, 1, 1, 1], ("b", "q"): [1, 0, 0, 0, 0, 0], ("b", "r"): [1, 1, 1, 1, 1, 1]}
    s = pd.concat([_scores("yesno", 1, c, good[p], bad, model=m, paradigm=p) for (m, p), c in yesno.items()]
                  + [_scores("intemplate_lp", 1, [1, 0, 1, 0, 1, 0], good[p], bad, model=m, paradigm=p)
                     for m in "ab" for p in "pqr"])
    t4 = length_bias.table4(s, 300, seed=2).set_index(["model", "method"])
    ya = s[(s.model == "a") & (s.method == "yesno")]
    diff = ya.n_tokens_good - ya.n_tokens_bad
    assert t4.loc[("a", "yesno"), "r"] == pytest.approx(np.corrcoef(ya.correct, diff)[0, 1])
    assert t4.loc[("a", "yesno"), "accuracy"] == pytest.approx(9 / 18) and t4.loc[("a", "yesno"), "pairs"] == 18
    assert t4.loc[("a", "yesno"), "ci_low"] == significance.bootstrap_ci(ya.correct, 300, seed=2)[0]
    gaps = length_bias.paradigm_gaps(s).set_index(["model", "paradigm"])
    expected = {"p": (0.5 - 0.5, 1 / 6), "q": (5 / 6 - 0.5, 7 / 6), "r": (1 / 6 - 0.5, -1 / 6)}
    for p, (gap, length) in expected.items():
        assert gaps.loc[("a", p), "gap"] == pytest.approx(gap)
        assert gaps.loc[("a", p), "mean_length_diff"] == pytest.approx(length)
    assert gaps.loc["a", "pearson_r"].iloc[0] == pytest.approx(
        np.corrcoef([v[1] for v in expected.values()], [v[0] for v in expected.values()])[0, 1])
    assert gaps.loc[("b", "q"), "gap"] == pytest.approx(1 / 6 - 0.5)
    assert length_bias.gap_correlations(gaps.reset_index()).paradigms.tolist() == [3, 3]


def _matrix():
    rng = np.random.default_rng(0)
    cols = {f"{x}{i}": rng.random(50) < (0.8 if x == "P" else 0.6) for x in "PL" for i in range(1, 6)}
    return pd.DataFrame(cols)


def test_ensemble_draws_are_reproducible_and_match_each_setting():
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    for setting, (n_p, n_l) in ensembles.SETTINGS.items():
        chosen = ensembles.draw(setting, rng_a)
        assert chosen == ensembles.draw(setting, rng_b)
        assert len(chosen) == len(set(chosen)) == 5
        assert sum(c.startswith("P") for c in chosen) == n_p and sum(c.startswith("L") for c in chosen) == n_l


def test_majority_vote_by_hand():
    m = pd.DataFrame({"P1": [1, 1, 0], "P2": [1, 0, 0], "P3": [0, 0, 1], "L1": [1, 0, 1], "L2": [0, 1, 0]}).astype(bool)
    assert ensembles.vote(m, ["P1", "P2", "P3", "L1", "L2"]).tolist() == [True, False, False]


def test_ensemble_table_settings_and_oracle():
    m = _matrix()
    t = ensembles.ensemble_table(m, trials=10, seed=0).set_index("setting")
    all_p = ensembles.vote(m, [f"P{i}" for i in range(1, 6)])
    assert t.loc["P-only", "accuracy"] == pytest.approx(all_p.mean())
    assert t.loc["P-only", "sd"] == pytest.approx(0.0, abs=1e-12)  # every trial draws all five P
    best_p = m[[f"P{i}" for i in range(1, 6)]].mean().max()
    assert t.loc["oracle P (best Yes/No template)", "accuracy"] == pytest.approx(best_p)
    again = ensembles.ensemble_table(m, trials=10, seed=0)
    pd.testing.assert_frame_equal(t.reset_index(), again)
    first = t.loc["Mix-P3", "draws"].split("; ")[0].split("+")
    assert sum(c.startswith("P") for c in first) == 3
    assert t.loc["Mix-P3", "accuracy"] == pytest.approx(np.mean(
        [ensembles.vote(m, d.split("+")).mean() for d in t.loc["Mix-P3", "draws"].split("; ")]))


def _ensemble_scores(models=("a", "b")):
    """Yes/No and in-template LP over 5 templates on 40 pairs, seeded per model."""
    frames = []
    for model in models:
        rng = np.random.default_rng([ord(c) for c in model])
        for method, rate in (("yesno", 0.75), ("intemplate_lp", 0.6), ("lp", 0.55)):
            for t in (range(1, 6) if method != "lp" else ["none"]):
                frames.append(_scores(method, t, rng.random(40) < rate, model=model))
    return pd.concat(frames, ignore_index=True)


def test_ensembles_by_model_adds_the_bootstrap_of_each_row():
    s = _ensemble_scores()
    table = ensembles.ensembles_by_model(s, trials=4, seed=1, resamples=300)
    assert table.model.tolist() == ["a"] * 6 + ["b"] * 6
    for model in "ab":
        matrix = ensembles.predictor_matrix(s[s.model == model])
        mine = table[table.model == model].set_index("setting")
        alone = ensembles.ensemble_table(matrix, 4, 1).set_index("setting")
        pd.testing.assert_series_equal(mine.accuracy, alone.accuracy)
        all_p = ensembles.vote(matrix, [f"P{i}" for i in range(1, 6)]).astype(float)
        p_only = mine.loc["P-only"]
        assert (p_only.ci_low, p_only.ci_high) == significance.bootstrap_ci(all_p, 300, seed=1)
        oracle = mine.loc["oracle L (best in-template LP template)"]
        assert (oracle.ci_low, oracle.ci_high) == significance.bootstrap_ci(matrix[oracle.draws], 300, seed=1)


def test_predictor_matrix_needs_both_methods():
    s = pd.concat([_scores("yesno", t, [1, 0]) for t in range(1, 6)])
    with pytest.raises(ValueError, match="run 02_readout first"):
        ensembles.predictor_matrix(s)


def test_headline_comparisons_pair_best_templates_on_the_same_pairs():
    s = _ensemble_scores(("a",))
    ens = ensembles.ensembles_by_model(s, trials=3, seed=0, resamples=100)
    head = comparisons.headline(s, ens, "lp", "intemplate_lp", "yesno", trials=3, seed=0)
    best = accuracy.best_templates(s)
    tl, tp = best[("a", "intemplate_lp")], best[("a", "yesno")]
    assert head.a.tolist() == [f"intemplate_lp (t{tl})", f"yesno (t{tp})", f"yesno (t{tp})",
                               f"ensemble {ens.loc[ens.accuracy[:4].idxmax(), 'setting']} (trial 1)"]
    assert head.b.tolist()[:3] == ["lp (tnone)", "lp (tnone)", f"intemplate_lp (t{tl})"]

    def correct(method, template):
        return s[(s.method == method) & (s.template == template)].sort_values("pair_id").correct.to_numpy()

    yes, lp = correct("yesno", tp), correct("lp", "none")
    assert (head.a_only[1], head.b_only[1]) == (int(np.sum(yes & ~lp)), int(np.sum(~yes & lp)))
    matrix = ensembles.predictor_matrix(s)
    setting = ens.loc[ens.accuracy[:4].idxmax(), "setting"]
    first_draw = ens.set_index("setting").loc[setting, "draws"].split("; ")[0].split("+")
    single = max([("yesno", tp, f"P{tp}"), ("intemplate_lp", tl, f"L{tl}")], key=lambda c: matrix[c[2]].mean())
    votes = ensembles.vote(matrix, first_draw)
    assert head.b[3] == f"{single[0]} (t{single[1]})"
    assert (head.a_only[3], head.b_only[3]) == (int(np.sum(votes & ~matrix[single[2]])),
                                                int(np.sum(~votes & matrix[single[2]])))


def _blimp_like():
    """yesno at templates 1 (all wrong) and 2, and lp, over 3 paradigms of 4 pairs."""
    info = {"a": ("X", True, None, 0.9), "b": ("X", False, "none", 0.7), "c": ("Y", False, "relational noun", 0.6)}
    t2 = {"a": [1, 1, 1, 0], "b": [1, 0, 0, 0], "c": [1, 1, 0, 0]}
    frames = []
    for p, (ph, ws, att, human) in info.items():
        for method, template, correct in (("yesno", 1, [0] * 4), ("yesno", 2, t2[p]), ("lp", "none", [1] * 4)):
            frames.append(_scores(method, template, correct, paradigm=p).assign(
                phenomenon=ph, word_shuffle=ws, attractor=att, human_agreement=human))
    return pd.concat(frames, ignore_index=True)


def test_phenomena_with_humans_at_the_best_template():
    t = paradigms.phenomena_with_humans(_blimp_like(), ["yesno"])
    assert t[["method", "phenomenon", "accuracy", "pairs", "human"]].values.tolist() == [
        ["yesno", "X", 0.5, 8, pytest.approx(0.8)], ["yesno", "Y", 0.5, 4, pytest.approx(0.6)]]
    assert set(paradigms.phenomena_with_humans(_blimp_like()).method) == {"yesno", "lp"}


def test_word_shuffle_paradigms_and_means():
    t = paradigms.word_shuffle_paradigms(_blimp_like(), ["yesno"])
    assert t[["paradigm", "accuracy", "word_shuffle"]].values.tolist() == [["a", 0.75, True], ["b", 0.25, False],
                                                                           ["c", 0.5, False]]
    means = paradigms.word_shuffle_means(t).set_index("word_shuffle")
    assert means.loc[True, "accuracy"] == 0.75 and means.loc[False, "accuracy"] == pytest.approx(0.375)
    assert means.paradigms.to_dict() == {False: 2, True: 1}
    with pytest.raises(ValueError, match="no word_shuffle"):
        paradigms.word_shuffle_paradigms(_blimp_like().drop(columns="word_shuffle"))


def test_attractors_leave_out_other_paradigms():
    t = paradigms.attractors(_blimp_like(), ["yesno"])
    assert t[["attractor", "accuracy", "pairs"]].values.tolist() == [["none", 0.25, 4], ["relational noun", 0.5, 4]]
    with pytest.raises(ValueError, match="no attractor"):
        paradigms.attractors(_blimp_like().drop(columns="attractor"))


def _ab(method, slots, correct, tie=None, model="m", template="1"):
    n = len(slots)
    return pd.DataFrame({"model": model, "method": method, "template": template, "paradigm": "p",
                         "pair_id": range(n), "good_slot": slots, "correct": correct,
                         "tie": tie if tie is not None else [False] * n})


def test_answers_are_read_from_the_decision():
    rows = _ab("ab", ["A", "B", "A", "B", "A"], [True, True, False, False, False],
               [False, False, False, False, True])
    assert prompting.answers(rows).tolist() == ["A", "B", "B", "A", "tie"]


def test_ab_answers_use_the_method_asked_for():
    scores = pd.concat([_ab("ab", ["A", "B", "A", "B"], [True, True, True, False]),
                        _ab("ab_logit", ["A", "B", "A", "B"], [True, False, False, False],
                            [False, False, True, False])])
    outlines = prompting.ab_answers(scores, "ab").iloc[0]  # answers A, B, A, A
    assert (outlines.share_A, outlines.share_A_expected, outlines.accuracy, outlines.ties) == (0.75, 0.5, 0.75, 0)
    logit = prompting.ab_answers(scores, "ab_logit").iloc[0]  # answers A, A, tie, A
    assert (logit.share_A, logit.accuracy, logit.ties, logit.method) == (0.75, 0.25, 1, "ab_logit")
    assert (outlines.tie_share_counted_wrong, logit.tie_share_counted_wrong) == (0.0, 0.25)
    agree = prompting.agreement(scores).iloc[0]
    assert (agree.pairs, agree.agreement, agree.accuracy_ab, agree.accuracy_ab_logit) == (4, 0.5, 0.75, 0.25)
    assert prompting.disagreements(scores).pair_id.tolist() == [1, 2]
    both = prompting.ab_answers(scores, ["ab", "ab_logit"])
    assert both.method.tolist() == ["ab", "ab_logit"] and both.share_A.tolist() == [0.75, 0.75]
    with pytest.raises(ValueError, match="no scores of 'ab_x'"):
        prompting.ab_answers(scores, "ab,ab_x")


def test_length_matched_keeps_the_pairs_of_equal_token_counts():
    s = pd.concat([_scores("lp", "none", [1, 0, 1, 1], n_good=[3, 4, 5, 6], n_bad=[3, 5, 5, 2]),
                   _scores("meanlp", "none", [0, 0, 1, 1], n_good=[3, 4, 5, 6], n_bad=[3, 5, 5, 2])])
    kept, words = length_bias.length_matched(s)
    assert sorted(kept.pair_id.unique()) == [0, 2] and len(kept) == 4 and words == " (length-matched: 2 of 4 pairs)"


def test_in_percent_shows_shares_of_pairs_in_percent_and_keeps_the_rest():
    table = pd.DataFrame({"method": ["lp"], "accuracy": [0.8234], "ci_low": [0.7], "pairs": [10],
                          accuracy.EXPECTED: [0.85], "r": [0.12345]})
    shown = accuracy.in_percent(table)
    assert list(shown.columns) == ["method", "accuracy (%)", "ci_low (%)", "pairs", f"{accuracy.EXPECTED} (%)", "r"]
    assert shown.iloc[0].tolist() == ["lp", 82.3, 70.0, 10, 85.0, 0.123]
    assert table["accuracy"].iloc[0] == 0.8234  # the table itself (what files keep) is unchanged
