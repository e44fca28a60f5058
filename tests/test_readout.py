"""Readout methods against a plain reference, and the results store."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import data
from helpers.measures import UnigramTable
from helpers.readout import run_methods, select_pairs
from helpers.results import ScoreStore, load_files, read_metadata
from helpers.scoring import Scorer
from helpers.templates import ide_templates

SEVEN = ["lp", "meanlp", "penlp", "intemplate_lp", "intemplate_meanlp", "intemplate_penlp", "comparative_lp"]


def sample(dataset: str, paradigms: int = 8, per: int = 2) -> pd.DataFrame:
    df = data.load(dataset)
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return select_pairs(df[df.paradigm.isin(keep)], per)


def reference_lp(model, tok, start_id, text: str) -> tuple[float, int]:
    """One sequence, no cache, no batching: sum of log p(token | prefix) after the start token."""
    ids = [start_id] + tok(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    lp = torch.log_softmax(logits, -1)
    return float(sum(lp[i - 1, ids[i]] for i in range(1, len(ids)))), len(ids) - 1


def reference_scores(model, tok, start_id, pairs, language):
    """(method, template) -> list of (score_good, score_bad) by a plain implementation."""
    out = {}
    pen = lambda n: ((5 + n) / 6) ** 0.8  # noqa: E731
    sent = [(reference_lp(model, tok, start_id, g), reference_lp(model, tok, start_id, b))
            for g, b in zip(pairs.good, pairs.bad)]
    out[("lp", "none")] = [(g[0], b[0]) for g, b in sent]
    out[("meanlp", "none")] = [(g[0] / g[1], b[0] / b[1]) for g, b in sent]
    out[("penlp", "none")] = [(g[0] / pen(g[1]), b[0] / pen(b[1])) for g, b in sent]
    for t in ide_templates("single", language):
        whole = [(reference_lp(model, tok, start_id, t.fill(sentence=g)),
                  reference_lp(model, tok, start_id, t.fill(sentence=b))) for g, b in zip(pairs.good, pairs.bad)]
        out[("intemplate_lp", str(t.id))] = [(g[0], b[0]) for g, b in whole]
        out[("intemplate_meanlp", str(t.id))] = [(g[0] / g[1], b[0] / b[1]) for g, b in whole]
        out[("intemplate_penlp", str(t.id))] = [(g[0] / pen(g[1]), b[0] / pen(b[1])) for g, b in whole]
    for t in ide_templates("compar", language):
        out[("comparative_lp", str(t.id))] = [
            (reference_lp(model, tok, start_id, t.fill(sentence=g, other_sentence=b))[0],
             reference_lp(model, tok, start_id, t.fill(sentence=b, other_sentence=g))[0])
            for g, b in zip(pairs.good, pairs.bad)]
    return out


@pytest.mark.parametrize("arch,dataset", [("llama", "blimp"), ("qwen2", "blimp"), ("gpt2", "climp"),
                                          ("mixtral", "climp")])
def test_seven_readouts_equal_plain_reference(tiny, tmp_path, arch, dataset):
    model, tok = tiny(f"tiny-{arch}")
    pairs = sample(dataset)
    scorer = Scorer(model, tok, progress=False)
    files = run_methods(scorer, pairs, SEVEN, model_name=f"tiny-{arch}", dataset=dataset,
                         store=ScoreStore(tmp_path))
    assert len(files) == 3 + 3 * 5 + 5
    scores = load_files(files)
    ref = reference_scores(model, tok, scorer.start_id, pairs, str(pairs.language.iloc[0]))
    compared = 0
    for (method, template), values in ref.items():
        got = scores[(scores.method == method) & (scores.template == template)].sort_values(["paradigm", "pair_id"])
        expected = pd.DataFrame(values, columns=["g", "b"], index=pairs.set_index(["paradigm", "pair_id"]).index)
        expected = expected.sort_index()
        np.testing.assert_allclose(got.score_good, expected.g, atol=1e-4, err_msg=f"{method} {template}")
        np.testing.assert_allclose(got.score_bad, expected.b, atol=1e-4, err_msg=f"{method} {template}")
        clear = (expected.g - expected.b).abs().to_numpy() > 1e-4
        assert (got.correct.to_numpy()[clear] == (expected.g > expected.b).to_numpy()[clear]).all(), (method, template)
        compared += clear.sum()
    assert compared > 0.95 * len(ref) * len(pairs)


def test_penlp_and_whole_input_counts(tiny, tmp_path):
    model, tok = tiny("tiny-llama")
    pairs = sample("blimp", 2, 2)
    scorer = Scorer(model, tok, progress=False)
    files = run_methods(scorer, pairs, ["penlp", "intemplate_lp", "intemplate_meanlp"], templates=[1],
                         model_name="tiny-llama", dataset="blimp", store=ScoreStore(tmp_path))
    s = load_files(files)
    pen = s[s.method == "penlp"].iloc[0]
    assert pen.score_good == pytest.approx(pen.tgt_sum_good / ((5 + pen.n_tokens_good) / 6) ** 0.8)
    mean = s[s.method == "intemplate_meanlp"].iloc[0]
    n_template = len(tok("The following sentence is grammatically acceptable.\n\n", add_special_tokens=False)["input_ids"])
    assert mean.ctx_n_good == n_template  # template tokens counted in the whole input
    assert mean.score_good == pytest.approx((mean.ctx_sum_good + mean.tgt_sum_good) / (mean.ctx_n_good + mean.n_tokens_good))
    assert mean.score_good_target == pytest.approx(mean.tgt_sum_good / mean.n_tokens_good)


def test_ties_count_as_errors(tiny, tmp_path):
    model, tok = tiny("tiny-gpt2")
    pairs = data.load("blimp")
    pairs = pairs[pairs.identical].reset_index(drop=True)
    files = run_methods(Scorer(model, tok, progress=False), pairs, ["lp"], model_name="tiny-gpt2",
                         dataset="blimp", store=ScoreStore(tmp_path))
    s = load_files(files)
    assert len(s) == 7 and s.tie.all() and not s.correct.any()


def test_slor_and_bayes_factors_from_stored_tokens(tiny, tmp_path):
    model, tok = tiny("tiny-gpt2")
    pairs = sample("blimp", 2, 3)
    counts = np.arange(len(tok), dtype=np.int64) % 7
    uni = UnigramTable(counts)
    files = run_methods(Scorer(model, tok, progress=False), pairs, ["slor", "bf_uniform", "bf_unigram"],
                         model_name="tiny-gpt2", dataset="blimp", store=ScoreStore(tmp_path), unigram=uni,
                         unigram_source="mod7")
    s = load_files(files, token_columns=True)
    for row in s.itertuples():
        lp, ids = np.asarray(row.token_lp_good), np.asarray(row.token_ids_good)
        expected = {"slor": (lp - uni(ids)).mean(), "bf_uniform": lp.sum() + len(lp) * math.log(len(tok)),
                    "bf_unigram": lp.sum() - uni(ids).sum()}[row.method]
        assert row.score_good == pytest.approx(expected)


def test_store_second_run_computes_nothing(tiny, tmp_path):
    model, tok = tiny("tiny-llama")
    pairs = sample("blimp", 3, 2)
    scorer = Scorer(model, tok, progress=False)
    kw = dict(model_name="tiny-llama", dataset="blimp", store=ScoreStore(tmp_path), templates=[1, 2])
    first = run_methods(scorer, pairs, SEVEN, **kw)
    calls = scorer.forward_calls
    assert calls > 0
    second = run_methods(scorer, pairs, SEVEN, **kw)
    assert scorer.forward_calls == calls and sorted(second) == sorted(first)


def test_interrupted_run_resumes_to_the_same_files(tiny, tmp_path, monkeypatch):
    model, tok = tiny("tiny-qwen2")
    pairs = sample("blimp", 3, 2)
    kw = dict(model_name="tiny-qwen2", dataset="blimp", templates=[1, 2])
    clean = run_methods(Scorer(model, tok, progress=False), pairs, SEVEN, store=ScoreStore(tmp_path / "a"), **kw)

    store = ScoreStore(tmp_path / "b")
    original = ScoreStore.write

    def failing(self, *args, **kwargs):
        if self.writes >= 5:
            raise KeyboardInterrupt("simulated kill")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ScoreStore, "write", failing)
    with pytest.raises(KeyboardInterrupt):
        run_methods(Scorer(model, tok, progress=False), pairs, SEVEN, store=store, **kw)
    assert len(store.files()) == 5 and not list((tmp_path / "b").rglob("*.tmp"))
    monkeypatch.setattr(ScoreStore, "write", original)
    resumed = run_methods(Scorer(model, tok, progress=False), pairs, SEVEN, store=ScoreStore(tmp_path / "b"), **kw)
    assert [p.name for p in sorted(resumed)] == [p.name for p in sorted(clean)]
    for a, b in zip(sorted(clean), sorted(resumed)):
        pd.testing.assert_frame_equal(pd.read_parquet(a), pd.read_parquet(b))
        assert read_metadata(a)["config_hash"] == read_metadata(b)["config_hash"]


def test_changed_configuration_writes_alongside(tiny, tmp_path):
    model, tok = tiny("tiny-gpt2")
    store = ScoreStore(tmp_path)
    full = data.load("blimp")
    a = run_methods(Scorer(model, tok, progress=False), select_pairs(full, 1), ["lp"], model_name="tiny-gpt2",
                     dataset="blimp", limit=1, store=store)
    before = a[0].read_bytes()
    with pytest.warns(UserWarning, match="different configuration"):
        b = run_methods(Scorer(model, tok, progress=False), select_pairs(full, 2), ["lp"], model_name="tiny-gpt2",
                         dataset="blimp", limit=2, store=store)
    assert a[0].name == "lp.parquet" and b[0].name.startswith("lp__") and b[0] != a[0]
    assert a[0].read_bytes() == before
    assert len(pd.read_parquet(b[0])) == 2 * len(pd.read_parquet(a[0]))


def test_score_file_schema_and_metadata(tiny, tmp_path):
    model, tok = tiny("tiny-llama")
    files = run_methods(Scorer(model, tok, progress=False), sample("blimp", 2, 1), ["intemplate_lp"], templates=[3],
                         model_name="tiny-llama", dataset="blimp", store=ScoreStore(tmp_path))
    df = pd.read_parquet(files[0])
    for col in ["dataset", "paradigm", "phenomenon", "pair_id", "score_good", "score_bad", "correct", "tie",
                "n_tokens_good", "n_tokens_bad", "token_lp_good", "token_ids_good", "ctx_sum_good", "input_good",
                "score_good_target", "correct_target"]:
        assert col in df.columns, col
    meta = read_metadata(files[0])
    for key in ["model_id", "revision", "quant", "dtype", "start_token", "template_text", "library_versions",
                "git_commit", "time", "config_hash"]:
        assert key in meta, key
    assert meta["template_text"] == "Here is a grammatically correct sentence.\n\n{sentence}"
    assert meta["start_token"] == "bos:<|begin_of_text|>" and meta["dtype"] == "float32"


def test_retrained_weights_do_not_reuse_stored_scores(tiny, tmp_path, monkeypatch):
    """Same model name and folder, different weights (a retrained demo model): the store
    must score again and keep the old file, not hand back the old scores."""
    model, tok = tiny("tiny-llama")
    pairs = sample("blimp", 2, 1)
    store = ScoreStore(tmp_path)
    kw = dict(model_name="tiny-llama", dataset="blimp", store=store)
    old = run_methods(Scorer(model, tok, progress=False), pairs, ["lp"], **kw)
    monkeypatch.setattr(model, "helpers_weights", "retrained", raising=False)
    scorer = Scorer(model, tok, progress=False)
    with pytest.warns(UserWarning, match="different configuration"):
        new = run_methods(scorer, pairs, ["lp"], **kw)
    assert scorer.forward_calls > 0 and new != old
    assert read_metadata(new[0])["weights"] == "retrained" and read_metadata(old[0])["weights"] != "retrained"


def test_load_scores_uses_the_newest_weights_then_the_fullest_configuration(tiny, tmp_path, monkeypatch):
    """Old weights scored on 4 pairs per paradigm, then 2 and 3 pairs with the retrained
    weights: the 3-pair file of the new weights is used, the larger old file is left out."""
    from helpers.results import load_scores

    model, tok = tiny("tiny-gpt2")
    store = ScoreStore(tmp_path)
    kw = dict(model_name="tiny-gpt2", dataset="blimp", store=store)
    run_methods(Scorer(model, tok, progress=False), sample("blimp", 2, 4), ["lp"], limit=4, **kw)
    monkeypatch.setattr(model, "helpers_weights", "retrained", raising=False)
    with pytest.warns(UserWarning):
        run_methods(Scorer(model, tok, progress=False), sample("blimp", 2, 2), ["lp"], limit=2, **kw)
        newest = run_methods(Scorer(model, tok, progress=False), sample("blimp", 2, 3), ["lp"], limit=3, **kw)
    with pytest.warns(UserWarning, match="left out 1 score file"):
        got = load_scores("blimp", "tiny-gpt2", root=tmp_path)
    assert len(got) == 6 and set(got.config_hash) == {read_metadata(newest[0])["config_hash"]}
