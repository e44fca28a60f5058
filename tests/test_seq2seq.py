"""Encoder-decoder scoring (helpers.engine.seq2seq) on the tiny T5, against a float64 reference
written here: each request shape tokenized and run the plain way (one request at a time,
the model in float64, Hu & Levy's own recipe for the sentinel span), within 1e-4 nats."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from helpers.engine import Request
from helpers.models import REGISTRY, LoadedModel
from helpers.engine.seq2seq import (
    SENTINEL,
    Seq2SeqRequest,
    Seq2SeqScorer,
    answer_request,
    span_request,
)
from helpers.settings import Settings

TOL = 1e-4  # nats


@pytest.fixture(scope="module")
def t5(tiny):
    return tiny("tiny-t5")


@pytest.fixture(scope="module")
def ref64(t5):
    return copy.deepcopy(t5.model).double()


@pytest.fixture(scope="module")
def scorer(t5):
    return Seq2SeqScorer(t5, Settings(progress=False, token_budget=256))


@torch.no_grad()
def _lp64(model, source_ids, labels):
    """log p(labels[j] | source, labels[:j]) in float64, one request alone."""
    src = torch.tensor([source_ids])
    dec = torch.tensor([[model.config.decoder_start_token_id] + list(labels[:-1])])
    logits = model(input_ids=src, decoder_input_ids=dec).logits[0].double()  # [len, vocab]
    lp = torch.log_softmax(logits, dim=-1)
    return lp[torch.arange(len(labels)), torch.tensor(labels)].numpy()


CONTEXTS = [("", "The cat sees a dog."), ("The old teacher", " likes the young student."),
            ("Is the following sentence grammatically acceptable? The bird sings.", " Answer: Yes"),
            ("A", " small house."), ("", "Every happy child visits that famous city.")]


def test_the_tiny_t5_is_built_with_t5s_tokenizer_and_registered_as_seq2seq(t5):
    tok = t5.tokenizer
    assert t5.kind == "seq2seq" and REGISTRY["tiny-t5"].architecture == "seq2seq"
    assert (tok.pad_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2)
    assert tok.convert_tokens_to_ids("<extra_id_0>") == len(tok) - 1  # sentinels at the end, reversed
    assert tok.convert_tokens_to_ids("<extra_id_99>") == len(tok) - 100
    assert tok("The cat.")["input_ids"][-1] == tok.eos_token_id  # </s> after every text
    # Flan-T5's layout: the decoder's last state goes to the head unscaled
    assert t5.model.config.decoder_start_token_id == 0 and Seq2SeqScorer(t5, Settings(progress=False)).scale == 1.0
    assert {REGISTRY[f"flan-t5-{s}"].hf_id for s in ("small", "large", "xl")} == {
        "google/flan-t5-small", "google/flan-t5-large", "google/flan-t5-xl"}


def test_decoder_shape_equals_the_float64_reference(t5, ref64, scorer):
    """Direct probability: empty source, context + target in the decoder, target scored."""
    tok = t5.tokenizer
    got = scorer.score([Request(c, t) for c, t in CONTEXTS], with_context=True)
    for (context, target), s in zip(CONTEXTS, got):
        ids = tok(context + target, add_special_tokens=False)["input_ids"]
        n_ctx = len(tok(context, add_special_tokens=False)["input_ids"]) if context else 0
        ref = _lp64(ref64, tok("")["input_ids"], ids)  # the empty source is </s> alone
        assert s.token_ids == ids[n_ctx:] and s.n_tokens == len(ids) - n_ctx
        np.testing.assert_allclose(s.logprobs, ref[n_ctx:], atol=TOL, rtol=0)
        np.testing.assert_allclose(s.context_logprobs, ref[:n_ctx], atol=TOL, rtol=0)
        assert abs(s.total - ref[n_ctx:].sum()) < TOL
    # a task source changes what the encoder reads, and the reference follows it
    task = Seq2SeqScorer(t5, Settings(progress=False), source="Score this sentence.")
    (s,) = task.score([Request("", "The cat sees a dog.")])
    ids = tok("The cat sees a dog.", add_special_tokens=False)["input_ids"]
    ref = _lp64(ref64, tok("Score this sentence.")["input_ids"], ids)
    assert abs(s.total - ref.sum()) < TOL and abs(s.total - got[0].total) > 1e-3


def test_span_shape_equals_hu_and_levys_recipe_in_float64(t5, ref64, scorer):
    """Sentinel span: "prefix <extra_id_0>" in, "<extra_id_0> word" out; the first label
    (the sentinel) unscored and the span's closing token scored, as their T5 code sums it."""
    tok = t5.tokenizer
    items = [("The old teacher likes the", "student"), ("Every happy child visits that famous", "city"),
             ("A", "cat")]
    got = scorer.score([span_request(p + " ", w) for p, w in items])
    for (prefix, word), s in zip(items, got):
        labels = tok(f"{SENTINEL} {word}")["input_ids"]  # [<extra_id_0>, word..., </s>]
        ref = _lp64(ref64, tok(f"{prefix} {SENTINEL}")["input_ids"], labels)[1:]
        assert s.token_ids == labels[1:] and s.tokens[-1] == "</s>"
        np.testing.assert_allclose(s.logprobs, ref, atol=TOL, rtol=0)
    # inside a text the span closes with <extra_id_1> (their code: "<extra_id_0> word <extra_id_1>", </s> dropped)
    (s,) = scorer.score([span_request("The old teacher ", "likes", " the young student.")])
    labels = tok(f"{SENTINEL} likes <extra_id_1>")["input_ids"]
    ref = _lp64(ref64, tok(f"The old teacher {SENTINEL} the young student.")["input_ids"], labels)[1:-1]
    assert s.tokens[-1] == "<extra_id_1>" and abs(s.total - ref.sum()) < TOL
    # span_end=False leaves the closing token out
    (short,) = Seq2SeqScorer(t5, Settings(progress=False), span_end=False).score([span_request("The old teacher likes the ",
                                                                                     "student")])
    assert short.n_tokens == got[0].n_tokens - 1 and abs(short.total - got[0].logprobs[:-1].sum()) < TOL


def test_answer_shape_equals_the_float64_reference(t5, ref64, scorer):
    """Metalinguistic prompts: the prompt as source, the answer from the decoder's start."""
    tok = t5.tokenizer
    prompts = [("Is the following sentence a good sentence of English? The cat sees a dog. Respond with either "
                "Yes or No as your answer.\n\n"),
               ("Here are two English sentences:\n\n1) A cat. 2) Cat a. Which sentence is a better English "
                "sentence?\n\nAnswer: ")]
    answers = ["Yes", "No", "1", "2"]
    reqs = [answer_request(p, a) for p in prompts for a in answers]
    got = scorer.score(reqs)
    for r, s in zip(reqs, got):
        labels = tok(r.target, add_special_tokens=False)["input_ids"]
        ref = _lp64(ref64, tok(r.source)["input_ids"], labels)
        assert s.token_ids == labels
        np.testing.assert_allclose(s.logprobs, ref, atol=TOL, rtol=0)
    # the prompt shape reads an answer after its prompt as the source: the same value, from one batch
    shaped = scorer.score(scorer.shaped([Request(p, a) for p in prompts for a in ("Yes", "No")], "prompt"))
    assert shaped[3].total == pytest.approx(got[5].total, abs=TOL)
    calls = scorer.forward_calls
    scorer.score(reqs)
    assert scorer.forward_calls == calls + 1  # 8 requests, 2 sources: one batch


def test_batching_and_shared_sources_do_not_change_scores(t5, scorer):
    reqs = ([Request(c, t) for c, t in CONTEXTS] + [span_request("The cat sees the ", "dog")]
            + [answer_request("Is it good? ", a) for a in ("Yes", "No")])
    together = [s.total for s in scorer.score(reqs)]
    one_by_one = Seq2SeqScorer(t5, Settings(progress=False, batch_size=1, share="none"))
    alone = [one_by_one.score([r])[0].total for r in reqs]
    np.testing.assert_allclose(together, alone, atol=1e-5, rtol=0)
    assert one_by_one.forward_calls == len(reqs)


def test_scoring_only_some_requests_gives_the_whole_lists_values_bit_for_bit(t5):
    """``only`` runs the whole list's batches that hold the chosen requests: the same values."""
    scorer = Seq2SeqScorer(t5, Settings(progress=False, batch_size=2))
    reqs = ([Request(c, t) for c, t in CONTEXTS] + [span_request("The cat sees the ", "dog")]
            + [answer_request("Is it good? ", a) for a in ("Yes", "No")])
    whole = scorer.score(reqs)
    calls = scorer.forward_calls
    only = [len(reqs) - 1, 0]
    part = scorer.score(reqs, only=only)
    assert 0 < scorer.forward_calls - calls < calls
    for i, got in zip(only, part):
        assert got.token_ids == whole[i].token_ids and np.array_equal(got.logprobs, whole[i].logprobs)
    with pytest.raises(IndexError, match=rf"only names request {len(reqs)}, but there are {len(reqs)} requests"):
        scorer.score(reqs, only=[len(reqs)])


def test_a_t5_with_tied_embeddings_scales_its_decoder_output(t5):
    """T5s that tie the output embedding scale the decoder's last state by d_model**-0.5 (the
    probe finds it) and still match the model's own logits."""
    from transformers import T5ForConditionalGeneration

    cfg = copy.deepcopy(t5.model.config)
    cfg.tie_word_embeddings = True
    cfg.scale_decoder_outputs = True
    torch.manual_seed(1)
    tied = T5ForConditionalGeneration(cfg).eval()
    s = Seq2SeqScorer(LoadedModel.wrap(tied, t5.tokenizer, name="tied-t5"), Settings(progress=False))
    assert s.scale == pytest.approx(cfg.d_model ** -0.5)
    tok = t5.tokenizer
    (got,) = s.score([answer_request("Is it good?", "Yes")])
    ref = _lp64(copy.deepcopy(tied).double(), tok("Is it good?")["input_ids"], tok("Yes", add_special_tokens=False)
                ["input_ids"])
    assert abs(got.total - ref.sum()) < TOL


def test_each_kind_shapes_requests_its_own_way(t5, tiny):
    from helpers.engine import CausalScorer

    causal = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    reqs = [Request("The cat sees the", " dog"), Request("Answer: ", "Yes")]
    assert causal.shaped(reqs, "span") is reqs and causal.prompt_shape is None
    s2s = Seq2SeqScorer(t5, Settings(progress=False))
    assert s2s.shaped(reqs, "span") == [Seq2SeqRequest("span", f"The cat sees the {SENTINEL}", "dog"),
                                        Seq2SeqRequest("span", f"Answer: {SENTINEL}", "Yes")]
    assert s2s.shaped(reqs, "prompt")[1] == Seq2SeqRequest("answer", "Answer: ", "Yes")
    assert s2s.prompt_shape == "answer" and "token_mass" not in s2s.features
    spans = Seq2SeqScorer(t5, Settings(progress=False), prompts="span")
    assert spans.shaped(reqs, "prompt")[1] == Seq2SeqRequest("span", f"Answer: {SENTINEL}", "Yes")
    with pytest.raises(ValueError, match="shape must be one of 'span', 'prompt'"):
        causal.shaped(reqs, "sentence")
    assert "prompts=span" in spans.start_token and "decoder_start:<pad>" in s2s.start_token


def test_clear_errors(t5, tiny):
    from helpers.engine import CausalScorer, scorer_for

    with pytest.raises(TypeError, match="is an encoder-decoder"):
        CausalScorer(t5)
    with pytest.raises(TypeError, match="not an encoder-decoder"):
        Seq2SeqScorer(tiny("tiny-gpt2"))
    with pytest.raises(ValueError, match="causal-model convention"):
        Seq2SeqScorer(t5, Settings(start="minicons"))
    with pytest.raises(ValueError, match="causal-model convention"):
        Seq2SeqScorer(t5, Settings(start="none"))
    with pytest.raises(ValueError, match="prompts must be"):
        Seq2SeqScorer(t5, prompts="decoder")
    s = Seq2SeqScorer(t5, Settings(progress=False))
    with pytest.raises(ValueError, match="exactly once"):
        s.score([Seq2SeqRequest("span", "no sentinel here", "dog")])
    with pytest.raises(ValueError, match="target is empty"):
        s.score([Request("The cat", "")])
    with pytest.raises(NotImplementedError, match="ab_logit"):
        s.encode(Request("A", "B"))
    assert isinstance(scorer_for("tiny-t5", Settings(progress=False)), Seq2SeqScorer)


def test_hu_levy_tasks_run_on_the_tiny_t5(t5, tmp_path, monkeypatch):
    """The runner scores Hu & Levy's tasks on an encoder-decoder in the shapes above: word
    prediction as a sentinel span, Direct sentences in the decoder, prompts as source."""
    from helpers.data.selection import select
    from helpers.store import ScoreStore, load_files, read_metadata
    from helpers.runner import run_methods
    from helpers.methods.templates import hu_levy_prompts

    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    s = Seq2SeqScorer(t5, Settings(progress=False))
    store = ScoreStore(tmp_path / "scores")
    words_sel, pairs_sel = select("hl_p18", 2), select("hl_blimp", 1)
    files = run_methods(
        s, words_sel, ["hl_word_prediction"], {"templates": ["direct", "metaQuestionComplex"]}, store=store
    )
    files += run_methods(
        s, pairs_sel, ["hl_sentence_judgment"], {"templates": ["direct", "metaQuestionSimple"]}, store=store
    )
    scores = load_files(files)
    word, pair = words_sel.items()[0], pairs_sel.items()[0]
    words = scores[(scores.method == "hl_word_prediction") & (scores.item_id == word["item_id"])].set_index("template")
    assert words.score["direct"] == pytest.approx(
        s.score([span_request(word["prefix"] + " ", word["continuation"])])[0].total, abs=TOL)
    complex_prompt = hu_levy_prompts()[("word_prediction", "en", "metaQuestionComplex")]
    before = complex_prompt.replace("{prefix}", word["prefix"]).split("{continuation}")[0]
    assert words.score["metaQuestionComplex"] == pytest.approx(
        s.score([span_request(before, word["continuation"])])[0].total, abs=TOL)
    judged = scores[(scores.method == "hl_sentence_judgment") & (scores.pair_id == pair["pair_id"])
                    & (scores.paradigm == pair["paradigm"])].set_index("template")
    assert judged.score_good["direct"] == pytest.approx(s.score_texts([pair["good"]])[0].total, abs=TOL)
    simple = hu_levy_prompts()[("sentence_judgment", "en", "metaQuestionSimple")]
    prompt = simple.replace("{sentence}", pair["bad"]).split("{continuation}")[0]
    assert judged.lp_no_bad["metaQuestionSimple"] == pytest.approx(
        s.score([answer_request(prompt, "No")])[0].total, abs=TOL)
    assert all("prompts=answer" in read_metadata(f)["start_token"] for f in files)


def test_each_kind_of_model_gets_its_scorer_and_both_follow_the_protocol(t5, tiny):
    from helpers.engine import SCORER_KINDS, CausalScorer, MaskedScorer, Scorer, scorer_for

    causal = tiny("tiny-gpt2")
    assert (causal.kind, t5.kind) == ("causal", "seq2seq")
    assert SCORER_KINDS == {"causal": CausalScorer, "seq2seq": Seq2SeqScorer, "masked": MaskedScorer}
    made = {lm.kind: scorer_for(lm, Settings(progress=False)) for lm in (causal, t5)}  # a LoadedModel, not loaded again
    assert isinstance(made["causal"], CausalScorer) and isinstance(made["seq2seq"], Seq2SeqScorer)
    for scorer in made.values():
        assert isinstance(scorer, Scorer)  # loaded, tokenizer, start policy and convention, score, shaped ...
        (s,) = scorer.score_texts(["The cat sees a dog."])
        assert s.n_tokens > 0 and np.isfinite(s.total)
    with pytest.raises(ValueError, match="quant apply to loading, but tiny-gpt2 is loaded already"):
        scorer_for(causal, Settings(quant="4bit"))
