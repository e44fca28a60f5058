"""The engine against float64 references, across batch sizes, sharing modes and architectures."""
from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from helpers.scoring import Request, Scorer

ARCHS = ("llama", "qwen2", "mixtral", "gpt2")
SENTENCES = [
    "The cat sees a dog.", "The cat see a dog.", "Every teacher admires the students.",
    "These children praise that famous song.", "A bird.", "Some careful doctors describe the old river quietly.",
    "This house remembers a tall window.", "The dogs that the teacher likes are happy.",
    "Is the following sentence grammatically acceptable?", "Who should Derek hug after shocking Richard?",
    "Who should Derek hug Richard after shocking?", "我喜欢看书。", "他把书看了。", "The garden.",
    "A young student visits these quiet cities in the morning and finds a green letter.",
    "Yes", "No.", "A: The cat.\nB: The cats.\nAnswer: A", "The letter was written by every careful child.",
    "The famous car helps a small city.",
]


def reference_logprobs(model, ids: tuple[int, ...], first: int) -> np.ndarray:
    """One sequence at a time, float64 weights, full float64 softmax."""
    m64 = reference_logprobs.cache.get(id(model))
    if m64 is None:
        m64 = reference_logprobs.cache[id(model)] = copy.deepcopy(model).double()
        m64.set_attn_implementation("eager")
        if hasattr(m64.config, "num_local_experts"):
            m64.set_experts_implementation("eager")  # grouped_mm has no float64 kernel
    with torch.no_grad():
        logits = m64(torch.tensor([ids])).logits[0]
    lp = torch.log_softmax(logits.double(), dim=-1)
    return np.array([lp[i - 1, ids[i]].item() for i in range(first, len(ids))])


reference_logprobs.cache = {}


@pytest.mark.parametrize("arch", ARCHS)
def test_lp_matches_float64_reference(tiny, arch):
    model, tok = tiny(f"tiny-{arch}")
    scorer = Scorer(model, tok, progress=False)
    results = scorer.score_texts(SENTENCES)
    for text, r in zip(SENTENCES, results):
        enc = scorer.encode(Request("", text))
        ref = reference_logprobs(model, enc.ids, enc.first)
        assert r.n_tokens == len(ref) == len(enc.ids) - 1
        assert abs(r.total - ref.sum()) < 1e-4, text
        np.testing.assert_allclose(r.logprobs, ref, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_batch_size_and_order_invariance(tiny, arch):
    model, tok = tiny(f"tiny-{arch}")
    base = [s.total for s in Scorer(model, tok, progress=False, batch_size=1).score_texts(SENTENCES)]
    for bs in (3, 16):
        got = [s.total for s in Scorer(model, tok, progress=False, batch_size=bs).score_texts(SENTENCES)]
        np.testing.assert_allclose(got, base, atol=1e-4)
    order = list(range(len(SENTENCES)))
    random.Random(0).shuffle(order)
    shuffled = Scorer(model, tok, progress=False).score_texts([SENTENCES[i] for i in order])
    np.testing.assert_allclose([shuffled[order.index(i)].total for i in range(len(order))], base, atol=1e-4)
    tiny_budget = Scorer(model, tok, progress=False, token_budget=40).score_texts(SENTENCES)
    np.testing.assert_allclose([s.total for s in tiny_budget], base, atol=1e-4)


def _contexts(rng: random.Random) -> list[str]:
    """Contexts of about 5, 30, 120 and 500 tokens."""
    out = []
    for n_sent in (1, 5, 20, 80):
        out.append(" ".join(rng.choice(SENTENCES[:11] + SENTENCES[12:]) for _ in range(n_sent)) + " ")
    return out


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("share", ["context", "prefix"])
def test_shared_context_equals_plain_path(tiny, arch, share):
    model, tok = tiny(f"tiny-{arch}")
    rng = random.Random(1)
    contexts = _contexts(rng)
    requests = [Request(c, t) for c in contexts for t in SENTENCES[:8]] + [Request("", t) for t in SENTENCES]
    plain = Scorer(model, tok, progress=False, share="none")
    shared = Scorer(model, tok, progress=False, share=share)
    lengths = [len(plain.encode(Request("", c)).ids) for c in contexts]
    assert lengths[0] <= 10 and lengths[-1] >= 450, lengths
    a = plain.score(requests, with_context=True)
    b = shared.score(requests, with_context=True)
    assert shared.tokens_run < plain.tokens_run / 3  # the contexts ran once, not once per target
    for x, y in zip(a, b):
        assert x.token_ids == y.token_ids
        np.testing.assert_allclose(y.logprobs, x.logprobs, atol=1e-4)
        np.testing.assert_allclose(y.context_logprobs, x.context_logprobs, atol=1e-4)


def test_shared_prefix_of_pairs_matches_reference(tiny):
    model, tok = tiny("tiny-llama")
    pairs = [("Who should Derek hug after shocking Richard?", "Who should Derek hug Richard after shocking?"),
             ("The cat sees a dog.", "The cat see a dog."), ("The cat sees a dog.", "The cat sees a dog.")]
    texts = [s for p in pairs for s in p]
    scorer = Scorer(model, tok, progress=False, share="prefix")
    for text, r in zip(texts, scorer.score_texts(texts)):
        enc = scorer.encode(Request("", text))
        np.testing.assert_allclose(r.logprobs, reference_logprobs(model, enc.ids, enc.first), atol=1e-4)


@pytest.mark.parametrize("arch,expected", [("llama", "bos:<|begin_of_text|>"), ("qwen2", "eos:<|endoftext|>"),
                                           ("gpt2", "bos:<|endoftext|>")])
def test_exactly_one_document_start_token(tiny, arch, expected):
    model, tok = tiny(f"tiny-{arch}")
    scorer = Scorer(model, tok, progress=False)
    assert scorer.start_policy == expected
    start = scorer.start_id
    for req in [Request("", "The cat."), Request("Answer:", " Yes"), Request(tok.decode([start]) + "The cat.", " Yes")]:
        ids = scorer.encode(req).ids
        assert ids[0] == start
        assert ids.count(start) == 1, (req, ids)
    first = scorer.score_texts(["The cat."])[0]
    assert first.tokens[0] == "The"  # the first word is scored
    if arch == "qwen2":
        assert tok.bos_token is None and start == tok.eos_token_id


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_parity_with_minicons(tiny, arch):
    from minicons.scorer import IncrementalLMScorer

    model, tok = tiny(f"tiny-{arch}")
    ours = Scorer(model, tok, progress=False, minicons=True)
    theirs = IncrementalLMScorer(model, device="cpu", tokenizer=tok)
    texts = SENTENCES[:12]
    expected = theirs.sequence_score(texts, reduction=lambda x: x.sum(0).item())
    got = [s.total for s in ours.score_texts(texts)]
    np.testing.assert_allclose(got, expected, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_next_token_readout_equals_reference(tiny, arch):
    model, tok = tiny(f"tiny-{arch}")
    scorer = Scorer(model, tok, progress=False)
    prompts = ["Is the following sentence grammatically acceptable? The cat sees a dog.\nAnswer: ",
               "A: The cat.\nB: The cats.\nAnswer:"]
    readouts = scorer.next_token(prompts, ["Yes", "No", "A"])
    for prompt, r in zip(prompts, readouts):
        for option in ("Yes", "No", "A"):
            enc = scorer.encode(Request(prompt, option))
            ref = reference_logprobs(model, enc.ids, enc.first).sum()
            assert abs(r.logprobs[option] - ref) < 1e-4
    # after "Answer: " the trailing space merges into the option: " Yes" is the form scored;
    # after "Answer:" the text is "Answer:A", so the bare form is scored
    assert readouts[0].forms["Yes"] == ["ĠYes"] and readouts[0].forms["No"] == ["ĠNo"]
    assert readouts[1].forms["A"] == ["A"]
    assert readouts[0].best() in ("Yes", "No", "A")


def test_single_token_options_need_no_extra_forward(tiny):
    model, tok = tiny("tiny-llama")
    scorer = Scorer(model, tok, progress=False)
    scorer.next_token(["Is it acceptable? The cat sees a dog.\nAnswer:"], ["Yes", "No"])
    assert scorer.forward_calls == 1


def test_multi_token_option_is_a_continuation(tiny):
    model, tok = tiny("tiny-gpt2")
    scorer = Scorer(model, tok, progress=False)
    r = scorer.next_token(["The cat sees"], [" a careful doctor"])[0]
    assert r.n_tokens[" a careful doctor"] > 1
    enc = scorer.encode(Request("The cat sees", " a careful doctor"))
    assert abs(r.logprobs[" a careful doctor"] - reference_logprobs(model, enc.ids, enc.first).sum()) < 1e-4


@pytest.mark.parametrize("bad,error", [
    (Request("ctx", ""), ValueError), (Request("", 3), TypeError), (Request(None, "x"), TypeError),
])
def test_bad_requests_raise_clear_errors(tiny, bad, error):
    model, tok = tiny("tiny-gpt2")
    with pytest.raises(error, match="target|context"):
        Scorer(model, tok, progress=False).score([bad])


def test_non_request_and_bad_options(tiny):
    model, tok = tiny("tiny-gpt2")
    scorer = Scorer(model, tok, progress=False)
    with pytest.raises(TypeError, match="Request"):
        scorer.score(["a plain string"])
    with pytest.raises(ValueError, match="empty"):
        scorer.next_token(["Answer:"], ["Yes", ""])
    with pytest.raises(ValueError, match="at least one option"):
        scorer.next_token(["Answer:"], [])


def test_option_that_tokenizes_to_nothing(tiny):
    """A normalising tokenizer (e.g. BERT-style) can drop a target entirely: that is an error."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = tiny("tiny-gpt2")
    wp = Tokenizer(models.WordPiece({"[UNK]": 0, "[CLS]": 1, "answer": 2, ":": 3, "yes": 4}, unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    bert_like = PreTrainedTokenizerFast(tokenizer_object=wp, unk_token="[UNK]", eos_token="[CLS]", pad_token="[CLS]")
    scorer = Scorer(model, bert_like, progress=False)
    assert scorer.score([Request("answer:", " yes")])[0].tokens == ["yes"]
    with pytest.raises(ValueError, match="tokenizes to no tokens"):
        scorer.next_token(["answer:"], ["yes", "   "])


def test_too_long_request_is_refused(tiny):
    model, tok = tiny("tiny-gpt2")
    with pytest.raises(ValueError, match="exceeds the model's 1024 positions"):
        Scorer(model, tok, progress=False).score([Request("", "cat " * 1500)])


def test_float64_sums_and_float32_softmax_on_half_model(tiny):
    model, tok = tiny("tiny-llama")
    half = copy.deepcopy(model).to(torch.bfloat16)
    r = Scorer(half, tok, progress=False).score_texts(["The cat sees a dog."])[0]
    assert r.logprobs.dtype == np.float64
    ref = Scorer(model, tok, progress=False).score_texts(["The cat sees a dog."])[0]
    assert abs(r.total - ref.total) < 0.5  # bf16 weights: close, not equal


def test_progress_bar_reports_items(tiny, capsys):
    model, tok = tiny("tiny-gpt2")
    Scorer(model, tok, progress=True).score_texts(SENTENCES[:4], desc="demo")
    err = capsys.readouterr().err
    assert "demo" in err and "seq" in err


def test_tiny_kv_budget_runs_in_chunks_with_the_same_scores(tiny):
    model, tok = tiny("tiny-llama")
    requests = [Request(c, t) for c in ("The following sentence is acceptable.\n\n", "Here is a sentence.\n\n")
                for t in SENTENCES] + [Request("", t) for t in SENTENCES]
    roomy = Scorer(model, tok, progress=False).score(requests, with_context=True)
    tight = Scorer(model, tok, progress=False, kv_budget_bytes=1)
    cramped = tight.score(requests, with_context=True)
    assert tight.forward_calls > 3
    for a, b in zip(roomy, cramped):
        np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5)
        np.testing.assert_allclose(b.context_logprobs, a.context_logprobs, atol=1e-5)


def test_out_of_memory_halves_the_batch_and_goes_on(tiny, monkeypatch):
    model, tok = tiny("tiny-gpt2")
    expected = [s.total for s in Scorer(model, tok, progress=False).score_texts(SENTENCES)]
    scorer = Scorer(model, tok, progress=False, share="none")
    real = Scorer._forward
    sizes = []

    def flaky(self, batch):
        sizes.append(len(batch))
        if len(batch) > 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, batch)

    monkeypatch.setattr(Scorer, "_forward", flaky)
    got = [s.total for s in scorer.score_texts(SENTENCES)]
    np.testing.assert_allclose(got, expected, atol=1e-4)
    assert max(sizes) > 4 and scorer.token_budget < 2048
