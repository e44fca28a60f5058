"""The one set of measure reductions, against values computed by hand, and the unigram table."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from helpers.methods import measures


def test_reductions_by_hand():
    token_lps = [-1.0, -2.0, -3.0]
    total, n = measures.lp(token_lps), len(token_lps)
    assert total == -6.0
    assert measures.mean_lp(total, n) == -2.0
    assert measures.length_penalty(3) == pytest.approx((8 / 6) ** 0.8)
    assert measures.pen_lp(total, n) == pytest.approx(-4.76651, abs=1e-5)  # (8/6)^0.8 = 1.25877
    uni_total = -3.0 + -5.0 + -4.0
    assert measures.slor(total, uni_total, n) == pytest.approx(((-1 + 3) + (-2 + 5) + (-3 + 4)) / 3)
    assert measures.bf_uniform(total, n, math.log(8)) == pytest.approx(-6.0 + 3 * math.log(8))
    assert measures.bf_unigram(total, uni_total) == pytest.approx(-6.0 + 12.0)
    with pytest.raises(ValueError, match="at least one token"):
        measures.lp([])


def test_reductions_work_elementwise_on_columns():
    totals, counts = pd.Series([-6.0, -10.0]), pd.Series([3, 5])
    assert list(measures.mean_lp(totals, counts)) == [-2.0, -2.0]
    np.testing.assert_allclose(measures.pen_lp(totals, counts), [-6.0 / (8 / 6) ** 0.8, -10.0 / (10 / 6) ** 0.8])


def test_unigram_table_counts_and_cache(tiny, tmp_path):
    tok = tiny("tiny-gpt2").tokenizer
    corpus = tmp_path / "c.txt"
    corpus.write_text("The cat sees a dog.\nThe cat.\n\n")
    table = measures.unigram_table(tok, [corpus], cache_dir=tmp_path / "cache")
    the = tok.convert_tokens_to_ids("The")
    cat = tok.convert_tokens_to_ids("Ġcat")
    total = table.n_tokens + len(tok)
    assert table.counts[the] == 2 and table.counts[cat] == 2
    assert table([the])[0] == pytest.approx(math.log(3 / total))
    assert list((tmp_path / "cache").glob("*.npy")) and not list((tmp_path / "cache").glob("*.tmp"))
    again = measures.unigram_table(tok, [corpus], cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(again.counts, table.counts)
    with pytest.raises(FileNotFoundError, match="not found"):
        measures.unigram_table(tok, [tmp_path / "missing.txt"])


def test_unigram_counting_counts_a_line_longer_than_the_context_without_warning(tiny, tmp_path, capfd):
    tok = tiny("tiny-gpt2").tokenizer
    corpus = tmp_path / "long.txt"
    corpus.write_text(" cat" * (tok.model_max_length + 5) + "\n")
    capfd.readouterr()
    table = measures.unigram_table(tok, [corpus], cache_dir=tmp_path / "cache")
    assert table.counts[tok.convert_tokens_to_ids("Ġcat")] == tok.model_max_length + 5
    assert "indexing errors" not in capfd.readouterr().err  # the corpus is counted, not fed to a model


def test_the_newer_linking_functions_by_hand():
    """SLLN-LP (Liu et al. 2024: LP / len ** 0.5 by default), LP per character and per UTF-8 byte
    (lm-eval's acc_norm and byte norm), on a sentence with accents and one in Chinese."""
    assert measures.slln_lp(-6.0, 4) == -3.0  # 4 ** 0.5 = 2
    assert measures.slln_lp(-6.0, 8, alpha=1 / 3) == pytest.approx(-3.0)
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\)"):
        measures.slln_lp(-6.0, 4, alpha=1.0)
    assert measures.text_units("Le chat a mangé.") == (16, 17)  # é: one character, two bytes
    assert measures.text_units("猫看见了狗。") == (6, 18)
    assert measures.per_unit(-18.0, 6) == -3.0


def test_the_newer_linking_functions_from_the_runner_match_a_float64_reference(scratch):
    """Through the runner on demo-en: each score is the formula applied to a float64 LP computed
    without the engine (tests/reference_lp.py) and to counts taken from the text itself; PMI to
    float64 forwards of the template and the sentence alone."""
    from reference_lp import sentence_lps

    from helpers import paths
    from helpers.data import load
    from helpers.data.selection import DatasetSelection, first_per_paradigm
    from helpers.engine import CausalScorer
    from helpers.models import load as load_model
    from helpers.runner import run_methods
    from helpers.settings import Settings
    from helpers.store import ScoreStore, load_files

    frame = first_per_paradigm(load("blimp"), 1).head(6)
    scorer = CausalScorer(load_model("demo-en"), Settings(progress=False))
    files = run_methods(scorer, DatasetSelection("blimp", frame, limit=1),
                        ["slln_lp", "lp_per_char", "lp_per_byte", "intemplate_pmi"], {"templates": [1]},
                        store=ScoreStore(scratch / "scores"))
    scores = load_files(files).set_index(["method", "paradigm", "pair_id"])
    folder = paths.MODELS / "demo-en"
    tokenizer = load_model("demo-en").tokenizer
    for side in ("good", "bad"):
        lps = sentence_lps(folder, list(frame[side]))
        tokens = np.array([len(tokenizer(s, add_special_tokens=False)["input_ids"]) for s in frame[side]])
        chars = np.array([len(s) for s in frame[side]])
        utf8 = np.array([len(s.encode("utf-8")) for s in frame[side]])
        for method, expected in (("slln_lp", lps / np.sqrt(tokens)), ("lp_per_char", lps / chars),
                                 ("lp_per_byte", lps / utf8)):
            got = scores.loc[method].loc[list(zip(frame.paradigm, frame.pair_id)), f"score_{side}"].to_numpy()
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5, err_msg=f"{method} {side}")
    # PMI with template 1: the target's log-probs inside the template minus alone, each request encoded
    # as the engine encodes it and run through a float64 copy of the model, whole, one at a time
    from test_conformance import reference

    from helpers.methods import readouts
    from helpers.methods.base import PassContext

    template = readouts.SINGLE.templates("en", "base", [1])[0]
    pass_context = PassContext(scorer, "en")
    requests = [r for item in frame.to_dict("records") for r in readouts.SINGLE.requests(item, template, "", pass_context, "")]
    sums = np.array([lps.sum() for lps in reference(scorer.loaded, scorer, requests)]).reshape(len(frame), 4)
    got = scores.loc["intemplate_pmi"].loc[list(zip(frame.paradigm, frame.pair_id))]
    np.testing.assert_allclose(got.score_good, sums[:, 0] - sums[:, 2], rtol=0, atol=5e-5)  # two float32 sums
    np.testing.assert_allclose(got.score_bad, sums[:, 1] - sums[:, 3], rtol=0, atol=5e-5)
