"""Separability under priming (06 x Hu et al. 2025): pooled AUC and within-pair correlation per
prefix type and length, on a primed frame with planted effects whose values are known exactly."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.analysis import pair_correlation as pc
from helpers.analysis import separability as sep, significance
from helpers.analysis.primed_separability import COLUMNS, primed_separability
from helpers.plots import priming as plots_priming

N = 10
I = np.arange(N, dtype=float)


def _rows(prefix_type, length, good, bad, draw=0, method="lp", template="none", n=N):
    good, bad = np.asarray(good, float)[:n], np.asarray(bad, float)[:n]
    return pd.DataFrame({"model": "m", "dataset": "blimp", "method": method, "template": template,
                         "paradigm": "p", "pair_id": range(n), "prefix_type": prefix_type,
                         "target_length": length, "draw": draw, "score_good": good, "score_bad": bad,
                         "correct": good > bad})


@pytest.fixture
def frame():
    return pd.concat([
        _rows("none", 0, -10 - I, -11 - I),  # baseline: bad one below good, pairs overlap pooled
        _rows("in_acceptable", 25, I, I - 10),  # separable pooled: every good above every bad
        _rows("in_unacceptable", 25, I, I),  # good and bad identical
        _rows("out_acceptable", 25, I, 9 - I),  # the same values, order reversed: r = -1
        _rows("in_acceptable", 50, I + 1, I - 10, draw=0),  # two draws whose mean is I
        _rows("in_acceptable", 50, I - 1, I - 10, draw=1),
        _rows("wikitext", 25, [0.0, 1.0], [2.0, -1.0], n=2),  # two pairs: no correlation
        _rows("none", 0, I, I - 0.5, method="ab", template="1"),
        _rows("in_acceptable", 25, I, I - 0.5, method="ab", template="1"),
    ], ignore_index=True)


def test_planted_effects_give_their_exact_values(frame):
    t = primed_separability(frame, n_resamples=300).set_index(["method", "prefix_type", "target_length"])
    base = t.loc[("lp", "none", 0)]
    # good -10..-19, bad -11..-20: good_i beats bad_j when j >= i (55 of 100), ties at j = i - 1 (9)
    assert base.auc == (55 + 9 / 2) / 100 and base.r == pytest.approx(1.0, abs=1e-12) and base.accuracy == 1.0
    row = t.loc[("lp", "in_acceptable", 25)]
    assert (row.auc, row.auc_ci_low, row.auc_ci_high) == (1.0, 1.0, 1.0)
    assert row.r == pytest.approx(1.0, abs=1e-12) and row.accuracy == 1.0 and row.pairs == N
    row = t.loc[("lp", "in_unacceptable", 25)]
    assert row.auc == 0.5 and row.r == pytest.approx(1.0, abs=1e-12) and row.accuracy == 0.0  # ties are errors
    row = t.loc[("lp", "out_acceptable", 25)]
    assert row.auc == 0.5 and row.r == pytest.approx(-1.0, abs=1e-12) and row.accuracy == 0.5
    row = t.loc[("lp", "in_acceptable", 50)]  # draws averaged per pair: good = I, bad = I - 10
    assert (row.pairs, row.auc, row.accuracy) == (N, 1.0, 1.0) and row.r == pytest.approx(1.0, abs=1e-12)
    row = t.loc[("lp", "wikitext", 25)]  # good {0, 1} vs bad {2, -1}: 2 of 4 comparisons
    assert (row.pairs, row.auc) == (2, 0.5) and np.isnan(row.r) and np.isnan(row.r_ci_low)
    assert t.loc[("ab", "in_acceptable", 25), "auc"] == 55 / 100  # good I vs bad I - 0.5: good_i wins for j <= i
    assert bool(t.loc[("lp", "none", 0), "scores_alone"]) and not bool(t.loc[("ab", "none", 0), "scores_alone"])


def test_intervals_are_those_of_auc_table_and_pair_correlation(frame):
    t = primed_separability(frame, n_resamples=400, level=0.9, seed=3)
    row = t[(t.method == "lp") & (t.prefix_type == "none")].iloc[0]
    good, bad = -10 - I, -11 - I
    assert (row.auc_ci_low, row.auc_ci_high) == significance.auc_ci(good, bad, 400, 0.9, seed=3)
    long = pd.DataFrame({"model": "m", "dataset": "d", "method": "lp", "template": "none",
                         "grammatical": [1] * N + [0] * N, "score": np.r_[good, bad]})
    assert row.auc == sep.auc_table(long, n_resamples=0).auc.iloc[0]
    row = t[(t.method == "lp") & (t.prefix_type == "out_acceptable")].iloc[0]
    ref = pc.correlation(I, 9 - I, 400, 0.9, seed=3)
    assert (row.r, row.r_p, row.r_ci_low, row.r_ci_high) == (ref["r"], ref["p"], ref["ci_low"], ref["ci_high"])
    noisy = frame.assign(score_bad=frame.score_bad + np.random.default_rng(0).normal(0, 3, len(frame)))
    row = primed_separability(noisy, n_resamples=0).query("method == 'lp' and prefix_type == 'in_unacceptable'")
    rows = noisy[(noisy.method == "lp") & (noisy.prefix_type == "in_unacceptable")]
    assert row.r.iloc[0] == pytest.approx(np.corrcoef(rows.score_good, rows.score_bad)[0, 1], abs=1e-12)


def test_rows_come_baseline_first_and_do_not_depend_on_row_order(frame):
    t = primed_separability(frame, n_resamples=100)
    assert list(t.columns) == COLUMNS
    lp = t[t.method == "lp"]
    assert list(zip(lp.prefix_type, lp.target_length)) == [
        ("none", 0), ("in_acceptable", 25), ("in_acceptable", 50), ("in_unacceptable", 25),
        ("out_acceptable", 25), ("wikitext", 25)]
    shuffled = primed_separability(frame.sample(frac=1, random_state=4), n_resamples=100)
    pd.testing.assert_frame_equal(t.sort_values(["method", "prefix_type", "target_length"]).reset_index(drop=True),
                                  shuffled.sort_values(["method", "prefix_type", "target_length"])
                                  .reset_index(drop=True))


def test_bad_frames_are_refused_with_what_to_do(frame):
    with pytest.raises(ValueError, match=r"lacks columns \['score_bad'\]"):
        primed_separability(frame.drop(columns="score_bad"))
    with pytest.raises(ValueError, match="1 rows have no score_good"):
        primed_separability(frame.assign(score_good=frame.score_good.where(frame.index != 3)))
    with pytest.raises(ValueError, match="no primed scores"):
        primed_separability(frame.iloc[:0])


def test_figure_has_an_auc_and_a_correlation_row_per_method(frame):
    fig = plots_priming.separability(primed_separability(frame, n_resamples=50), "m on blimp")
    axes = fig.axes
    assert len(axes) == 4  # 2 rows x (lp, ab · template 1)
    assert [ax.get_title() for ax in axes] == ["m · lp", "m · ab · template 1", "m · lp", "m · ab · template 1"]
    lines = {line.get_label() for line in axes[0].get_lines()}
    assert {"in_acceptable", "in_unacceptable", "out_acceptable", "wikitext", "chance", "no prefix"} <= lines
    no_prefix = [line for line in axes[0].get_lines() if line.get_label() == "no prefix"][0]
    assert no_prefix.get_ydata()[0] == (55 + 9 / 2) / 100
