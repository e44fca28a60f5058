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
