"""The generic runner: readouts against a plain float64 reference, the store, a method
registered from outside, and every method under a priming context."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import methods as registry
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.methods.base import Family, Method
from helpers.store import ScoreStore, load_files, load_scores, read_metadata
from helpers.runner import run_methods
from helpers.engine import Request, CausalScorer
from helpers.methods.templates import ide_templates
from helpers.settings import Settings

SEVEN = ["lp", "meanlp", "penlp", "intemplate_lp", "intemplate_meanlp", "intemplate_penlp", "comparative_lp"]


def sample(dataset: str, paradigms: int = 8, per: int = 2) -> DatasetSelection:
    df = load(dataset)
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection(dataset, first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


def token_logprobs(model, ids: list[int]) -> torch.Tensor:
    """float64 log-softmax of one sequence, no cache, no batching."""
    with torch.no_grad():
        return torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)


def reference_lp(model, tok, start_id, text: str, from_char: int = 0) -> tuple[float, int]:
    """Sum and count of log p(token | everything before) over the tokens of ``text`` that end
    after character ``from_char``, the sequence starting with the start token."""
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = [start_id] + enc["input_ids"]
    lp = token_logprobs(model, ids)
    picked = [i + 1 for i, (_, end) in enumerate(enc["offset_mapping"]) if end > from_char]
    return float(sum(lp[i - 1, ids[i]] for i in picked)), len(picked)


def reference_answer_lp(model, tok, start_id, prompt: str, answer: str) -> float:
    """log p(answer | prompt), the prompt and the answer tokenized apart."""
    head = [start_id] + tok(prompt, add_special_tokens=False)["input_ids"]
    ids = head + tok(answer, add_special_tokens=False)["input_ids"]
    lp = token_logprobs(model, ids)
    return float(sum(lp[i - 1, ids[i]] for i in range(len(head), len(ids))))


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
    lm = tiny(f"tiny-{arch}")
    selection = sample(dataset)
    scorer = CausalScorer(lm, Settings(progress=False))
    files = run_methods(scorer, selection, SEVEN, store=ScoreStore(tmp_path))
    assert len(files) == 3 + 3 * 5 + 5
    scores = load_files(files)
    pairs = selection.frame
    ref = reference_scores(lm.model, lm.tokenizer, scorer.start_id, pairs, selection.language)
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
    lm = tiny("tiny-llama")
    files = run_methods(
        CausalScorer(lm, Settings(progress=False)),
        sample("blimp", 2, 2),
        ["penlp", "intemplate_lp", "intemplate_meanlp"],
        {"templates": [1]},
        store=ScoreStore(tmp_path),
    )
    s = load_files(files)
    pen = s[s.method == "penlp"].iloc[0]
    assert pen.score_good == pytest.approx(pen.tgt_sum_good / ((5 + pen.n_tokens_good) / 6) ** 0.8)
    mean = s[s.method == "intemplate_meanlp"].iloc[0]
    template = "The following sentence is grammatically acceptable.\n\n"
    assert mean.ctx_n_good == len(lm.tokenizer(template, add_special_tokens=False)["input_ids"])
    assert mean.score_good == pytest.approx((mean.ctx_sum_good + mean.tgt_sum_good) / (mean.ctx_n_good + mean.n_tokens_good))
    assert mean.score_good_target == pytest.approx(mean.tgt_sum_good / mean.n_tokens_good)


def test_ties_count_as_errors(tiny, tmp_path):
    pairs = load("blimp")
    selection = DatasetSelection("blimp", pairs[pairs.identical].reset_index(drop=True))
    s = load_files(
        run_methods(CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), selection, ["lp"], store=ScoreStore(tmp_path))
    )
    assert len(s) == 7 and s.tie.all() and not s.correct.any()


def test_slor_and_bayes_factors_against_counted_unigrams(tiny, tmp_path):
    lm = tiny("tiny-gpt2")
    tok = lm.tokenizer
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sees a dog.\nThe dogs see a cat.\nEvery teacher admires the students.\n")
    counts = Counter(i for line in corpus.read_text().splitlines() for i in tok(line, add_special_tokens=False)["input_ids"])
    total = sum(counts.values()) + len(tok)

    def uni(ids):  # add-one smoothed unigram log-prob, counted here
        return np.array([math.log((counts[i] + 1) / total) for i in ids])

    files = run_methods(
        CausalScorer(lm, Settings(progress=False)),
        sample("blimp", 2, 3),
        ["slor", "bf_uniform", "bf_unigram"],
        {"unigram_corpus": corpus},
        store=ScoreStore(tmp_path / "s"),
    )
    s = load_files(files, token_columns=True)
    assert len(s) == 18
    for row in s.itertuples():
        lp, ids = np.asarray(row.token_lp_good), np.asarray(row.token_ids_good)
        expected = {"slor": (lp - uni(ids)).mean(), "bf_uniform": lp.sum() + len(lp) * math.log(len(tok)),
                    "bf_unigram": lp.sum() - uni(ids).sum()}[row.method]
        assert row.score_good == pytest.approx(expected, rel=1e-9)
    meta = read_metadata(files[0])
    assert meta["unigram_source"] == f"file:{corpus.resolve()}:corpus.txt:{corpus.stat().st_size}"


def test_store_second_run_computes_nothing(tiny, tmp_path):
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False))
    selection = sample("blimp", 3, 2)
    first = run_methods(scorer, selection, SEVEN, {"templates": [1, 2]}, store=ScoreStore(tmp_path))
    calls = scorer.forward_calls
    assert calls > 0
    second = run_methods(scorer, selection, SEVEN, {"templates": [1, 2]}, store=ScoreStore(tmp_path))
    assert scorer.forward_calls == calls and sorted(second) == sorted(first)


def test_interrupted_run_resumes_to_the_same_files(tiny, tmp_path, monkeypatch):
    lm = tiny("tiny-qwen2")
    selection = sample("blimp", 3, 2)
    clean = run_methods(
        CausalScorer(lm, Settings(progress=False)), selection, SEVEN, {"templates": [1, 2]}, store=ScoreStore(tmp_path / "a")
    )
    store = ScoreStore(tmp_path / "b")
    original = ScoreStore.write

    def failing(self, *args, **kwargs):
        if self.writes >= 5:
            raise KeyboardInterrupt("simulated kill")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ScoreStore, "write", failing)
    with pytest.raises(KeyboardInterrupt):
        run_methods(CausalScorer(lm, Settings(progress=False)), selection, SEVEN, {"templates": [1, 2]}, store=store)
    assert len(store.files()) == 5 and not list((tmp_path / "b").rglob("*.tmp"))
    monkeypatch.setattr(ScoreStore, "write", original)
    resumed = run_methods(
        CausalScorer(lm, Settings(progress=False)), selection, SEVEN, {"templates": [1, 2]}, store=ScoreStore(tmp_path / "b")
    )
    assert [p.name for p in sorted(resumed)] == [p.name for p in sorted(clean)]
    for a, b in zip(sorted(clean), sorted(resumed)):
        pd.testing.assert_frame_equal(pd.read_parquet(a), pd.read_parquet(b))
        assert read_metadata(a)["config_hash"] == read_metadata(b)["config_hash"]


def test_changed_configuration_writes_alongside(tiny, tmp_path):
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    store = ScoreStore(tmp_path)
    full = load("blimp")
    a = run_methods(scorer, DatasetSelection("blimp", first_per_paradigm(full, 1), limit=1), ["lp"], store=store)
    before = a[0].read_bytes()
    with pytest.warns(UserWarning, match="different configuration"):
        b = run_methods(scorer, DatasetSelection("blimp", first_per_paradigm(full, 2), limit=2), ["lp"], store=store)
    assert a[0].name == "lp.parquet" and b[0].name.startswith("lp__") and b[0] != a[0]
    assert a[0].read_bytes() == before
    assert len(pd.read_parquet(b[0])) == 2 * len(pd.read_parquet(a[0]))


def test_score_file_schema_and_provenance(tiny, tmp_path):
    lm = tiny("tiny-llama")
    files = run_methods(
        CausalScorer(lm, Settings(progress=False)),
        sample("blimp", 2, 1),
        ["intemplate_lp"],
        {"templates": [3]},
        store=ScoreStore(tmp_path),
    )
    df = pd.read_parquet(files[0])
    for col in ["dataset", "paradigm", "phenomenon", "pair_id", "score_good", "score_bad", "correct", "tie",
                "n_tokens_good", "n_tokens_bad", "token_lp_good", "token_ids_good", "ctx_sum_good", "input_good",
                "score_good_target", "correct_target"]:
        assert col in df.columns, col
    meta = read_metadata(files[0])
    assert {k: meta[k] for k in lm.provenance()} == lm.provenance()
    assert meta["model_name"] == "tiny-llama" and meta["weights"] == lm.weights and len(lm.weights) == 16
    assert meta["template_text"] == "Here is a grammatically correct sentence.\n\n{sentence}"
    assert meta["start_token"] == "bos:<|begin_of_text|>" and meta["dtype"] == "float32"
    assert (meta["dataset"], meta["limit"], meta["n_pairs"], meta["context"]) == ("blimp", 1, 2, "")


def test_retrained_weights_do_not_reuse_stored_scores(tiny, tmp_path):
    """Same model name, different weights (a retrained demo model): the store scores again,
    keeps the old file, and load_scores uses only the newest weights."""
    lm = tiny("tiny-gpt2")
    store = ScoreStore(tmp_path)
    old = run_methods(CausalScorer(lm, Settings(progress=False)), sample("blimp", 2, 4), ["lp"], store=store)
    retrained = dataclasses.replace(lm, weights="retrained")
    scorer = CausalScorer(retrained, Settings(progress=False))
    with pytest.warns(UserWarning, match="different configuration"):
        new = run_methods(scorer, sample("blimp", 2, 3), ["lp"], store=store)
    assert scorer.forward_calls > 0 and new != old
    assert read_metadata(new[0])["weights"] == "retrained" and read_metadata(old[0])["weights"] == lm.weights
    with pytest.warns(UserWarning, match="left out 1 score file"):
        got = load_scores("blimp", "tiny-gpt2", root=tmp_path)
    assert len(got) == 6 and got.attrs["score_files"] == [str(new[0])]


def test_selection_and_frame_must_agree():
    frame = load("blimp").head(3)
    with pytest.raises(ValueError, match="not 'climp'"):
        DatasetSelection("climp", frame)
    with pytest.raises(ValueError, match="limit 1 but the frame has 3"):
        DatasetSelection("blimp", frame, limit=1)
    with pytest.raises(KeyError, match="unknown dataset 'blimpp'"):
        DatasetSelection("blimpp", frame)
    with pytest.raises(ValueError, match="positive number"):
        first_per_paradigm(frame, 0)


class _FirstTokenFamily(Family):
    """A throwaway family: log p of each sentence's first token only."""

    name = "first_token"

    def requests(self, item, template, context, pass_context, state):
        return [Request(context, item["good"]), Request(context, item["bad"])]

    def table(self, items, template, contexts, scored, pass_context, states):
        return pd.DataFrame({"first_good": [s[0].logprobs[0] for s in scored],
                             "first_bad": [s[1].logprobs[0] for s in scored]})


def test_a_new_method_needs_only_a_registry_entry(tiny, tmp_path):
    method = registry.register(Method("first_token_lp", _FirstTokenFamily(), "log p(first token)",
                                      lambda t, side: t[f"first_{side}"]))
    try:
        lm = tiny("tiny-gpt2")
        selection = sample("blimp", 2, 2)
        scorer = CausalScorer(lm, Settings(progress=False))
        files = run_methods(scorer, selection, ["first_token_lp", "lp"], store=ScoreStore(tmp_path))
        scores = load_scores("blimp", "tiny-gpt2", root=tmp_path, token_columns=True)
        first, lp = scores[scores.method == "first_token_lp"], scores[scores.method == "lp"]
        assert len(files) == 2 and len(first) == 4 and read_metadata(files[0])["method"] == "first_token_lp"
        np.testing.assert_allclose(first.score_good.to_numpy(), [t[0] for t in lp.token_lp_good], rtol=1e-12)
        with pytest.raises(ValueError, match="registered already"):
            registry.register(method)
    finally:
        registry.unregister("first_token_lp")
    with pytest.raises(KeyError, match="unknown method 'first_token_lp'"):
        registry.get("first_token_lp")


def test_single_sentences_are_items_too(tiny, tmp_path):
    """CoLA sentences (no pairs): one score per sentence, equal to the plain reference; methods
    that need a pair say so."""
    lm = tiny("tiny-llama")
    cola = load("cola").head(5)
    selection = DatasetSelection("cola", cola)
    scorer = CausalScorer(lm, Settings(progress=False))
    files = run_methods(
        scorer, selection, ["lp", "intemplate_lp", "yesno"], {"templates": [1]}, store=ScoreStore(tmp_path)
    )
    s = load_files(files)
    assert set(s.method) == {"lp", "intemplate_lp", "yesno"} and "score_good" not in s and "correct" not in s
    assert list(s[s.method == "lp"].label) == list(cola.label)
    template = ide_templates("single", "en")[0]
    for row, sentence in zip(s[s.method == "lp"].itertuples(), cola.sentence):
        assert row.score == pytest.approx(reference_lp(lm.model, lm.tokenizer, scorer.start_id, sentence)[0], abs=1e-4)
    for row, sentence in zip(s[s.method == "intemplate_lp"].itertuples(), cola.sentence):
        whole = reference_lp(lm.model, lm.tokenizer, scorer.start_id, template.fill(sentence=sentence))[0]
        assert row.score == pytest.approx(whole, abs=1e-4)
    for method in ("comparative_lp", "ab_logit"):
        with pytest.raises(ValueError, match="this dataset has single sentences"):
            run_methods(scorer, selection, [method], {"templates": [1]}, store=ScoreStore(tmp_path / method))
