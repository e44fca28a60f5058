"""The headline (helpers.analysis.headline, helpers.reporting.headline): accuracy with its 95%
interval and n, the paired test against the best method, and the caveats, checked against values
computed here by their textbook formulas."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers.analysis import headline as numbers
from helpers.reporting import headline


def _rows(method, correct, template="none", tie=None, model="demo-en", lengths=None, identical=None):
    n = len(correct)
    good, bad = lengths if lengths is not None else ([5] * n, [5] * n)
    return pd.DataFrame({"model": model, "method": method, "template": template, "dataset": "blimp",
                         "paradigm": "p", "pair_id": range(n), "correct": correct,
                         "tie": tie if tie is not None else [False] * n,
                         "n_tokens_good": good, "n_tokens_bad": bad,
                         "identical": identical if identical is not None else [False] * n})


def _wilson(k, n, z=stats.norm.ppf(0.975)):
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_accuracy_interval_and_paired_test_equal_their_formulas():
    rng = np.random.default_rng(3)
    lp = rng.random(40) < 0.75
    meanlp = lp.copy()
    meanlp[:9] = ~meanlp[:9]  # 9 discordant pairs
    yesno = [_rows("yesno", rng.random(40) < 0.5, template=t) for t in ("1", "2")]
    scores = pd.concat([_rows("lp", lp), _rows("meanlp", meanlp), *yesno], ignore_index=True)
    table = numbers.accuracy_table(scores).set_index("method")
    assert list(table.index) == sorted(table.index, key=lambda m: -table.loc[m, "accuracy"])  # best first
    row = table.loc["lp"]
    assert row.pairs == 40 and row.accuracy == lp.mean() and row.interval == numbers.WILSON
    assert (row.ci_low, row.ci_high) == pytest.approx(_wilson(lp.sum(), 40), abs=1e-12)
    assert row.stderr == pytest.approx(math.sqrt(lp.mean() * (1 - lp.mean()) / 40))
    best = table.index[0]
    other = "meanlp" if best == "lp" else "lp"
    mine, theirs = (lp, meanlp) if other == "lp" else (meanlp, lp)
    b, c = int(np.sum(mine & ~theirs)), int(np.sum(~mine & theirs))
    assert b + c == 9 and table.loc[other, "test"] == "McNemar (exact)"
    assert table.loc[other, "p_value"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
    assert table.loc[other, "difference"] == pytest.approx(mine.mean() - theirs.mean())
    # a method over two templates: each pair's share right, a bootstrap over pairs
    two = np.mean([y["correct"].to_numpy(float) for y in yesno], axis=0)
    assert table.loc["yesno", "accuracy"] == pytest.approx(two.mean())
    assert table.loc["yesno", "interval"] == numbers.BOOTSTRAP and table.loc["yesno", "test"] == "paired bootstrap"
    assert table.loc["yesno", "ci_low"] < two.mean() < table.loc["yesno", "ci_high"]


def test_ties_lengths_and_identical_pairs_are_counted():
    correct = [True, False, False, True]
    tie = [False, True, True, False]
    scores = _rows("lp", correct, tie=tie, lengths=([3, 3, 4, 9], [5, 3, 6, 2]), identical=[False, True, False, False])
    table = numbers.accuracy_table(scores)
    assert (table.ties[0], table.expected[0]) == (2, 0.5 + 0.5 / 2)
    assert numbers.identical_pairs(scores) == 1
    assert numbers.length_shares(scores) == {"shorter": 0.5, "same": 0.25, "longer": 0.25, "pairs": 4}
    assert numbers.length_skewed(numbers.length_shares(scores))  # 50% shorter against 25% longer


def test_the_caveats_say_what_changes_the_reading():
    n = 30
    lengths = ([4] * 20 + [6] * 10, [5] * n)  # the grammatical sentence shorter in 20 of 30 pairs
    scores = _rows("lp", [True] * 20 + [False] * 10, lengths=lengths, identical=[True] * 2 + [False] * 28)
    scores["language"] = "tr"
    head = headline.of(scores, "02_readout", "turblimp")
    assert [c.split(":")[0] for c in head.caveats] == ["demo-en is not trained on tr", "2 of 30 pairs are identical",
                                                       "length confound"]
    assert "fewer tokens in 67% of pairs and more in 33%" in head.caveats[2]
    assert "notebooks/05_length_bias.ipynb" in head.caveats[2]
    assert head.title("accuracy").startswith("accuracy\n(demo-en is not trained on tr; ")
    shown = head.shown()
    assert list(shown.columns) == ["method", "n", "accuracy (%)", "95% CI", "± stderr", "vs best"]  # no ties: no tie columns
    low, high = _wilson(20, 30)
    assert shown["accuracy (%)"][0] == 66.7 and shown["95% CI"][0] == f"{100 * low:.1f}-{100 * high:.1f}"
    assert "with 30 pairs they reach" in head.note
    # an English model on English pairs: no language caveat; the paper's number where the dataset's paper has one
    english = headline.of(_rows("lp", [True] * 20 + [False] * 10), "02_readout", "blimp")
    assert english.caveats == [] and english.table["paper"][0].startswith("83.0 (GPT-2")


def test_07s_headline_reads_each_datasets_pair_decisions_of_the_metrics():
    """07 scores sentences: its headline is each pair dataset's, from the metrics table's two sides
    (a tie counted wrong), with the length caveat read from the sentences' own token counts."""
    from helpers.analysis import separability as sep

    rng = np.random.default_rng(5)
    n = 30
    lp_good, lp_bad = np.round(rng.normal(-20, 3, n)), np.round(rng.normal(-21, 3, n))
    lengths_good, lengths_bad = np.full(n, 6), np.r_[np.full(20, 7), np.full(10, 6)]  # shorter in 20 of 30
    sides = []
    for dataset in ("blimp_hu2025", "zhoblimp"):
        for side, lp, length in (("good", lp_good, lengths_good), ("bad", lp_bad, lengths_bad)):
            sides.append(pd.DataFrame({"model": "demo-en", "dataset": dataset, "paradigm": "p", "item": range(n),
                                       "side": side, "grammatical": int(side == "good"), "n_tokens": length,
                                       "lp": lp, "meanlp": lp / length}))
    table = pd.concat(sides, ignore_index=True)
    decisions = sep.pair_decisions(table, ["lp", "meanlp"])
    assert len(decisions) == 2 * 2 * n and set(decisions.columns) >= {"pair_id", "n_tokens_good", "n_tokens_bad"}
    heads = headline.of_each(decisions, "07_separability")
    assert list(heads.each) == ["blimp_hu2025", "zhoblimp"]
    lp = heads.table.set_index(["dataset", "method"]).loc[("zhoblimp", "lp")]
    right, ties = int(np.sum(lp_good > lp_bad)), int(np.sum(lp_good == lp_bad))
    assert (lp.pairs, lp.accuracy, lp.ties) == (n, right / n, ties)
    assert (lp.ci_low, lp.ci_high) == pytest.approx(_wilson(right, n), abs=1e-12)
    assert lp.expected == pytest.approx((right + ties / 2) / n)
    zh = heads.each["zhoblimp"]
    assert any(c.startswith("demo-en is not trained on zh") for c in zh.caveats)
    assert any("fewer tokens in 67%" in c for c in zh.caveats)
    assert not any("not trained" in c for c in heads.each["blimp_hu2025"].caveats)
    assert heads.title("AUC").count("length confound") == 1 and "zhoblimp:" in heads.note
    assert sep.pair_accuracy(table, ["lp"]).set_index("dataset").loc["zhoblimp", "accuracy"] == right / n
