"""Sentence measures with hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import measures


def test_lp_meanlp_penlp():
    lp = [-1.0, -2.0, -3.0]
    assert measures.lp(lp) == -6.0
    assert measures.meanlp(lp) == -2.0
    assert measures.penlp(lp) == pytest.approx(-6.0 / ((5 + 3) / 6) ** 0.8)
    assert measures.penlp(lp) == pytest.approx(-4.76651, abs=1e-5)  # (8/6)^0.8 = 1.25877


def test_slor_and_bayes_factors():
    lp, uni = [-1.0, -2.0], [-3.0, -5.0]
    assert measures.slor(lp, uni) == pytest.approx(((-1 + 3) + (-2 + 5)) / 2)
    assert measures.bf_uniform(lp, 8) == pytest.approx(-3.0 + 2 * math.log(8))
    assert measures.bf_unigram(lp, uni) == pytest.approx(-3.0 + 8.0)
    with pytest.raises(ValueError, match="unigram"):
        measures.slor(lp, [-1.0])
    with pytest.raises(ValueError, match="at least one token"):
        measures.lp([])


def test_unigram_table_counts_and_cache(tiny, tmp_path):
    _, tok = tiny("tiny-gpt2")
    corpus = tmp_path / "c.txt"
    corpus.write_text("The cat sees a dog.\nThe cat.\n\n")
    table = measures.unigram_table(tok, [corpus], cache_dir=tmp_path / "cache")
    the = tok.convert_tokens_to_ids("The")
    cat = tok.convert_tokens_to_ids("Ġcat")
    total = table.n_tokens + len(tok)
    assert table.counts[the] == 2 and table.counts[cat] == 2
    assert table([the])[0] == pytest.approx(math.log(3 / total))
    assert list((tmp_path / "cache").glob("*.npy"))
    again = measures.unigram_table(tok, [corpus], cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(again.counts, table.counts)
    with pytest.raises(FileNotFoundError, match="not found"):
        measures.unigram_table(tok, [tmp_path / "missing.txt"])
