"""MORCELA (Tjuatja et al. 2025): SLOR as its special case, known parameters recovered (exactly
without noise, within the delta-method standard error with noise), parity with statsmodels' OLS,
deterministic folds that keep pairs together, held-out correlations recomputed by hand, the
BLiMP transfer, clear errors, the figure, and one run over stored scores of a tiny model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from helpers.analysis import morcela as mo
from helpers.analysis import separability as sep
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer
from helpers.methods import measures
from helpers.plots import morcela as figs
from helpers.runner import run_methods
from helpers.store import ScoreStore, load_files
from helpers.settings import Settings

BETA, GAMMA, SCALE, INTERCEPT = 0.4, 0.7, 2.0, 0.3


def synthetic(m: int = 600, noise: float = 0.0, seed: int = 1) -> pd.DataFrame:
    """``m`` sentences (``m / 2`` pairs) whose ratings are INTERCEPT + SCALE * MORCELA(BETA, GAMMA)
    plus Gaussian noise of sd ``noise``; log-probs shaped like an LM's (LP partly follows
    unigram frequency, both grow with length)."""
    rng = np.random.default_rng(seed)
    n = rng.integers(3, 25, m).astype(float)
    uni = -rng.uniform(5, 12, m) * n
    lp = 0.5 * uni + rng.normal(0, 3, m) * np.sqrt(n) - 2 * n
    rating = INTERCEPT + SCALE * mo.morcela(lp, uni, n, BETA, GAMMA) + rng.normal(0, noise, m) * (noise > 0)
    return pd.DataFrame({"model": "m", "dataset": "li", "paradigm": "p", "item": np.arange(m) // 2,
                         "side": np.where(np.arange(m) % 2, "bad", "good"), "lp": lp, "unigram_lp": uni,
                         "n_tokens": n, "rating": rating})


def test_slor_parameters_make_morcela_slor_exactly():
    d = synthetic(50)
    lp, uni, n = d.lp.to_numpy(), d.unigram_lp.to_numpy(), d.n_tokens.to_numpy()
    assert np.array_equal(mo.morcela(lp, uni, n, 1.0, 0.0), measures.slor(lp, uni, n))
    assert np.array_equal(mo.Params(1.0, 0.0, 1.0, 0.0, 50).predict(lp, uni, n), measures.slor(lp, uni, n))
    assert np.array_equal(mo.fixed_scores(d)["slor"], measures.slor(lp, uni, n))
    assert np.array_equal(mo.fixed_scores(d)["penlp"], lp / ((5 + n) / 6) ** 0.8)


def test_zero_noise_recovers_the_parameters_exactly():
    d = synthetic()
    p = mo.fit(d)
    assert (p.beta, p.gamma, p.scale, p.intercept) == pytest.approx((BETA, GAMMA, SCALE, INTERCEPT), abs=1e-6)
    assert p.sentences == 600
    # the paper's ablations, with the fixed parameter at its true value, recover the other one
    assert mo.fit(d, beta=BETA).gamma == pytest.approx(GAMMA, abs=1e-6)
    assert mo.fit(d, gamma=GAMMA).beta == pytest.approx(BETA, abs=1e-6)
    fixed = mo.fit(d, beta=BETA, gamma=GAMMA)
    assert (fixed.beta, fixed.gamma, fixed.scale) == pytest.approx((BETA, GAMMA, SCALE), abs=1e-6)


def test_noisy_fit_recovers_within_the_delta_method_error_and_matches_statsmodels():
    noise = 0.05
    d = synthetic(noise=noise)
    p = mo.fit(d)
    x = np.column_stack([d.lp / d.n_tokens, d.unigram_lp / d.n_tokens, 1 / d.n_tokens])
    ols = sm.OLS(d.rating.to_numpy(), sm.add_constant(x)).fit()
    b0, c1, c2, c3 = ols.params
    assert (p.scale, p.beta, p.gamma, p.intercept) == pytest.approx((c1, -c2 / c1, c3 / c1, b0), rel=1e-9)
    # the tolerance: beta = -c2/c1 and gamma = c3/c1 have delta-method sds from the OLS covariance
    # with the true noise sd; the estimate must lie within 4 of them, and they are small (tight)
    xc = x - x.mean(axis=0)
    cov = noise ** 2 * np.linalg.inv(xc.T @ xc)
    g_beta = np.array([c2 / c1 ** 2, -1 / c1, 0.0])
    g_gamma = np.array([-c3 / c1 ** 2, 0.0, 1 / c1])
    sd_beta, sd_gamma = np.sqrt(g_beta @ cov @ g_beta), np.sqrt(g_gamma @ cov @ g_gamma)
    assert sd_beta < 0.002 and sd_gamma < 0.05
    assert abs(p.beta - BETA) < 4 * sd_beta and abs(p.gamma - GAMMA) < 4 * sd_gamma


def test_folds_are_deterministic_by_seed_and_keep_each_pair_together():
    d = synthetic(200)
    a, b, c = mo.folds(d["item"], 5, seed=3), mo.folds(d["item"], 5, seed=3), mo.folds(d["item"], 5, seed=4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert (d.assign(fold=a).groupby("item")["fold"].nunique() == 1).all()
    assert sorted(np.bincount(a)) == [40] * 5  # 100 pairs, 20 per fold
    uneven = mo.folds(np.repeat(np.arange(7), 2), 3, seed=0)  # 7 pairs in 3 folds: 2, 2 and 3 pairs
    assert sorted(np.bincount(uneven)) == [4, 4, 6] and (uneven[::2] == uneven[1::2]).all()
    with pytest.raises(ValueError, match="3 pairs cannot fill 5 folds"):
        mo.folds([0, 0, 1, 1, 2, 2], 5)
    with pytest.raises(ValueError, match="k must be a number of folds >= 2"):
        mo.folds(d["item"], 1)


def test_held_out_correlations_are_the_folds_recomputed_by_hand():
    d = synthetic(noise=0.05)
    ev = mo.evaluate(d, k=5, seed=0)
    fold_of = mo.folds(d["paradigm"].astype(str) + "\x1f" + d["item"].astype(str), 5, 0)
    for fold in range(5):
        train, test = d[fold_of != fold], d[fold_of == fold]
        p = mo.fit(train)
        row = ev.folds[(ev.folds.fold == fold) & (ev.folds.function == "morcela")].iloc[0]
        expected = p.predict(test.lp, test.unigram_lp, test.n_tokens)
        assert row.pearson == pytest.approx(stats.pearsonr(expected, test.rating).statistic, abs=1e-12)
        assert row.spearman == pytest.approx(stats.spearmanr(expected, test.rating).statistic, abs=1e-12)
        assert (row.beta, row.gamma) == pytest.approx((p.beta, p.gamma), abs=1e-12)
        slor = ev.folds[(ev.folds.fold == fold) & (ev.folds.function == "slor")].iloc[0]
        assert slor.pearson == pytest.approx(stats.pearsonr(measures.slor(test.lp, test.unigram_lp, test.n_tokens),
                                                            test.rating).statistic, abs=1e-12)
    held = ev.heldout.set_index("function")
    assert list(held.index) == ["lp", "meanlp", "penlp", "slor", "morcela", "morcela_beta1", "morcela_gamma0"]
    morcela_folds = ev.folds[ev.folds.function == "morcela"]
    assert held.loc["morcela", "pearson"] == pytest.approx(morcela_folds.pearson.mean(), abs=1e-12)
    assert held.loc["morcela", "pearson_sd"] == pytest.approx(morcela_folds.pearson.std(ddof=1), abs=1e-12)
    assert held.loc["morcela", "folds"] == 5 and held.loc["morcela", "sentences"] == 600
    # generated by MORCELA(0.4, 0.7): the learned function wins on held-out sentences
    assert held.loc["morcela", "pearson"] > 0.99 > held.loc["slor", "pearson"]
    full = ev.params.set_index("variant").loc["morcela"]
    assert (full.beta, full.gamma) == pytest.approx((mo.fit(d).beta, mo.fit(d).gamma), abs=1e-12)
    assert full.beta_fold_sd == pytest.approx(morcela_folds.beta.std(ddof=1), abs=1e-12)


def test_unrated_sentences_are_left_out_and_counted():
    d = synthetic(200, noise=0.05)
    d.loc[:9, "rating"] = np.nan
    ev = mo.evaluate(d)
    assert set(ev.params.unrated) == {10} and set(ev.params.sentences) == {190}
    assert ev.heldout.sentences.max() == 190
    with pytest.raises(ValueError, match="10 sentences have no rating: drop them before fitting"):
        mo.fit(d)


def test_clear_errors_for_missing_ratings_too_few_items_and_collinear_lengths():
    d = synthetic(40)
    with pytest.raises(ValueError, match=r"MORCELA needs columns \['rating'\]"):
        mo.fit(d.drop(columns="rating"))
    with pytest.raises(ValueError, match=r"MORCELA needs columns \['unigram_lp'\]"):
        mo.fit(d.drop(columns="unigram_lp"))
    with pytest.raises(ValueError, match="at least 8 rated sentences to fit, got 6"):
        mo.fit(d.head(6))
    with pytest.raises(ValueError, match="collinear"):
        mo.fit(d.assign(n_tokens=7.0))
    assert mo.fit(d.assign(n_tokens=7.0), gamma=0.0).gamma == 0.0  # fixing gamma identifies beta
    with pytest.raises(ValueError, match="fold 0 holds 2 rated sentences"):
        mo.evaluate(d.head(20), k=10)
    with pytest.raises(ValueError, match="positive token counts"):
        mo.fit(d.assign(n_tokens=0.0))


def sentence_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """A metrics_table-like frame of ``pairs`` (dataset, paradigm, pair_id, good/bad columns of
    lp, unigram_lp, n_tokens)."""
    rows = []
    for r in pairs.itertuples():
        for side in ("good", "bad"):
            rows.append({"model": "m", "dataset": r.dataset, "paradigm": r.paradigm, "item": r.pair_id, "side": side,
                         "lp": getattr(r, f"lp_{side}"), "unigram_lp": getattr(r, f"uni_{side}"),
                         "n_tokens": getattr(r, f"n_{side}")})
    return pd.DataFrame(rows)


def test_rated_sentences_give_each_side_its_own_rating():
    frame = pd.DataFrame({"dataset": "li", "paradigm": "A", "pair_id": [0, 1], "good": ["g0", "g1"],
                          "bad": ["b0", "b1"], "rating_good": [1.0, np.nan], "rating_bad": [-1.0, -0.5]})
    pairs = frame.assign(lp_good=-10.0, lp_bad=-12.0, uni_good=-30.0, uni_bad=-31.0, n_good=4, n_bad=4)
    rated = mo.rated_sentences(sentence_table(pairs), frame)
    got = rated.set_index(["item", "side"])["rating"]
    assert got[(0, "good")] == 1.0 and got[(0, "bad")] == -1.0 and np.isnan(got[(1, "good")])
    assert got[(1, "bad")] == -0.5
    with pytest.raises(ValueError, match="lacks columns"):
        mo.rated_sentences(sentence_table(pairs), frame.drop(columns="rating_bad"))
    with pytest.raises(ValueError, match="no sentence has a rating"):
        mo.rated_sentences(sentence_table(pairs), frame.assign(rating_good=np.nan, rating_bad=np.nan))


def test_blimp_accuracy_per_paradigm_and_its_correlation_with_humans():
    # 4 paradigms x 4 pairs; the good sentence is ahead on LP in k of 4 pairs of paradigm k
    rows = []
    for k, paradigm in enumerate(["p0", "p1", "p2", "p3"]):
        for i in range(4):
            ahead = i < k + 1 if k < 3 else i < 2
            rows.append({"dataset": "blimp", "paradigm": paradigm, "pair_id": i, "lp_good": -10.0 if ahead else -14.0,
                         "lp_bad": -12.0, "uni_good": -30.0, "uni_bad": -30.0, "n_good": 5, "n_bad": 5})
    table = sentence_table(pd.DataFrame(rows))
    human = {"p0": 0.7, "p1": 0.8, "p2": 0.95, "p3": 0.9}
    params = pd.DataFrame([{"model": "m", "dataset": "li", "variant": "morcela", "beta": 1.0, "gamma": 0.0,
                            "scale": 1.0, "intercept": 0.0, "sentences": 100},
                           {"model": "m", "dataset": "li", "variant": "flipped", "beta": 1.0, "gamma": 0.0,
                            "scale": -1.0, "intercept": 0.0, "sentences": 100}])
    per_paradigm, summary = mo.blimp_agreement(table, human, params)
    acc = per_paradigm[per_paradigm.function == "lp"].set_index("paradigm")["accuracy"]
    assert acc.to_dict() == {"p0": 0.25, "p1": 0.5, "p2": 0.75, "p3": 0.5}
    s = summary.set_index("function")
    x, y = [0.25, 0.5, 0.75, 0.5], [0.7, 0.8, 0.95, 0.9]
    assert s.loc["lp", "pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert s.loc["lp", "spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert s.loc["lp", "accuracy"] == 0.5 and s.loc["lp", "paradigms"] == 4 and s.loc["lp", "pairs"] == 16
    # beta = 1, gamma = 0, scale 1 is SLOR (same lengths: SLOR ranks as LP); a negative scale reverses
    assert s.loc["morcela", "pearson"] == s.loc["slor", "pearson"] == s.loc["lp", "pearson"]
    assert s.loc["flipped", "accuracy"] == 0.5 and per_paradigm.query("function == 'flipped'").accuracy.tolist() == \
        [0.75, 0.5, 0.25, 0.5]
    with pytest.raises(ValueError, match="2 paradigms of blimp have a human agreement"):
        mo.blimp_agreement(table, {"p0": 0.7, "p1": 0.8}, params)
    with pytest.raises(ValueError, match="no MORCELA fit of 'm'"):
        mo.blimp_agreement(table, human, params.assign(model="other"))


def test_figure_has_one_panel_each_and_draws_one_model():
    ev = mo.evaluate(synthetic(200, noise=0.05))
    blimp = pd.DataFrame({"model": "m", "function": ["lp", "slor", "morcela"], "pearson": [0.1, 0.2, 0.3],
                          "spearman": [0.1, 0.25, 0.3], "paradigms": 67})
    fig = figs.morcela_summary(ev.heldout, ev.folds, ev.params, blimp)
    assert len(fig.axes) == 3 and "67 paradigms" in fig.axes[1].get_title()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["LP", "MeanLP", "PenLP", "SLOR", "MORCELA γ=0",
                                                                     "MORCELA β=1", "MORCELA"]
    assert len(figs.morcela_summary(ev.heldout, ev.folds, ev.params).axes) == 2
    with pytest.raises(ValueError, match="draws one model"):
        figs.morcela_summary(ev.heldout, ev.folds, ev.params.assign(model="other"))


def test_a_run_over_stored_scores_of_a_tiny_model(tiny, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sees a dog.\nWho did you see?\nThe students admire the teacher.\n")
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    li = load("li_hu2025")
    li = first_per_paradigm(li[li.paradigm.isin(li.paradigm.drop_duplicates().iloc[:10])], 3)
    blimp = load("blimp_hu2025")
    blimp = first_per_paradigm(blimp[blimp.paradigm.isin(blimp.paradigm.drop_duplicates().iloc[:4])], 3)
    store, files = ScoreStore(tmp_path / "scores"), []
    for name, frame in (("li_hu2025", li), ("blimp_hu2025", blimp)):
        files += run_methods(scorer, DatasetSelection(name, frame, limit=3), ["lp", "slor"],
                             {"unigram_corpus": str(corpus)}, store=store)
    scores = load_files(files)
    table = sep.metrics_table(scores, ["lp", "slor"])
    stored = scores[scores.method == "slor"]
    assert np.array_equal(np.sort(table.unigram_lp), np.sort(np.r_[stored.uni_sum_good, stored.uni_sum_bad]))
    sentences = mo.rated_sentences(table[table.dataset == "li_hu2025"], li)
    rated = li[["rating_good", "rating_bad"]].notna().to_numpy().sum()
    assert len(sentences) == 2 * len(li) == 60 and sentences.rating.notna().sum() == rated
    ev = mo.evaluate(sentences, k=3)
    assert set(ev.params.variant) == set(mo.VARIANTS) and ev.heldout.folds.eq(3).all()
    per_paradigm, summary = mo.blimp_agreement(table[table.dataset == "blimp_hu2025"],
                                               blimp.groupby("paradigm").human_agreement.first(), ev.params)
    slor = per_paradigm[per_paradigm.function == "slor"].set_index("paradigm")["accuracy"]
    wide = sep.pairs_wide(table[table.dataset == "blimp_hu2025"], "slor")
    by_hand = (wide.slor_good > wide.slor_bad).groupby(wide.paradigm).mean()
    assert slor.sort_index().tolist() == by_hand.sort_index().tolist()
    assert summary.paradigms.eq(4).all() and summary.pairs.eq(12).all()
