"""06 and 07 with `model` a list (papermill, two tiny models, a few pairs): each model is scored
into the store, and the cross-model tables, tagged with both names, hold the first model's own
tables and the second model's values recomputed from its score files."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from notebook_run import run_notebook

from helpers.analysis import priming_effects, separability as sep
from helpers.store import load_files

MODELS = ["tiny-gpt2", "tiny-llama"]
BOTH = "tiny-gpt2+tiny-llama"


def _config(path):
    return json.loads(path.with_name(path.name + ".json").read_text())["config"]


@pytest.mark.slow
def test_06_across_two_models(scratch):
    run_notebook("06_context_priming.ipynb", scratch / "06.ipynb", model=MODELS, dataset="blimp", limit=1,
                 paradigms=None, lengths=[0, 25, 50], phenomenon_sentences=0, parser="none")
    out = scratch / "outputs"
    curves = pd.read_csv(out / "tables" / f"06_curves__{BOTH}__blimp__limit-1.csv")
    first = pd.read_csv(out / "tables" / "06_figure2__tiny-gpt2__blimp__limit-1.csv")
    assert list(dict.fromkeys(curves.model)) == MODELS and len(curves) == 2 * 5 * 2 and (curves["items"] == 67).all()
    pd.testing.assert_frame_equal(curves[curves.model == "tiny-gpt2"].reset_index(drop=True), first)
    files = [out / "scores" / "blimp" / m / "lp__primed_grid.parquet" for m in MODELS]
    llama = load_files(files[1:])
    assert len(llama) == 67 * (1 + 5 * 2)
    pd.testing.assert_frame_equal(curves[curves.model == "tiny-llama"].reset_index(drop=True),
                                  priming_effects.figure2(llama), check_dtype=False, atol=1e-12)
    longest = pd.read_csv(out / "tables" / f"06_longest_effects__{BOTH}__blimp__limit-1.csv")
    assert len(longest) == 2 * 5 and (longest.target_length == 50).all()
    at_50 = curves[curves.target_length == 50].set_index(["model", "prefix_type"]).delta
    np.testing.assert_allclose(longest.set_index(["model", "prefix_type"]).delta, at_50.reindex(
        longest.set_index(["model", "prefix_type"]).index), atol=1e-12)
    slopes = pd.read_csv(out / "tables" / f"06_length_slopes__{BOTH}__blimp__limit-1.csv").set_index(["model", "prefix_type"])
    wide = curves.pivot_table(index=["model", "prefix_type"], columns="target_length", values="delta")
    np.testing.assert_allclose(slopes.slope_per_doubling, (wide[50] - wide[25]).reindex(slopes.index), atol=1e-12)
    terms = pd.read_csv(out / "tables" / f"06_length_terms__{BOTH}__blimp__limit-1.csv")
    assert list(terms.model) == ["tiny-gpt2"] * 6 + ["tiny-llama"] * 6
    assert terms.term.str.startswith("log_length").all()
    figure = out / "figures" / f"06_curves__{BOTH}__blimp__limit-1.png"
    assert figure.is_file() and _config(figure)["model"] == MODELS


@pytest.mark.slow
def test_07_across_two_models(scratch):
    from helpers import data

    data.prepare("blimp_hu2025")
    run_notebook("07_separability.ipynb", scratch / "07.ipynb", model=MODELS, datasets="blimp_hu2025", limit=1,
                 extra_methods="intemplate_lp")
    out = scratch / "outputs"
    auc = pd.read_csv(out / "tables" / f"07_auc_models__{BOTH}.csv", dtype={"template": str})
    first = pd.read_csv(out / "tables" / "07_auc__tiny-gpt2.csv", dtype={"template": str})
    assert list(dict.fromkeys(auc.model)) == MODELS
    pd.testing.assert_frame_equal(auc[auc.model == "tiny-gpt2"].reset_index(drop=True), first)
    llama = load_files(sorted((out / "scores" / "blimp_hu2025" / "tiny-llama").glob("*.parquet")))
    assert set(llama.method) == {*sep.METRICS, "intemplate_lp"}
    long = pd.concat([sep.metrics_long(sep.metrics_table(llama[llama.method.isin(sep.METRICS)])),
                      sep.sentence_scores(llama, ["intemplate_lp"])], ignore_index=True)
    pd.testing.assert_frame_equal(auc[auc.model == "tiny-llama"].reset_index(drop=True), sep.auc_table(long),
                                  check_dtype=False, atol=1e-12)
    matrix = pd.read_csv(out / "tables" / f"07_auc_matrix__{BOTH}.csv")
    assert list(matrix.model) == MODELS and list(matrix.columns[2:]) == [*sep.METRICS, "intemplate_lp"]
    np.testing.assert_allclose(matrix.set_index("model")["intemplate_lp"],
                               auc[auc.method == "intemplate_lp"].set_index("model").auc.reindex(MODELS), atol=1e-12)
    pair_r = pd.read_csv(out / "tables" / f"07_pair_r_models__{BOTH}.csv")
    lp = llama[llama.method == "lp"]
    assert list(pair_r.model) == MODELS and (pair_r.pairs == 67).all()
    assert pair_r.r.iloc[1] == pytest.approx(np.corrcoef(lp.tgt_sum_good, lp.tgt_sum_bad)[0, 1], abs=1e-12)
    bins = pd.read_csv(out / "tables" / f"07_prediction1_models__{BOTH}.csv")
    assert list(dict.fromkeys(bins.model)) == MODELS and bins.groupby("model").bin.nunique().eq(10).all()
    figure = out / "figures" / f"07_auc_models__{BOTH}.png"
    assert figure.is_file() and _config(figure)["model"] == MODELS
