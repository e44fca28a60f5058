"""Analysis functions on small synthetic score tables with hand-computed values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers.analysis import accuracy, ensembles, length_bias, significance


def _scores(method, template, correct, n_good=None, n_bad=None, model="m"):
    n = len(correct)
    return pd.DataFrame({"model": model, "method": method, "template": str(template), "paradigm": "p",
                         "phenomenon": "ph", "pair_id": range(n), "correct": correct,
                         "tie": [False] * n, "n_tokens_good": n_good or [5] * n, "n_tokens_bad": n_bad or [5] * n})


def test_table3_mean_sd_best_and_ties():
    s = pd.concat([_scores("yesno", t, c) for t, c in
                   [(1, [1, 1, 0, 0]), (2, [1, 1, 1, 0]), (3, [1, 0, 0, 0]), (4, [1, 1, 1, 1]), (5, [0, 0, 0, 0])]])
    s.loc[s.template == "5", "tie"] = [True, False, False, False]
    t = accuracy.table3(s).iloc[0]
    accs = [0.5, 0.75, 0.25, 1.0, 0.0]
    assert t.accuracy_mean == pytest.approx(np.mean(accs)) and t.accuracy_sd == pytest.approx(np.std(accs, ddof=1))
    assert t.best_template == "4" and t.best_accuracy == 1.0 and t.ties == 1 and t.pairs == 4


def test_bootstrap_ci_against_scipy():
    rng = np.random.default_rng(1)
    correct = rng.random(400) < 0.7
    lo, hi = significance.bootstrap_ci(correct, n_resamples=4000, seed=3)
    ref = stats.bootstrap((correct.astype(float),), np.mean, n_resamples=4000, method="percentile",
                          random_state=np.random.default_rng(5)).confidence_interval
    assert abs(lo - ref.low) < 0.01 and abs(hi - ref.high) < 0.01
    assert lo < correct.mean() < hi
    assert significance.bootstrap_ci(correct, seed=3) == significance.bootstrap_ci(correct, seed=3)


def test_mcnemar_against_statsmodels_and_by_hand():
    from statsmodels.stats.contingency_tables import mcnemar

    # 20 both right, 10 only A, 3 only B, 7 both wrong
    a = np.array([1] * 20 + [1] * 10 + [0] * 3 + [0] * 7, bool)
    b = np.array([1] * 20 + [0] * 10 + [1] * 3 + [0] * 7, bool)
    res = significance.mcnemar(a, b)
    assert (res["a_only"], res["b_only"], res["exact"]) == (10, 3, True)
    assert res["p_value"] == pytest.approx(2 * (1 + 13 + 78 + 286) / 2**13)  # exact binomial, n=13, k<=3
    ref = mcnemar([[20, 10], [3, 7]], exact=True)
    assert res["statistic"] == ref.statistic and res["p_value"] == pytest.approx(ref.pvalue)
    big_a, big_b = np.r_[a, a, a], np.r_[b, b, b]
    chi = significance.mcnemar(big_a, big_b)
    assert not chi["exact"] and chi["statistic"] == pytest.approx((abs(30 - 9) - 1) ** 2 / 39)


def test_point_biserial_by_hand():
    correct = np.array([1, 0, 1, 1, 0])
    diff = np.array([2, -1, 0, 3, -2])
    r, _ = length_bias.point_biserial(correct, diff)
    assert r == pytest.approx(np.corrcoef(correct, diff)[0, 1])
    # r = (M1 - M0) / s_n * sqrt(p q): means 5/3 and -3/2, population sd of diff
    m1, m0, p = 5 / 3, -1.5, 0.6
    assert r == pytest.approx((m1 - m0) / np.std(diff) * np.sqrt(p * (1 - p)))


def test_wilson_interval_against_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = length_bias.wilson(8, 10)
    ref = proportion_confint(8, 10, method="wilson")
    assert (lo, hi) == pytest.approx(ref)


def test_accuracy_by_length_and_paradigm_gap():
    s = pd.concat([_scores("yesno", 1, [1, 1, 0, 1], [6, 5, 4, 7], [5, 5, 6, 5]),
                   _scores("intemplate_lp", 1, [0, 1, 1, 0], [6, 5, 4, 7], [5, 5, 6, 5])])
    by_len = length_bias.accuracy_by_length(s)
    row = by_len[(by_len.method == "yesno") & (by_len.length_diff == -2)].iloc[0]
    assert row.accuracy == 0.0 and row.pairs == 1
    table, r = length_bias.paradigm_gap(pd.concat([s, s.assign(paradigm="q", correct=[1, 1, 1, 1] * 2)]))
    assert table.set_index("paradigm").loc["p", "gap"] == pytest.approx(0.75 - 0.5)


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
    assert t.loc["P-only", "accuracy"] == pytest.approx(ensembles.vote(m, [f"P{i}" for i in range(1, 6)]).mean())
    assert t.loc["P-only", "sd"] == pytest.approx(0.0, abs=1e-12)  # every trial draws all five P
    assert t.loc["oracle P (best Yes/No template)", "accuracy"] == pytest.approx(m[[f"P{i}" for i in range(1, 6)]].mean().max())
    again = ensembles.ensemble_table(m, trials=10, seed=0)
    pd.testing.assert_frame_equal(t.reset_index(), again)
    first = t.loc["Mix-P3", "draws"].split("; ")[0].split("+")
    assert sum(c.startswith("P") for c in first) == 3


def test_predictor_matrix_needs_both_methods():
    s = pd.concat([_scores("yesno", t, [1, 0]) for t in range(1, 6)])
    with pytest.raises(ValueError, match="run 02_readout first"):
        ensembles.predictor_matrix(s)
