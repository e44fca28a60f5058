"""Separability (Hu et al. 2025): the five metrics against a float64 reference, AUC against a
Mann-Whitney count, equal-size bins, binned and LI correlations, CoLA thresholds, the teaching
panel, the unigram corpus parameter, and the figures."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats
from sklearn.metrics import matthews_corrcoef

from helpers import paths
from helpers.plots import separability as figs
from helpers.analysis import isolated, teaching
from helpers.runs.teaching import score_teaching
from helpers.analysis import pair_correlation as pc
from helpers.analysis import separability as sep, significance
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.store import ScoreStore, load_files
from helpers.runner import run_methods
from helpers.engine import CausalScorer
from helpers.data.unigram_corpus import resolve_unigram_corpus
from helpers.settings import Settings

METRICS = list(sep.METRICS)
CORPUS = "The cat sees a dog.\nThe dogs see a cat.\nEvery teacher admires the students.\nA moon emerges.\n"


def float64_lp(model, start_id: int, ids: list[int]) -> float:
    """Sum of log p(token | before) over ``ids`` after the start token: float64 log-softmax,
    one unbatched forward pass."""
    seq = [start_id] + list(ids)
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([seq])).logits[0].double(), -1)
    return float(sum(lp[i - 1, seq[i]] for i in range(1, len(seq))))


@pytest.fixture(scope="module")
def stored(tiny, tmp_path_factory):
    """The five metrics' score files on 2 BLiMP paradigms x 3 pairs and 6 CoLA sentences
    (with in-template LP and Yes/No), unigram counts over a small text file."""
    root = tmp_path_factory.mktemp("separability")
    corpus = root / "corpus.txt"
    corpus.write_text(CORPUS)
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False))
    blimp = load("blimp")
    blimp = blimp[blimp.paradigm.isin(blimp.paradigm.drop_duplicates().iloc[:2])]
    pairs = DatasetSelection("blimp", first_per_paradigm(blimp, 3), limit=3)
    cola = DatasetSelection("cola", load("cola").iloc[[0, 1, 17, 18, 19, 40]].reset_index(drop=True))
    unigram = resolve_unigram_corpus(corpus, "en")
    store = ScoreStore(root / "scores")
    methods = METRICS + ["intemplate_lp", "yesno"]
    files = run_methods(scorer, pairs, methods, {"templates": [1], "unigram_corpus": unigram.path}, store=store)
    files += run_methods(scorer, cola, methods, {"templates": [1], "unigram_corpus": unigram.path}, store=store)
    return {"lm": lm, "scorer": scorer, "pairs": pairs.frame, "cola": cola.frame, "corpus": corpus,
            "scores": load_files(files)}


def test_five_metrics_equal_a_float64_reference(stored):
    lm, tok = stored["lm"], stored["lm"].tokenizer
    counts = Counter(i for line in CORPUS.splitlines() for i in tok(line, add_special_tokens=False)["input_ids"])
    total = sum(counts.values()) + len(tok)
    table = sep.metrics_table(stored["scores"])
    assert len(table) == 2 * 6 + 6 and set(table.columns) >= {"model", "dataset", "paradigm", "item", "side",
                                                               "grammatical", *METRICS}
    texts = {("blimp", r.paradigm, r.pair_id, side): getattr(r, side) for r in stored["pairs"].itertuples()
             for side in ("good", "bad")}
    texts |= {("cola", r.paradigm, r.item_id, "sentence"): r.sentence for r in stored["cola"].itertuples()}
    for row in table.itertuples():
        ids = tok(texts[(row.dataset, row.paradigm, row.item, row.side)], add_special_tokens=False)["input_ids"]
        lp = float64_lp(lm.model, stored["scorer"].start_id, ids)
        uni = sum(math.log((counts[i] + 1) / total) for i in ids)
        expected = {"lp": lp, "meanlp": lp / len(ids), "slor": (lp - uni) / len(ids),
                    "bf_uniform": lp + len(ids) * math.log(len(tok)), "bf_unigram": lp - uni}
        for metric, value in expected.items():
            assert getattr(row, metric) == pytest.approx(value, abs=2e-4), (metric, row)
        assert row.unigram_lp == pytest.approx(uni, abs=1e-9)  # the unigram sum itself, for MORCELA
        assert row.n_tokens == len(ids)
    assert (table.loc[table.side == "good", "grammatical"] == 1).all()
    assert (table.loc[table.side == "bad", "grammatical"] == 0).all()
    cola = table[table.dataset == "cola"].sort_values("item")
    assert list(cola.grammatical) == list(stored["cola"].label)
    recorded = resolve_unigram_corpus(stored["corpus"], "en").source
    assert set(table.unigram_source) == {recorded} == {f"file:{stored['corpus'].resolve()}:corpus.txt:{stored['corpus'].stat().st_size}"}


def test_metrics_need_unigram_sums_and_one_file_per_method(stored):
    scores = stored["scores"]
    lp_only = scores[scores.method == "lp"]
    assert list(sep.metrics_table(lp_only, ["lp", "meanlp", "bf_uniform"]).columns[-1:]) == ["unigram_source"]
    with pytest.raises(ValueError, match="no scores of slor or bf_unigram for tiny-gpt2 on blimp"):
        sep.metrics_table(lp_only)
    with pytest.raises(ValueError, match="unknown metrics"):
        sep.metrics_table(scores, ["lp", "perplexity"])
    twice = pd.concat([scores, scores[scores.method == "bf_unigram"].assign(config_hash="other")])
    with pytest.raises(ValueError, match="from 2 score files"):
        sep.metrics_table(twice)


def test_sentence_scores_unpair_every_single_sentence_method(stored):
    scores = stored["scores"]
    long = sep.sentence_scores(scores, ["lp", "intemplate_lp", "yesno"])
    assert len(long) == 3 * 18 and set(long.side) == {"good", "bad", "sentence"}
    lp = long[long.method == "lp"].set_index(["dataset", "paradigm", "item", "side"])["score"]
    table = sep.metrics_table(scores).set_index(["dataset", "paradigm", "item", "side"])["lp"]
    assert np.allclose(lp.sort_index(), table.sort_index(), rtol=0, atol=1e-9)
    yes = long[long.method == "yesno"]
    assert yes.score.between(0, 1).all() and (yes.template == "1").all()
    keys = ["dataset", "paradigm", "item", "side"]
    target = sep.sentence_scores(scores, ["intemplate_lp"], target=True).sort_values(keys)
    whole = long[long.method == "intemplate_lp"].sort_values(keys)
    assert len(target) == 18 and (target.score.to_numpy() > whole.score.to_numpy()).all()  # whole = template + target
    with pytest.raises(ValueError, match="only in-template methods"):
        sep.sentence_scores(scores, ["yesno"], target=True)
    for method in ("comparative_lp", "ab_logit"):
        with pytest.raises(ValueError, match="do not score one sentence alone"):
            sep.sentence_scores(scores, [method])


def mann_whitney_auc(pos, neg) -> float:
    """P(pos > neg) + P(pos == neg) / 2 from the rank sum of the positives (average ranks of ties)."""
    values = np.concatenate([pos, neg])
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    sorted_values = values[order]
    i = 0
    while i < values.size:  # average rank over each run of equal values
        j = i
        while j + 1 < values.size and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    u = ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2
    return u / (len(pos) * len(neg))


def _long(rng, dataset, n_pos, n_neg, shift):
    scores = np.concatenate([np.round(rng.normal(shift, 1, n_pos), 1), np.round(rng.normal(0, 1, n_neg), 1)])
    return pd.DataFrame({"model": "m", "dataset": dataset, "method": "lp", "template": "none", "paradigm": "p",
                         "item": range(n_pos + n_neg), "side": "x", "grammatical": [1] * n_pos + [0] * n_neg,
                         "score": scores})


def test_auc_equals_a_mann_whitney_count_per_dataset_and_pooled():
    rng = np.random.default_rng(5)
    long = pd.concat([_long(rng, "a", 40, 55, 0.8), _long(rng, "b", 30, 30, -0.3)], ignore_index=True)
    assert long.score.duplicated().any()  # ties, counted as one half
    auc = sep.auc_table(long, n_resamples=300, seed=1).set_index("dataset")
    for name, rows in [("a", long[long.dataset == "a"]), ("b", long[long.dataset == "b"]), ("pooled", long)]:
        pos, neg = rows.score[rows.grammatical == 1].to_numpy(), rows.score[rows.grammatical == 0].to_numpy()
        assert auc.loc[name, "auc"] == pytest.approx(mann_whitney_auc(pos, neg), abs=1e-12)
        assert auc.loc[name, "ci_low"] < auc.loc[name, "auc"] < auc.loc[name, "ci_high"]
        assert (auc.loc[name, "n_grammatical"], auc.loc[name, "n_ungrammatical"]) == (len(pos), len(neg))
    with pytest.raises(ValueError, match="needs grammatical and ungrammatical"):
        sep.auc_table(long[long.grammatical == 1])


def test_auc_interval_is_scipy_bootstrap_of_the_resampled_auc():
    """The fast resampled statistic gives the same interval as scipy's bootstrap of a plain
    Mann-Whitney AUC on the resampled scores (same generator, same draws)."""
    rng = np.random.default_rng(2)
    pos, neg = np.round(rng.normal(0.5, 1, 23), 1), np.round(rng.normal(0, 1, 31), 1)
    stat = significance._auc_statistic(pos, neg)
    draws = rng.integers(0, 23, (7, 23)), rng.integers(0, 31, (7, 31))
    assert np.allclose(stat(*draws), [mann_whitney_auc(pos[a], neg[b]) for a, b in zip(*draws)], atol=1e-12)

    def plain(p, n, axis=-1):
        return np.apply_along_axis(lambda row: mann_whitney_auc(row[:p.shape[-1]], row[p.shape[-1]:]), -1,
                                   np.concatenate([p, n], axis=-1))

    ref = stats.bootstrap((pos, neg), plain, vectorized=True, n_resamples=400, method="percentile",
                          batch=max(1, int(2e7 // (pos.size + neg.size))), rng=np.random.default_rng(9))
    assert significance.auc_ci(pos, neg, 400, 0.95, seed=9) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-12)


def test_roc_and_pair_accuracy_on_a_small_frame():
    table = pd.DataFrame({"model": "m", "dataset": "d", "paradigm": "p", "item": [0, 0, 1, 1, 2, 2, 3, 3],
                          "side": ["good", "bad"] * 4, "grammatical": [1, 0] * 4,
                          "lp": [-1.0, -2.0, -5.0, -3.0, -2.0, -2.0, -4.0, -6.0],
                          "meanlp": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]})
    acc = sep.pair_accuracy(table, ["lp", "meanlp"]).set_index("method")
    assert acc.loc["lp", "accuracy"] == 0.5 and acc.loc["lp", "ties"] == 1 and acc.loc["lp", "pairs"] == 4
    assert acc.loc["meanlp", "accuracy"] == 0.75 and acc.loc["meanlp", "ties"] == 0
    long = sep.metrics_long(table, ["lp", "meanlp"])
    roc = sep.roc_table(long)
    lp = roc[roc.method == "lp"]
    assert (lp.fpr.iloc[-1], lp.tpr.iloc[-1]) == (1.0, 1.0) and np.all(np.diff(lp.fpr) >= 0)
    # lp: good {-1,-5,-2,-4} vs bad {-2,-3,-2,-6}: 16 comparisons, 8 wins and 2 ties
    assert sep.auc_table(long, n_resamples=0).set_index("method").loc["lp", "auc"] == (8 + 2 / 2) / 16
    wide = sep.pairs_wide(table)
    assert list(wide.lp_good) == [-1.0, -5.0, -2.0, -4.0] and list(wide.lp_bad) == [-2.0, -3.0, -2.0, -6.0]


@pytest.mark.parametrize("n,bins", [(10, 10), (11, 10), (19, 10), (1003, 10), (7, 3), (5, 1)])
def test_bins_are_equal_size_and_ordered(n, bins):
    values = np.round(np.random.default_rng(n).normal(size=n), 1)  # with ties
    labels = pc.equal_bins(values, bins)
    sizes = np.bincount(labels, minlength=bins)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1 and set(labels) == set(range(bins))
    for b in range(bins - 1):
        assert values[labels == b].max() <= values[labels == b + 1].min()


def test_bins_refuse_what_cannot_be_binned():
    with pytest.raises(ValueError, match="3 values cannot fill 10 bins"):
        pc.equal_bins([1, 2, 3], 10)
    with pytest.raises(ValueError, match="NaN"):
        pc.equal_bins([1, np.nan, 3], 2)
    with pytest.raises(ValueError, match="positive integer"):
        pc.equal_bins([1, 2, 3], 0)


def test_binned_correlations_are_pearson_r_per_bin():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"model": "m", "dataset": "d", "distance": rng.random(40), "x": rng.normal(size=40)})
    frame["y"] = frame.x * (1 - frame.distance) + rng.normal(scale=0.3, size=40)
    binned = pc.assign_bins(frame, "distance", 4)
    table = pc.binned_correlations(binned, "x", "y", n_resamples=300)
    assert list(table.bin) == [0, 1, 2, 3] and (table.n == 10).all()
    for row in table.itertuples():
        rows = binned[binned.bin == row.bin]
        assert row.r == pytest.approx(np.corrcoef(rows.x, rows.y)[0, 1], abs=1e-12)
        assert row.distance_max == rows.distance.max() and row.ci_low <= row.r <= row.ci_high
    assert table.distance_max.is_monotonic_increasing


def test_li_deltas_keep_rated_pairs_below_the_levenshtein_percentile():
    pairs = pd.DataFrame({"model": "m", "dataset": "li", "paradigm": "p", "item": range(6),
                          "lp_good": [-1.0, -2.0, -3.0, -4.0, -5.0, -1.0],
                          "lp_bad": [-2.0, -2.5, -1.0, -9.0, -5.0, -1.0]})
    frame = pd.DataFrame({"dataset": "li", "paradigm": "p", "pair_id": range(6),
                          "good": ["abc", "kitten", "flaw", "a b", "same", "x"],
                          "bad": ["abd", "sitting", "lawn", "a b c d", "same!!", "x"],
                          "rating_good": [1.0, 0.5, 0.2, 0.9, 0.0, np.nan],
                          "rating_bad": [-1.0, 0.0, 0.4, -0.1, -0.5, 0.3]})
    joined = pc.with_pair_text(pairs, frame, ["rating_good", "rating_bad"])
    deltas = pc.li_deltas(joined)
    assert list(deltas.levenshtein) == [1, 3, 2, 4, 2, 0]
    # the cutoff is over the 5 rated pairs (with the unrated one it would be 2.75)
    assert (deltas.levenshtein_cutoff == np.percentile([1, 3, 2, 4, 2], 75)).all() and deltas.levenshtein_cutoff[0] == 3
    assert list(deltas.rated) == [True] * 5 + [False]
    assert list(deltas.kept) == [True, False, True, False, True, False]
    assert list(deltas.model_delta) == [1.0, 0.5, -2.0, 5.0, 0.0, 0.0]
    assert list(deltas.human_delta[:5]) == pytest.approx([2.0, 0.5, -0.2, 1.0, 0.5])
    with pytest.raises(ValueError, match="6 scored pairs are not in the dataset table"):
        pc.with_pair_text(pairs, frame.assign(dataset="li_hu2025"))
    with pytest.raises(ValueError, match="1 scored pairs are not in the dataset table"):
        pc.with_pair_text(pairs.assign(item=range(1, 7)), frame)


def test_cola_threshold_is_the_train_optimum_and_mcc_is_sklearns():
    rng = np.random.default_rng(3)
    labels = (rng.random(60) < 0.6).astype(int)
    scores = np.round(rng.normal(labels * 0.7, 1), 1)
    sweep = isolated.threshold_sweep(scores, labels)
    for row in sweep.itertuples():
        predicted = (scores > row.threshold).astype(int)
        assert row.mcc == pytest.approx(matthews_corrcoef(labels, predicted), abs=1e-12)
        assert row.accuracy == pytest.approx((predicted == labels).mean(), abs=1e-12)
    t = isolated.choose_threshold(scores, labels)
    assert t == sweep.threshold[sweep.mcc == sweep.mcc.max()].min()
    train = pd.DataFrame({"model": "m", "method": "lp", "template": "none", "grammatical": labels, "score": scores})
    dev = pd.DataFrame({"model": "m", "method": "lp", "template": "none", "grammatical": [1, 1, 0, 0, 1],
                        "score": [t + 1, t - 1, t - 2, t + 0.5, t + 3]})
    row = isolated.isolated_judgments(train, dev).iloc[0]
    assert row.threshold == t and row.dev_mcc == pytest.approx(matthews_corrcoef([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]))
    assert row.dev_accuracy == 0.6 and row.n_dev == 5 and row.criterion == "mcc"
    by_accuracy = isolated.isolated_judgments(train, dev, "accuracy").iloc[0]
    assert by_accuracy.train_accuracy == sweep.accuracy.max()
    with pytest.raises(ValueError, match="no dev scores"):
        isolated.isolated_judgments(train, dev.assign(method="meanlp"))
    with pytest.raises(ValueError, match="several datasets"):
        isolated.isolated_judgments(train.assign(dataset=["cola", "cola_dev"] * 30), dev)


def test_teaching_panel_strings_and_scores(stored):
    items = teaching.teaching_items()
    assert len(items) == 8 and set(items[items.grammatical == 1].sentence) == {
        "The moon emerges.", "The moons emerge.", "A moon emerges."}
    scored = score_teaching(stored["scorer"])
    lm = stored["lm"]
    for row in scored.itertuples():
        ids = lm.tokenizer(row.sentence, add_special_tokens=False)["input_ids"]
        assert row.lp == pytest.approx(float64_lp(lm.model, stored["scorer"].start_id, ids), abs=2e-4)
        assert row.meanlp == pytest.approx(row.lp / row.n_tokens)
    assert list(scored["rank"]) == [1 + int((scored.lp > lp).sum()) for lp in scored.lp]


def test_unigram_corpus_parameter(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "CACHE", tmp_path / "cache")
    mirror = tmp_path / "cache" / "corpus_zh.txt"
    mirror.parent.mkdir()
    mirror.write_text("猫坐着。\n")
    default = resolve_unigram_corpus(None, "zh")
    assert (default.path, default.kind, default.source) == (mirror, "mirror", f"mirror:zh:corpus_zh.txt:{mirror.stat().st_size}")
    text = tmp_path / "my corpus.txt"
    text.write_text(CORPUS)
    chosen = resolve_unigram_corpus(text, "en")
    assert (chosen.kind, chosen.path, chosen.source) == ("file", text, f"file:{text}:my corpus.txt:{len(CORPUS)}")
    with pytest.raises(FileNotFoundError, match="not a text file"):
        resolve_unigram_corpus(tmp_path / "missing.txt", "en")
    # a dataset streamed with the real `datasets` library: its local "text" builder, no Hub needed
    lines = tmp_path / "lines.txt"
    lines.write_text("first  document\n\nsecond document\nthird\n")
    hub = resolve_unigram_corpus("text", "en", limit=3, data_files=str(lines), progress=False)  # 3 items, one empty
    assert hub.kind == "hub" and hub.path.read_text() == "first document\nsecond document\n"
    assert hub.path.name.startswith("hf__text__default__train__") and hub.path.name.endswith("__3.txt")
    lines.write_text("changed\n")  # the cached file is reused: nothing is streamed again
    assert resolve_unigram_corpus("text", "en", limit=3, data_files=str(lines), progress=False).path.read_text() \
        == "first document\nsecond document\n"


def test_unigram_corpus_from_the_hub_says_what_to_do_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(paths, "CACHE", tmp_path)
    with pytest.raises(RuntimeError, match="pass unigram_corpus=None"):
        resolve_unigram_corpus("HuggingFaceFW/fineweb:sample-10BT", "en", limit=10, progress=False)
    assert not list(tmp_path.rglob("*.txt"))


def test_figures_draw_from_the_tables(stored):
    import matplotlib.pyplot as plt

    table = sep.metrics_table(stored["scores"])
    long = pd.concat([sep.metrics_long(table), sep.sentence_scores(stored["scores"], ["intemplate_lp", "yesno"])])
    auc = sep.auc_table(long, n_resamples=50)
    assert set(auc.dataset) == {"blimp", "cola", "pooled"} and len(auc) == 3 * (len(sep.METRICS) + 2)
    wide = pc.assign_bins(sep.pairs_wide(table).assign(distance=np.linspace(0, 1, 6)), n_bins=2)
    binned = pc.binned_correlations(wide, "lp_good", "lp_bad", n_resamples=50)
    panels = {figs.teaching_panel(score_teaching(stored["scorer"])): 1,
              figs.pair_scatter(wide): 1, figs.binned_r(binned): 1,
              figs.score_distributions(long, "lp", auc): 2, figs.auc_bars(auc): 1,
              figs.roc_curves(sep.roc_table(long)): 3, figs.pair_accuracy_bars(sep.pair_accuracy(table)): 1,
              figs.accuracy_beside_auc(sep.pair_accuracy(table), auc): 2}
    for fig, n in panels.items():
        assert len([ax for ax in fig.axes if ax.get_visible()]) >= n
        plt.close(fig)
    with pytest.raises(ValueError, match="draws one model"):
        figs.pair_scatter(pd.concat([wide, wide.assign(model="other")]))
