"""The engine against float64 references, across batch sizes, sharing modes and architectures."""
from __future__ import annotations

import copy
import gc
import random
import time

import numpy as np
import pytest
import torch

from helpers.engine import executor as executor_module
from helpers.engine.executor import Executor
from helpers.engine.plan import Node, build_tree, outline, walk
from helpers.models import LoadedModel
from helpers.engine import Request, CausalScorer
from helpers.settings import Settings, scorer_arguments

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
    lm = tiny(f"tiny-{arch}")
    scorer = CausalScorer(lm, Settings(progress=False))
    results = scorer.score_texts(SENTENCES)
    for text, r in zip(SENTENCES, results):
        enc = scorer.encode(Request("", text))
        ref = reference_logprobs(lm.model, enc.ids, enc.first)
        assert r.n_tokens == len(ref) == len(enc.ids) - 1
        assert abs(r.total - ref.sum()) < 1e-4, text
        np.testing.assert_allclose(r.logprobs, ref, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_batch_size_and_order_invariance(tiny, arch):
    lm = tiny(f"tiny-{arch}")
    base = [s.total for s in CausalScorer(lm, Settings(progress=False, batch_size=1)).score_texts(SENTENCES)]
    for bs in (3, 16):
        got = [s.total for s in CausalScorer(lm, Settings(progress=False, batch_size=bs)).score_texts(SENTENCES)]
        np.testing.assert_allclose(got, base, atol=1e-4)
    order = list(range(len(SENTENCES)))
    random.Random(0).shuffle(order)
    shuffled = CausalScorer(lm, Settings(progress=False)).score_texts([SENTENCES[i] for i in order])
    np.testing.assert_allclose([shuffled[order.index(i)].total for i in range(len(order))], base, atol=1e-4)
    tiny_budget = CausalScorer(lm, Settings(progress=False, token_budget=40)).score_texts(SENTENCES)
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
    lm = tiny(f"tiny-{arch}")
    rng = random.Random(1)
    contexts = _contexts(rng)
    requests = [Request(c, t) for c in contexts for t in SENTENCES[:8]] + [Request("", t) for t in SENTENCES]
    plain = CausalScorer(lm, Settings(progress=False, share="none"))
    shared = CausalScorer(lm, Settings(progress=False, share=share))
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
    lm = tiny("tiny-llama")
    pairs = [("Who should Derek hug after shocking Richard?", "Who should Derek hug Richard after shocking?"),
             ("The cat sees a dog.", "The cat see a dog."), ("The cat sees a dog.", "The cat sees a dog.")]
    texts = [s for p in pairs for s in p]
    scorer = CausalScorer(lm, Settings(progress=False, share="prefix"))
    for text, r in zip(texts, scorer.score_texts(texts)):
        enc = scorer.encode(Request("", text))
        np.testing.assert_allclose(r.logprobs, reference_logprobs(lm.model, enc.ids, enc.first), atol=1e-4)


@pytest.mark.parametrize("arch,expected", [("llama", "bos:<|begin_of_text|>"), ("qwen2", "eos:<|endoftext|>"),
                                           ("gpt2", "bos:<|endoftext|>")])
def test_exactly_one_document_start_token(tiny, arch, expected):
    lm = tiny(f"tiny-{arch}")
    scorer = CausalScorer(lm, Settings(progress=False))
    assert scorer.start_token == expected
    start = scorer.start_id
    start_text = lm.tokenizer.decode([start])
    for req in [Request("", "The cat."), Request("Answer:", " Yes"), Request(start_text + "The cat.", " Yes")]:
        ids = scorer.encode(req).ids
        assert ids[0] == start
        assert ids.count(start) == 1, (req, ids)
    first = scorer.score_texts(["The cat."])[0]
    assert first.tokens[0] == "The"  # the first word is scored
    if arch == "qwen2":
        assert lm.tokenizer.bos_token is None and start == lm.tokenizer.eos_token_id


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_parity_with_minicons(tiny, arch):
    from minicons.scorer import IncrementalLMScorer

    lm = tiny(f"tiny-{arch}")
    ours = CausalScorer(lm, Settings(progress=False, start="minicons"))
    theirs = IncrementalLMScorer(lm.model, device="cpu", tokenizer=lm.tokenizer)
    texts = SENTENCES[:12]
    expected = theirs.sequence_score(texts, reduction=lambda x: x.sum(0).item())
    got = [s.total for s in ours.score_texts(texts)]
    np.testing.assert_allclose(got, expected, atol=1e-4)


def option_scores(scorer, prompts, options, separate=False):
    """Each prompt's {option: Scored}, each option scored after the prompt as the Yes/No and A/B methods
    read their answers."""
    scored = scorer.score([Request(p, o, separate) for p in prompts for o in options])
    return [dict(zip(options, scored[i * len(options):(i + 1) * len(options)])) for i in range(len(prompts))]


@pytest.mark.parametrize("arch", ARCHS)
def test_answer_readout_equals_reference(tiny, arch):
    lm = tiny(f"tiny-{arch}")
    scorer = CausalScorer(lm, Settings(progress=False))
    prompts = ["Is the following sentence grammatically acceptable? The cat sees a dog.\nAnswer: ",
               "A: The cat.\nB: The cats.\nAnswer:"]
    readouts = option_scores(scorer, prompts, ["Yes", "No", "A"])
    for prompt, r in zip(prompts, readouts):
        for option in ("Yes", "No", "A"):
            enc = scorer.encode(Request(prompt, option))
            ref = reference_logprobs(lm.model, enc.ids, enc.first).sum()
            assert abs(r[option].total - ref) < 1e-4
    # after "Answer: " the trailing space merges into the option: " Yes" is the form scored;
    # after "Answer:" the text is "Answer:A", so the bare form is scored
    assert readouts[0]["Yes"].tokens == ["ĠYes"] and readouts[0]["No"].tokens == ["ĠNo"]
    assert readouts[1]["A"].tokens == ["A"]


@pytest.mark.parametrize("arch", ARCHS)
def test_option_readout_equals_float64_log_softmax_of_full_logits(tiny, arch):
    """Every field of the readout against the model's full logits over the whole text,
    log-softmax in float64, with the token ids built here by hand (start token, prompt's
    own tokens, option's own tokens), for both orders of the options."""
    lm = tiny(f"tiny-{arch}")
    tok = lm.tokenizer
    start = tok.bos_token_id if tok.bos_token is not None else tok.eos_token_id
    prompts = ["Is the following sentence grammatically acceptable? The cat sees a dog.\nAnswer: ",
               "A: The cat.\nB: The cats.\nAnswer:", "他把书看了。 Answer:"]
    options = ["Yes", "No", "A", " a careful doctor"]
    for order in (options, options[::-1]):
        readouts = option_scores(CausalScorer(lm, Settings(progress=False)), prompts, order, separate=True)
        for prompt, readout in zip(prompts, readouts):
            prompt_ids = [start] + tok(prompt, add_special_tokens=False)["input_ids"]
            expected = {}
            for option in order:
                option_ids = tok(option, add_special_tokens=False)["input_ids"]
                with torch.no_grad():
                    logits = lm.model(torch.tensor([prompt_ids + option_ids])).logits[0].double()  # [seq, vocab]
                logprobs = torch.log_softmax(logits, dim=-1)
                answer_at = len(prompt_ids) - 1  # the position that predicts the option's first token
                expected[option] = sum(logprobs[answer_at + j, t].item() for j, t in enumerate(option_ids))
                assert readout[option].tokens == tok.convert_ids_to_tokens(option_ids)
                assert readout[option].n_tokens == len(option_ids)
                assert readout[option].total == pytest.approx(expected[option], abs=1e-4)
                assert float(readout[option].logits[0]) == pytest.approx(logits[answer_at, option_ids[0]].item(), abs=1e-4)
            first, second = sorted(expected.values(), reverse=True)[:2]
            assert first - second > 1e-3  # a clear winner: the choice is decided by the numbers, not by ties
            assert max(order, key=lambda o: readout[o].total) == max(expected, key=expected.get)


def test_single_token_options_need_no_extra_forward(tiny):
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False))
    option_scores(scorer, ["Is it acceptable? The cat sees a dog.\nAnswer:"], ["Yes", "No"])
    assert scorer.forward_calls == 1


def test_seconds_account_each_stage_of_a_run(tiny):
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False))
    assert scorer.seconds == {"encode": 0.0, "plan": 0.0, "rows": 0.0, "head": 0.0}
    start = time.perf_counter()
    scorer.score_texts(["The cat sees a dog.", "The cats sees a dog."])
    wall = time.perf_counter() - start
    first = scorer.seconds
    assert all(v > 0 for v in first.values()) and sum(first.values()) <= wall
    scorer.score_texts(["A dog sleeps."])
    assert all(scorer.seconds[k] > first[k] for k in first)  # they add up across calls


def test_multi_token_option_is_a_continuation(tiny):
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False))
    r = option_scores(scorer, ["The cat sees"], [" a careful doctor"])[0]
    assert r[" a careful doctor"].n_tokens > 1
    enc = scorer.encode(Request("The cat sees", " a careful doctor"))
    assert abs(r[" a careful doctor"].total - reference_logprobs(lm.model, enc.ids, enc.first).sum()) < 1e-4


@pytest.mark.parametrize("bad,error", [
    (Request("ctx", ""), ValueError), (Request("", 3), TypeError), (Request(None, "x"), TypeError),
])
def test_bad_requests_raise_clear_errors(tiny, bad, error):
    lm = tiny("tiny-gpt2")
    with pytest.raises(error, match="target|context"):
        CausalScorer(lm, Settings(progress=False)).score([bad])


def test_non_request_is_refused(tiny):
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False))
    with pytest.raises(TypeError, match="Request"):
        scorer.score(["a plain string"])


def test_option_that_tokenizes_to_nothing(tiny):
    """A normalising tokenizer (e.g. BERT-style) can drop a target entirely: that is an error."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    lm = tiny("tiny-gpt2")
    wp = Tokenizer(models.WordPiece({"[UNK]": 0, "[CLS]": 1, "answer": 2, ":": 3, "yes": 4}, unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    bert_like = PreTrainedTokenizerFast(tokenizer_object=wp, unk_token="[UNK]", eos_token="[CLS]", pad_token="[CLS]")
    scorer = CausalScorer(LoadedModel.wrap(lm.model, bert_like, spec=lm.spec), Settings(progress=False))
    assert scorer.score([Request("answer:", " yes")])[0].tokens == ["yes"]
    with pytest.raises(ValueError, match="tokenizes to no tokens"):
        scorer.score([Request("answer:", "   ")])


def test_too_long_request_is_refused(tiny):
    lm = tiny("tiny-gpt2")
    with pytest.raises(ValueError, match="exceeds the model's 1024 positions"):
        CausalScorer(lm, Settings(progress=False)).score([Request("", "cat " * 1500)])


def test_float64_sums_and_float32_softmax_on_half_model(tiny):
    lm = tiny("tiny-llama")
    half = copy.deepcopy(lm.model).to(torch.bfloat16)
    half_lm = LoadedModel.wrap(half, lm.tokenizer, spec=lm.spec)
    r = CausalScorer(half_lm, Settings(progress=False)).score_texts(["The cat sees a dog."])[0]
    assert r.logprobs.dtype == np.float64
    ref = CausalScorer(lm, Settings(progress=False)).score_texts(["The cat sees a dog."])[0]
    assert abs(r.total - ref.total) < 0.5  # bf16 weights: close, not equal


def test_progress_bar_reports_items(tiny, capsys):
    lm = tiny("tiny-gpt2")
    CausalScorer(lm, Settings(progress=True)).score_texts(SENTENCES[:4], desc="demo")
    err = capsys.readouterr().err
    assert "demo" in err and "seq" in err


def test_tiny_kv_budget_runs_in_chunks_with_the_same_scores(tiny):
    lm = tiny("tiny-llama")
    requests = [Request(c, t) for c in ("The following sentence is acceptable.\n\n", "Here is a sentence.\n\n")
                for t in SENTENCES] + [Request("", t) for t in SENTENCES]
    roomy = CausalScorer(lm, Settings(progress=False)).score(requests, with_context=True)
    # packed rows keep no cache; shared prefixes run level by level (auto may run none on so little)
    tight = CausalScorer(lm, Settings(progress=False, share="tree"), kv_budget_bytes=1, pack=False)
    cramped = tight.score(requests, with_context=True)
    assert tight.forward_calls > 3
    for a, b in zip(roomy, cramped):
        np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5)
        np.testing.assert_allclose(b.context_logprobs, a.context_logprobs, atol=1e-5)


def test_out_of_memory_halves_the_batch_and_goes_on(tiny, monkeypatch):
    lm = tiny("tiny-gpt2")
    expected = [s.total for s in CausalScorer(lm, Settings(progress=False)).score_texts(SENTENCES)]
    scorer = CausalScorer(lm, Settings(progress=False, share="none"))
    real = Executor._forward
    sizes = []

    def flaky(self, batch, state):
        sizes.append(len(batch))
        if len(batch) > 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, batch, state)

    monkeypatch.setattr(Executor, "_forward", flaky)
    got = [s.total for s in scorer.score_texts(SENTENCES)]
    np.testing.assert_allclose(got, expected, atol=1e-4)
    assert max(sizes) > 4 and scorer.token_budget < 2048


def _plan_requests(scorer: CausalScorer) -> list:
    """Sentences alone, after two short shared contexts and after one long one."""
    long_context = " ".join(SENTENCES[:11]) + " "
    contexts = ["", "The following sentence is acceptable.\n\n", "Here is a sentence.\n\n", long_context]
    return scorer.encode_many([Request(c, t) for c in contexts for t in SENTENCES[8:18]])


@pytest.mark.parametrize("share", ["none", "context", "prefix", "tree"])
def test_plan_is_pure_and_holds_every_request_once(tiny, share):
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False))
    encoded = _plan_requests(scorer)
    need_from = [1 if i % 3 == 0 else e.first for i, e in enumerate(encoded)]
    # the plan is made of token ids alone: nodes have no slot for log-probs, caches or a progress bar
    assert set(Node.__slots__) == {"ids", "offset", "parent", "children", "request", "need_from", "lead", "last"}
    roots = build_tree(encoded, need_from, share=share)
    assert outline(roots) == outline(build_tree(list(encoded), list(need_from), share=share))
    assert scorer.forward_calls == 0
    leaves = {}
    for node in walk(roots):
        if node.parent is not None:
            assert node.offset == node.parent.end
        if node.request is not None:
            assert node.request not in leaves
            leaves[node.request] = tuple(i for n in node.path() for i in n.ids)
        served = [n.request for n in walk([node]) if n.request is not None]  # the requests under it
        assert (node.lead, node.last) == (min(served), max(served))
    assert leaves == {i: e.ids for i, e in enumerate(encoded)}
    planned = sum(len(n.ids) for n in walk(roots))
    total = sum(len(e.ids) for e in encoded)
    assert planned == total if share == "none" else planned < total / 2
    # running the plan leaves it as it was, and running it again gives the same numbers bit for bit
    before = outline(roots)
    first = scorer.executor.run(roots, len(encoded))
    assert outline(roots) == before
    second = scorer.executor.run(roots, len(encoded))
    for (lp_a, raw_a), (lp_b, raw_b) in zip(first, second):
        assert lp_a.tobytes() == lp_b.tobytes() and raw_a.tobytes() == raw_b.tobytes()


@pytest.mark.parametrize("share", ["none", "context", "prefix", "tree"])
def test_executor_results_do_not_depend_on_batching_or_budgets(tiny, share):
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False))
    encoded = _plan_requests(scorer)
    need_from = [1 if i % 3 == 0 else e.first for i, e in enumerate(encoded)]
    roots = build_tree(encoded, need_from, share=share)
    base = scorer.executor

    def run(**options):
        settings = dict(token_budget=base.token_budget, kv_budget_bytes=base.kv_budget_bytes, batch_size=None)
        executor = Executor(base.body, base.project, device=base.device, pad_id=base.pad_id,
                            kv_bytes_per_token=base.kv_bytes_per_token, **{**settings, **options})
        return executor.run(roots, len(encoded)), executor.forward_calls

    reference, calls = run()
    for i, (lp, raw) in enumerate(reference):
        assert np.isnan(lp[0]) and np.isfinite(lp[need_from[i]:]).all() and np.isfinite(raw[need_from[i]:]).all()
        if share == "none":  # nothing shared: exactly the needed positions are read
            assert np.isnan(lp[:need_from[i]]).all()
    for options in (dict(batch_size=3), dict(token_budget=40), dict(kv_budget_bytes=1),
                    dict(token_budget=64, batch_size=2, kv_budget_bytes=1)):
        got, got_calls = run(**options)
        # the work really was cut differently (without sharing there are no caches to budget)
        assert got_calls > calls or (share == "none" and set(options) == {"kv_budget_bytes"}), options
        for (lp, raw), (lp_ref, raw_ref) in zip(got, reference):
            np.testing.assert_allclose(lp, lp_ref, atol=1e-5)  # NaN where the reference has NaN
            np.testing.assert_allclose(raw, raw_ref, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_packed_subtrees_equal_the_cached_path_with_fewer_calls(tiny, arch):
    """Tree attention (a shared part and its continuations in one row) gives the scores of
    running each level from the cache, and of the float64 reference."""
    lm = tiny(f"tiny-{arch}")
    packed, cached = CausalScorer(lm, Settings(progress=False), pack_min_stem=0), CausalScorer(lm, Settings(progress=False), pack=False)
    assert packed.pack == "bool" and cached.pack is None  # the tiny models use SDPA
    encoded = _plan_requests(packed)
    need_from = [1 if i % 3 == 0 else e.first for i, e in enumerate(encoded)]
    for share in ("context", "prefix", "tree"):
        roots = build_tree(encoded, need_from, share=share)
        before = packed.tokens_run, cached.tokens_run
        got, expected = packed.executor.run(roots, len(encoded)), cached.executor.run(roots, len(encoded))
        # the dry count of the rows equals what ran
        assert packed.executor.planned_tokens(roots) == packed.tokens_run - before[0]
        assert cached.executor.planned_tokens(roots) == cached.tokens_run - before[1]
        for (lp, raw), (lp_ref, raw_ref) in zip(got, expected):
            np.testing.assert_allclose(lp, lp_ref, atol=1e-5)  # NaN exactly where the cached path has NaN
            np.testing.assert_allclose(raw, raw_ref, atol=1e-4)
    assert packed.forward_calls < cached.forward_calls
    # the same tokens, but a shared part is repeated in each row that holds some of its children
    assert cached.tokens_run <= packed.tokens_run <= 1.1 * cached.tokens_run
    for e, (lp, _) in list(zip(encoded, got))[:6]:
        np.testing.assert_allclose(lp[e.first:], reference_logprobs(lm.model, e.ids, e.first), atol=1e-4)


def test_rows_hold_what_fits_and_repeat_the_shared_part(tiny):
    """A context shared by more continuations than one row holds is repeated in each row;
    with no room for waste, each row holds the context and one continuation."""
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False, share="context"), pack_min_stem=0)  # the context is the only shared part
    latin = [t for t in SENTENCES if t[0].isascii() and t[0].isupper() and len(t.split()) > 2]
    requests = [Request("Here is a sentence.\n\n", t) for t in latin]
    encoded = scorer.encode_many(requests)
    stem = encoded[0].first
    assert all(e.ids[:e.first] == encoded[0].ids[:stem] for e in encoded)  # one shared context
    expected = CausalScorer(lm, Settings(progress=False, share="none")).score(requests)
    for waste, budget in ((0.0, 2048), (scorer.executor.pack_waste, 2048), (1e9, 60)):
        scorer.executor.pack_waste, scorer.executor.token_budget = waste, budget
        before_tokens, before_calls = scorer.tokens_run, scorer.forward_calls
        got = scorer.score(requests)
        for a, b in zip(expected, got):
            np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5)
        tokens = scorer.tokens_run - before_tokens
        targets = sum(len(e.ids) - stem - 1 for e in encoded)  # a sequence's last token is only predicted
        rows = (tokens - targets) // stem  # how many times the shared context ran
        assert (tokens - targets) % stem == 0
        if waste == 0.0:  # no sibling may share a row: the context once per continuation
            assert rows == len(requests)
        elif budget == 60:  # rows of at most 60 tokens
            assert 1 < rows < len(requests)
        else:  # the model's allowance (0.6 x width wasted pairs per token) packs several per row
            assert rows < len(requests) / 2


def test_packed_rows_fill_greedily_up_to_the_budget_and_the_waste(tiny):
    """Each packed row of a deep trie holds its stem and the next children's subtrees in order while
    the row's wasted pairs (counted afresh by ``Unit.waste``) stay within ``pack_waste`` per token and
    its length within the budget; the next subtree would break one of the two (the scheduler counts
    a growing row's waste incrementally)."""
    from helpers.engine.rows import Unit

    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False, share="tree"), pack_min_stem=0)
    words = ["The cat", "The cat sat", "The dog", "A dog ran", "The cat sat on the mat", "The dogs ran home"]
    requests = [Request("", f"{a} {b}.") for a in words for b in ("today", "again", "here and there")]
    roots = scorer.plan(scorer.encode_many(requests))
    ex = scorer.executor
    checked = 0
    for waste, budget in ((0.0, 2048), (2.0, 2048), (8.0, 40), (1e9, 25)):
        ex.pack_waste, ex.token_budget = waste, budget
        for node in walk(roots):
            units = ex._units(node)
            children = [c for c in node.children if c.needs_forward]
            if not children or units[0].cached:
                continue
            subtrees = [[n for n in walk([c]) if n.needs_forward] for c in children]
            at = 0
            for unit in units:
                assert unit.length <= budget and unit.waste() <= waste * unit.length
                taken = 0
                while taken < len(unit.members) - 1:
                    taken += len(subtrees[at])
                    at += 1
                assert taken == len(unit.members) - 1
                if at < len(subtrees) and unit is not units[-1]:
                    grown = Unit(node, unit.members + subtrees[at])
                    assert grown.length > budget or grown.waste() > waste * grown.length
                checked += 1
            assert at == len(subtrees)
    assert checked > 20


def test_packing_with_an_additive_mask_and_beyond_the_token_budget(tiny):
    """Eager attention takes an additive mask; a subtree longer than the token budget runs
    its root alone and its children from the cache; both give the SDPA-packed scores."""
    lm = tiny("tiny-llama")
    eager_model = copy.deepcopy(lm.model)
    eager_model.set_attn_implementation("eager")
    eager = CausalScorer(LoadedModel.wrap(eager_model, lm.tokenizer), Settings(progress=False), pack_min_stem=0)
    assert eager.pack == "additive"
    sdpa = CausalScorer(lm, Settings(progress=False), pack_min_stem=0)
    requests = [Request("Here is a long context that every sentence shares in this test. " * 3, t) for t in SENTENCES]
    expected = sdpa.score(requests, with_context=True)
    small = CausalScorer(lm, Settings(progress=False, token_budget=40), pack_min_stem=0)  # the shared context alone is over 40 tokens
    for scorer in (eager, small):
        for a, b in zip(expected, scorer.score(requests, with_context=True)):
            np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5)
            np.testing.assert_allclose(b.context_logprobs, a.context_logprobs, atol=1e-5)
    assert small.forward_calls > sdpa.forward_calls


def test_attention_that_ignores_a_custom_mask_is_not_packed(tiny):
    """A model whose attention does not honour the 4D mask fails the probe: no packing."""
    from helpers.engine.model_checks import tree_mask_kind

    lm = tiny("tiny-llama")
    body = lm.model.base_model
    assert tree_mask_kind(body, 1, torch.device("cpu")) == "bool"
    real = body.forward

    def ignore_mask(*args, attention_mask=None, **kwargs):
        return real(*args, **kwargs)  # attends to everything before: the packed branches see each other

    body.forward = ignore_mask
    try:
        assert tree_mask_kind(body, 1, torch.device("cpu")) is None
    finally:
        del body.forward


@pytest.mark.parametrize("options", [
    {"share": "prefix", "batch_size": 4},  # pair prefixes and contexts from the cache, levels in separate batches
    {"share": "tree", "pack_min_stem": 0, "token_budget": 48},  # packed rows, many small batches
    {"share": "none", "batch_size": 3},
])
def test_scoring_only_some_requests_gives_the_whole_runs_values_bit_for_bit(tiny, options):
    """``only`` runs the whole plan's batches that the chosen requests need (and those caching
    what they read), so each value equals the whole run's exactly, with fewer forward passes."""
    scorer = CausalScorer(tiny("tiny-llama"), **scorer_arguments(options, Settings(progress=False)))
    requests = [Request(c, t) for c in ("", "Here is a context that some sentences share. ")
                for t in SENTENCES]
    whole = scorer.score(requests, with_context=True)
    whole_calls = scorer.forward_calls
    only = random.Random(7).sample(range(len(requests)), 9)
    part = scorer.score(requests, with_context=True, only=only)
    assert 0 < scorer.forward_calls - whole_calls < whole_calls
    assert len(part) == len(only)
    for i, got in zip(only, part):
        assert got.token_ids == whole[i].token_ids
        assert np.array_equal(got.logprobs, whole[i].logprobs)
        assert np.array_equal(got.context_logprobs, whole[i].context_logprobs, equal_nan=True)
        assert np.array_equal(got.logits, whole[i].logits)
    with pytest.raises(IndexError, match=r"only names request 99, but there are 40 requests"):
        scorer.score(requests, only=[1, 99])


@pytest.mark.parametrize("share", ["none", "prefix", "tree"])
def test_a_sequence_given_twice_runs_once_and_its_copies_tie_exactly(tiny, share):
    """A request repeated (MultiBLiMP's identical pairs) runs once: its copies get the values of the
    run without them, bit for bit, in every share mode, and no token more is fed."""
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False, share=share, batch_size=3))
    requests = [Request("", t) for t in SENTENCES]
    alone = scorer.score(requests)
    tokens = scorer.tokens_run
    twice = scorer.score(requests + [requests[0], requests[3]], only=[0, 3, len(requests), len(requests) + 1])
    assert scorer.tokens_run - tokens <= tokens  # only the batches the four need (under "tree": one row)
    before = scorer.tokens_run
    again = scorer.score(requests + [requests[0], requests[3]])
    assert scorer.tokens_run - before == tokens  # the copies fed no token
    for got, expected in zip([*twice, *again[-2:]], [alone[0], alone[3], alone[0], alone[3], alone[0], alone[3]]):
        assert np.array_equal(got.logprobs, expected.logprobs) and got.token_ids == expected.token_ids
    assert all(np.array_equal(a.logprobs, b.logprobs) for a, b in zip(again, alone))


def test_the_plan_is_built_with_the_cycle_collector_paused_and_leaves_it_as_found(tiny, monkeypatch):
    from helpers.engine import plan as plan_module
    seen = []
    radix = plan_module._radix
    monkeypatch.setattr(plan_module, "_radix", lambda items: seen.append(gc.isenabled()) or radix(items))
    encoded = CausalScorer(tiny("tiny-llama"), Settings(progress=False)).encode_many([Request("", t) for t in SENTENCES])
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            tree = build_tree(encoded, [e.first for e in encoded], share="tree")
            assert gc.isenabled() is enabled and seen[-1] is False
            assert outline(tree) == outline(radix(build_tree(encoded, [e.first for e in encoded], share="none")))
            with pytest.raises(ValueError, match="block must be"):
                build_tree(encoded, [e.first for e in encoded], share="tree", block=0)
            assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_tree_run_is_planned_per_block_so_a_shard_runs_its_own_rows(tiny, monkeypatch):
    """Under "tree" each block of requests gets its own trie: the first block's requests alone
    run exactly that trie's rows (no row shared with later blocks), with the whole run's values."""
    monkeypatch.setattr(executor_module, "BLOCK_REQUESTS", 10)
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False, token_budget=20, share="tree"))  # blocks of max(10, 20 // 2)
    requests = [Request(c, t) for c in ("", "Here is a context that some sentences share. ") for t in SENTENCES]
    encoded = scorer.encode_many(requests)
    roots = scorer.plan(encoded)
    assert scorer.executor.block == 10 and len(requests) == 40
    assert all(r.lead // 10 == r.last // 10 for r in roots)
    assert sorted({r.lead // 10 for r in roots}) == [0, 1, 2, 3]
    # without blocks the trie shares the context across them
    one_trie = build_tree(encoded, [e.first for e in encoded], share="tree")
    assert scorer.executor.planned_tokens(one_trie) < scorer.executor.planned_tokens(roots)
    with pytest.raises(ValueError, match="block must be a whole number >= 1 of requests, got 0"):
        build_tree(encoded, [1] * 40, share="tree", block=0)
    whole = scorer.score(requests)
    before = scorer.tokens_run
    first_block = scorer.score(requests, only=range(10))
    assert scorer.tokens_run - before == scorer.executor.planned_tokens([r for r in roots if r.lead < 10])
    for got, expected in zip(first_block, whole[:10]):
        assert np.array_equal(got.logprobs, expected.logprobs)


def test_segment_blocks_hold_exactly_the_tree_mask():
    """Each block's mask is the dense tree mask (plus cached positions) at its queries and
    keys; no allowed pair falls outside the blocks, whatever the chunk size."""
    from helpers.engine import segment_blocks as sb

    # a stem of 5 tokens after 3 cached positions; two branches; the first branches again
    segments = [(3, 5, None), (8, 4, 0), (12, 3, 1), (12, 2, 1), (8, 6, 0)]
    cached, past, width = 3, 4, 20
    dense = np.zeros((width, past + width), dtype=bool)
    path = {0: [0], 1: [0, 1], 2: [0, 1, 2], 3: [0, 1, 3], 4: [0, 4]}
    cols = [(i, c) for i, (_, n, _) in enumerate(segments) for c in range(n)]
    for q, (i, cq) in enumerate(cols):
        dense[q, :cached] = True
        for k, (j, ck) in enumerate(cols):
            dense[q, past + k] = j in path[i] and segments[j][0] + ck <= segments[i][0] + cq
    # chunks hold whole segments up to `chunk` columns; a longer segment is cut every `chunk` columns
    # from its start, its last piece open to the segments after it
    lengths = {1: [1] * width, 3: [3, 2, 3, 1, 3, 2, 3, 3], 7: [5, 7, 2, 6], 32: [width]}
    for chunk in (1, 3, 7, 32):
        rebuilt = np.zeros_like(dense)
        blocks = sb.row_blocks(2, cached, past, segments, chunk=chunk)
        assert [len(b.queries) for b in blocks] == lengths[chunk]
        for b in blocks:
            assert b.row == 2 and b.mask.any(axis=1).all()
            assert not rebuilt[np.ix_(b.queries, b.keys)].any()  # each query once
            rebuilt[np.ix_(b.queries, b.keys)] = b.mask
        assert np.array_equal(rebuilt, dense), chunk
    # the second leaf (columns 12..13) is a chunk of its own, not cut with its sibling's tokens:
    # it needs no key of the first leaf (columns 9..11), only its own path
    blocks = sb.row_blocks(0, 0, 0, segments, chunk=4)
    assert [(b.queries[0], b.queries[-1] + 1) for b in blocks] == [(0, 4), (4, 5), (5, 9), (9, 12), (12, 14),
                                                                    (14, 18), (18, 20)]
    assert list(blocks[4].keys) == [*range(9), 12, 13] and list(blocks[3].keys) == list(range(12))


@pytest.mark.parametrize("arch", ARCHS)
def test_packed_rows_attend_segment_by_segment(tiny, arch):
    """With SDPA, packed rows run their attention segment by segment
    (helpers.engine.segment_attention): the float64 reference's scores, as with the dense tree
    mask, with no masked pair computed across sentences of a row; a context longer than
    LONG_SEGMENT after the start token runs as one causal block."""
    from helpers.engine import segment_attention as sa
    from helpers.engine.segment_blocks import LONG_SEGMENT

    lm = tiny(f"tiny-{arch}")
    split = CausalScorer(lm, Settings(progress=False, share="tree"), pack_min_stem=0)
    dense = CausalScorer(lm, Settings(progress=False, share="tree"), pack_min_stem=0, attention="dense")
    assert (split.executor.row_attention, dense.executor.row_attention) == ("segments", "dense")
    assert split.executor.pack_waste == float("inf")  # wasted pairs cost nothing: rows as long as the budget
    computed = []
    original = sa.Segments.__init__

    def spy(self, *args):
        original(self, *args)
        computed.append((self.pairs(), self.rows * self.seg * self.width, any(g.causal for g in self.groups)))

    context = "Here is a long context that every sentence in this test shares with the others. " * 8
    requests = [Request(context, t) for t in SENTENCES[:8]] + [Request("", t) for t in SENTENCES]
    try:
        sa.Segments.__init__ = spy
        got = split.score(requests, with_context=True)
    finally:
        sa.Segments.__init__ = original
    assert computed and sum(c for c, _, _ in computed) < 0.5 * sum(d for _, d, _ in computed)
    assert any(causal for _, _, causal in computed)
    assert len(split.encode(requests[0]).ids) - len(split.encode(Request("", SENTENCES[0])).ids) > LONG_SEGMENT
    plain = dense.score(requests, with_context=True)
    for request, a, b in zip(requests, got, plain):
        enc = split.encode(request)
        ref = reference_logprobs(lm.model, enc.ids, enc.first)
        np.testing.assert_allclose(a.logprobs, ref, atol=1e-4)
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
        np.testing.assert_allclose(a.context_logprobs, b.context_logprobs, atol=1e-5)


def test_each_request_finishes_once_when_its_parent_is_repeated_in_rows(tiny):
    """A one-token continuation is read at its parent's last position; a parent repeated in
    several rows still finishes it once (a progress bar counts each request once)."""
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False, share="context", token_budget=60), pack_min_stem=0)
    context = "Here is a sentence that the others continue."
    requests = [Request(context, t) for t in ["Yes", "No"] + SENTENCES[:6]]
    encoded = scorer.encode_many(requests)
    assert sum(len(e.ids) - e.first == 1 for e in encoded) == 2  # " Yes" and " No": one token each
    roots = build_tree(encoded, [e.first for e in encoded], share="context")
    finished = []
    results = scorer.executor.run(roots, len(encoded), on_result=lambda: finished.append(1))
    assert scorer.forward_calls > 1  # the context ran in more than one row
    assert len(finished) == len(requests)
    expected = CausalScorer(lm, Settings(progress=False, share="none")).score(requests)
    for (lp, _), e, want in zip(results, encoded, expected):
        np.testing.assert_allclose(lp[e.first:], want.logprobs, atol=1e-5)


def test_a_sequences_last_token_is_predicted_not_fed(tiny):
    """Sequences run alone feed every token but the last; the log-probs are the reference's."""
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False, share="none"))
    texts = SENTENCES[:6]
    results = scorer.score_texts(texts)
    encoded = scorer.encode_many([Request("", t) for t in texts])
    assert scorer.tokens_run == sum(len(e.ids) - 1 for e in encoded)
    for e, r in zip(encoded, results):
        np.testing.assert_allclose(r.logprobs, reference_logprobs(lm.model, e.ids, e.first), atol=1e-4)


def test_probe_agreement_allows_half_precision_rounding_but_not_a_leak():
    """In bfloat16 a probe's packed row rounds differently from the rows run alone (GPU
    kernels differ by mask); it must still pass, and a leaking mask must still fail."""
    from helpers.engine.model_checks import agrees

    reference = torch.linspace(-40, 40, 70).reshape(7, 10)
    wrong = reference.clone()
    wrong[5:] += 3.0  # what the right branch gives when it sees the left one
    rounded = reference + 0.25 * torch.sign(torch.sin(reference))  # bf16 rounding at |x| ~ 40
    assert agrees(rounded, reference, wrong, torch.bfloat16)
    assert not agrees(wrong, reference, wrong, torch.bfloat16)
    assert not agrees(reference + 0.5 * (wrong - reference), reference, wrong, torch.bfloat16)
    assert not agrees(rounded, reference, wrong, torch.float32)  # float32 keeps its 1e-3 tolerance
    assert agrees(reference + 1e-5, reference, wrong, torch.float32)


def test_unpadded_rows_never_share_a_batch_with_a_packed_row():
    """Half precision on the CPU (``unpadded``): a plain row shares its batch only with plain rows of
    its length and cached width, a packed row only with packed rows; without it, they mix (one
    length-sorted batch within the budget)."""
    from helpers.engine.plan import Node
    from helpers.engine.rows import Unit
    from helpers.engine.schedule import Scheduling

    def node(n: int, offset: int = 1, request: int = 0, parent: Node | None = None) -> Node:
        made = Node(list(range(n)), offset, request)
        if parent is not None:
            made.parent = parent
            parent.children.append(made)
        return made

    root = node(1, offset=0)
    packed = Unit(root, [root, node(4, request=1, parent=root), node(4, request=2, parent=root)])
    plain = [Unit(leaf, [leaf]) for leaf in (node(5, request=3), node(5, request=4), node(7, request=5))]

    class Budgets(Scheduling):
        token_budget, batch_size, block, call_tokens = 10_000, None, 10**6, 64.0

    def batches(unpadded: bool, call_tokens: float = 64.0) -> list[list[str]]:
        schedule = Budgets()
        schedule.unpadded, schedule.call_tokens = unpadded, call_tokens
        return [sorted(("packed" if u.packed else f"plain{u.length}") for u in b)
                for b in schedule._batches([packed, *plain])]

    # a leaf's last token is only predicted, never fed: rows of 4, 4 and 6 tokens, the packed one of 7
    assert batches(False) == [["packed", "plain4", "plain4", "plain6"]]
    assert sorted(batches(True)) == [["packed"], ["plain4", "plain4"], ["plain6"]]
    # where a forward call costs as little as 2 tokens, the 6-token row's padding of the 4-token
    # rows (4 positions, over 10% of 18) costs more than another call: the batch ends before it
    assert batches(False, call_tokens=2) == [["plain4", "plain4"], ["packed", "plain6"]]


def test_the_executor_weighs_padding_against_the_models_forward_call_cost(tiny):
    """The executor's ``call_tokens`` is a forward call's cost in tokens' time from the model's
    shape and its device class's shipped costs (the cost model's call over token coefficient)."""
    from helpers.engine import cost_model

    lm = tiny("tiny-llama")
    coefficients = cost_model.shipped(lm.model, "cpu")
    executor = CausalScorer(lm, Settings(progress=False)).executor
    assert executor.call_tokens == pytest.approx(coefficients.call / coefficients.token, rel=1e-12)
    assert executor.call_tokens > 64  # a tiny model's call costs many of its cheap tokens
