"""06 and 07 across models: a store of two made-up models with planted effects (model a's
in_unacceptable curve falls by 20 points per doubling of the prefix, b's prefixes change
nothing; a's and b's AUCs and within-pair correlations known), written through ScoreStore and
read back as the notebooks read it; the cross-model tables recover them exactly."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from helpers.analysis import cross_model, cross_model_priming as cmp, cross_model_separability as cms
from helpers.analysis import priming_effects, separability as sep
from helpers.store import ScoreStore, load_files

LENGTHS = (25, 50, 100)
PARADIGMS, PAIRS = ("p1", "p2"), 10
TYPES = {"in_acceptable": ("in", "acceptable"), "in_unacceptable": ("in", "unacceptable"),
         "out_acceptable": ("out", "acceptable"), "out_unacceptable": ("out", "unacceptable"),
         "wikitext": ("unrelated", "acceptable")}


def _primed_rows(model: str) -> pd.DataFrame:
    """Every pair without a prefix (8 of 10 right per paradigm) and under each type and length;
    model a's in_unacceptable prefixes leave 6, 4, 2 of 10 right at 25, 50, 100 tokens."""
    rows = []
    for paradigm in PARADIGMS:
        for i in range(PAIRS):
            rows.append(dict(paradigm=paradigm, pair_id=i, prefix_type="none", domain="none", acceptability="none",
                             target_length=0, actual_length=0, correct=i < 8))
            for kind, (domain, acceptability) in TYPES.items():
                for step, length in enumerate(LENGTHS):
                    right = 6 - 2 * step if (model == "a" and kind == "in_unacceptable") else 8
                    rows.append(dict(paradigm=paradigm, pair_id=i, prefix_type=kind, domain=domain,
                                     acceptability=acceptability, target_length=length, actual_length=length + 1,
                                     correct=i < right))
    frame = pd.DataFrame(rows)
    return frame.assign(dataset="blimp", draw=0, tie=False, score_good=np.where(frame.correct, 1.0, 0.0), score_bad=0.5)


@pytest.fixture
def primed(tmp_path):
    store = ScoreStore(tmp_path)
    files = [store.write(_primed_rows(m), "blimp", m, "lp", None, {"model_name": m, "method": "lp"}, tag="primed_grid")
             for m in ("a", "b")]
    return load_files(files)


def test_the_planted_priming_effects_come_back_per_model(primed):
    curves = priming_effects.figure2(primed, n_resamples=50)
    longest = cmp.longest_effects(curves)
    assert list(zip(longest.model, longest.prefix_type)) == [(m, t) for m in ("a", "b") for t in TYPES]
    assert (longest.target_length == 100).all() and (longest["items"] == 20).all()
    wide = cross_model.side_by_side(longest, "delta", ["method", "prefix_type"])
    assert list(wide.columns) == ["a", "b"] and list(wide.index.get_level_values("prefix_type")) == list(TYPES)
    expected_a = [0.0, -0.6, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(wide["a"], expected_a, atol=1e-12)
    np.testing.assert_allclose(wide["b"], 0.0, atol=1e-12)
    np.testing.assert_allclose(longest.baseline, 0.8, atol=1e-12)
    a = longest[(longest.model == "a") & (longest.prefix_type == "in_unacceptable")].iloc[0]
    assert a.accuracy == pytest.approx(0.2, abs=1e-12) and a.ci_high <= 0 and a.ci_low >= -1

    slopes = cmp.length_slopes(curves)
    per_doubling = cross_model.side_by_side(slopes, "slope_per_doubling", ["method", "prefix_type"])
    np.testing.assert_allclose(per_doubling["a"], [0.0, -0.2, 0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(per_doubling["b"], 0.0, atol=1e-12)
    assert (slopes.lengths == 3).all() and (slopes.shortest == 25).all() and (slopes.longest == 100).all()
    assert np.isnan(cmp.length_slopes(curves[curves.target_length == 100]).slope_per_doubling).all()


def test_the_length_terms_are_each_models_own_regression(primed):
    fits = priming_effects.regressions(primed)
    terms = cmp.length_terms(fits)
    names = ["log_length", "log_length:domain[in]", "log_length:acceptability[acceptable]",
             "log_length:domain[in]:acceptability[acceptable]", "log_length", "log_length:source[dataset]"]
    assert list(terms.term) == names * 2 and list(terms.model) == ["a"] * 6 + ["b"] * 6
    alone = cmp.length_terms(priming_effects.regressions(primed[primed.model == "b"]))
    pd.testing.assert_frame_equal(terms[terms.model == "b"].reset_index(drop=True), alone)
    by = terms.set_index(["model", "regression", "term"]).estimate
    # a's in_unacceptable prefixes lose accuracy with length, the others do not; its two paradigms are
    # alike (no paradigm variance), so the length terms are a plain logistic regression's (statsmodels GLM)
    d = primed[(primed.model == "a") & primed.prefix_type.isin(priming_effects.DATASET_PREFIXES)]
    d = d.assign(ll=np.log(d.actual_length) - np.log(d.actual_length).mean(), dom=np.where(d.domain == "in", 1., -1.),
                 acc=np.where(d.acceptability == "acceptable", 1., -1.), y=d.correct.astype(float))
    glm = smf.glm("y ~ ll * dom * acc", data=d, family=sm.families.Binomial()).fit().params
    domain = "length x domain x acceptability"
    for term, name in (("ll", "log_length"), ("ll:dom", "log_length:domain[in]"),
                       ("ll:acc", "log_length:acceptability[acceptable]"),
                       ("ll:dom:acc", "log_length:domain[in]:acceptability[acceptable]")):
        assert by[("a", domain, name)] == pytest.approx(glm[term], abs=1e-3)
    assert glm["ll:acc"] > 0.3 and glm["ll:dom"] < -0.3
    np.testing.assert_allclose(by["b"], 0.0, atol=1e-4)  # b's prefixes change nothing
    wide = cross_model.side_by_side(terms, "estimate", ["method", "regression", "term"])
    assert list(wide.columns) == ["a", "b"] and len(wide) == 6


def _sentences(model: str) -> pd.DataFrame:
    """LP of 4 pairs: model a good 1..4 and bad 0.5 less (AUC 10/16, r = 1); model b good 1..4
    and bad 1, 3, 2, 4 minus 10 (AUC 1, r = 0.8)."""
    good = np.array([1.0, 2.0, 3.0, 4.0])
    bad = good - 0.5 if model == "a" else np.array([1.0, 3.0, 2.0, 4.0]) - 10
    return pd.DataFrame({"dataset": "blimp_hu2025", "paradigm": "p1", "pair_id": range(4), "score_good": good, "score_bad": bad,
                         "correct": good > bad, "tie": False, "tgt_sum_good": good, "tgt_sum_bad": bad,
                         "n_tokens_good": [2, 2, 4, 4], "n_tokens_bad": 2})


def test_auc_and_pair_correlation_per_model(tmp_path):
    store = ScoreStore(tmp_path)
    files = [store.write(_sentences(m), "blimp_hu2025", m, "lp", None, {"model_name": m, "method": "lp"})
             for m in ("a", "b")]
    scores = load_files(files)
    long = cms.sentences_long(scores, ["lp", "meanlp"], ["lp_missing_extra"], ["blimp_hu2025"])
    auc = sep.auc_table(long, n_resamples=20)
    matrix = cms.auc_matrix(auc)
    assert list(matrix.columns) == ["lp", "meanlp"]
    assert list(matrix.index) == [("blimp_hu2025", "a"), ("blimp_hu2025", "b")]
    assert matrix.loc[("blimp_hu2025", "a"), "lp"] == 10 / 16 and matrix.loc[("blimp_hu2025", "b"), "lp"] == 1.0
    # meanlp: a's good 0.5, 1, 0.75, 1 against bad 0.25, 0.75, 1.25, 1.75 -> 6 wins and 1 tie of 16
    assert matrix.loc[("blimp_hu2025", "a"), "meanlp"] == (6 + 1 / 2) / 16
    r = cms.pair_correlations(sep.pairs_wide(sep.metrics_table(scores, ["lp"])), n_resamples=20)
    assert list(r.model) == ["a", "b"] and list(r.pairs) == [4, 4]
    assert r.r.tolist() == pytest.approx([1.0, 0.8], abs=1e-12)
    with pytest.raises(ValueError, match="several templates"):
        cms.auc_matrix(pd.concat([auc, auc.assign(template="2")]))


def test_side_by_side_refuses_two_rows_of_one_cell():
    table = pd.DataFrame({"model": ["a", "a"], "method": ["lp", "lp"], "value": [1.0, 2.0]})
    with pytest.raises(ValueError, match="two rows of the same"):
        cross_model.side_by_side(table, "value", ["method"])


def test_each_model_releases_a_model_before_loading_the_next(monkeypatch):
    """06's and 07's other models load one at a time: the previous one is gone when the next loads."""
    import weakref

    from helpers.runs import model_list

    class Loaded:
        def __init__(self, name):
            self.name = name

    made = []

    def load(name, settings=None):
        assert all(ref() is None for ref in made), "a model was still held when the next one loaded"
        made.append(weakref.ref(obj := Loaded(name)))
        return obj

    monkeypatch.setattr(model_list, "deferred_scorer", load)
    assert model_list.each_model("a,b,c", lambda s: s.name) == ["a", "b", "c"]
    assert len(made) == 3
