"""Whitespace at the boundary between context and target: a context's trailing spaces are
scored with the target (lm-evaluation-harness's rule), line breaks stay in the context, and
``separate=True`` keeps the prompt's own space token, as a constrained decoder sees it.

Checked on two tokenizers built here that split a bare space off a word the vocabulary lacks
in its spaced form, as SentencePiece tokenizers (Llama 2, Mistral, Gemma) often do: a byte-level
BPE without the merge "Ġ" + "icing" (GPT-2's layout: " icing" -> "Ġ", "icing") and a Unigram
with a metaspace and no piece "▁icing" (" icing" -> "▁", "icing"). Log-probs are checked
against a float64 forward pass of the whole sequence.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from helpers.engine import CausalScorer, Request
from helpers.engine.encoding import Encoder, target_start
from helpers.engine.seq2seq_encoding import Seq2SeqEncoder
from helpers.methods import PassContext
from helpers.methods.hu_levy import WORD_COMPARISON
from helpers.methods.hu_levy_prompt_types import prompts_for
from helpers.models import LoadedModel
from helpers.settings import Settings

MERGES = [("i", "n"), ("in", "g"), ("i", "c"), ("ic", "ing"), ("c", "a"), ("ca", "k"), ("cak", "e"), ("Ġ", "cake"),
          ("t", "h"), ("th", "e"), ("Ġ", "the"), ("Ġ", "Ġ")]
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789:?.,"


def bpe_tokenizer() -> PreTrainedTokenizerFast:
    """Byte-level BPE (GPT-2's alphabet) that knows "Ġcake" and "icing" but not "Ġicing"."""
    vocab = {"<|endoftext|>": 0}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    for a, b in MERGES:
        vocab.setdefault(a + b, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=MERGES))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>")


def metaspace_tokenizer() -> PreTrainedTokenizerFast:
    """A SentencePiece-like Unigram (metaspace, a prefix space on the first word only, as
    Llama 2's) with pieces "▁the", "▁cake" and "icing" but no "▁icing"."""
    pieces = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("▁", -2.0), ("▁the", -1.0), ("▁cake", -1.0),
              ("icing", -1.0), ("\n", -3.0), ("\t", -3.0)]
    pieces += [(c, -5.0) for c in LETTERS] + [("▁" + c, -6.0) for c in LETTERS]
    tok = Tokenizer(models.Unigram(pieces, unk_id=0, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


TOKENIZERS = {"bpe": bpe_tokenizer, "metaspace": metaspace_tokenizer}
BARE = {"bpe": "Ġ", "metaspace": "▁"}


def random_lm(kind: str):
    """A random GPT-2 of two layers over the ``kind`` tokenizer, its float64 copy, and the kind."""
    tok = TOKENIZERS[kind]()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tok), n_layer=2, n_embd=32, n_head=2, n_positions=256,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, initializer_range=0.5)
    model = GPT2LMHeadModel(config).eval()
    m64 = copy.deepcopy(model).double()
    m64.set_attn_implementation("eager")
    return LoadedModel.wrap(model, tok, name=f"boundary-{kind}"), m64, kind


@pytest.fixture(scope="module", params=sorted(TOKENIZERS))
def lm(request):
    return random_lm(request.param)


def reference(m64, ids: list[int]) -> np.ndarray:
    """log p(ids[i] | ids[:i]) for every i >= 1, float64."""
    with torch.no_grad():
        lp = torch.log_softmax(m64(torch.tensor([ids])).logits[0].double(), -1)
    return np.array([lp[i - 1, ids[i]].item() for i in range(1, len(ids))])


def test_the_tokenizers_split_a_bare_space(lm):
    loaded, _, kind = lm
    tokens = loaded.tokenizer.convert_ids_to_tokens(loaded.tokenizer("the icing the cake")["input_ids"])
    assert tokens[-4:-2] == [BARE[kind], "icing"] and tokens[-1] in ("Ġcake", "▁cake")


def test_a_trailing_space_is_scored_with_the_target(lm):
    loaded, m64, kind = lm
    scorer = CausalScorer(loaded, Settings(progress=False))
    spaced, moved = scorer.score([Request("the ", "icing"), Request("the", " icing")])
    assert spaced.tokens == moved.tokens == [BARE[kind], "icing"]
    ids = [scorer.start_id] + loaded.tokenizer("the icing", add_special_tokens=False)["input_ids"]
    expected = reference(m64, ids)[-2:]  # the bare space and "icing"
    np.testing.assert_allclose(spaced.logprobs, expected, atol=1e-5)
    np.testing.assert_allclose(moved.logprobs, expected, atol=1e-5)
    assert spaced.offsets == [(3, 4), (4, 9)]  # in context + target: the space, then the word
    # a word whose spaced form is one token reads the same with or without the move
    cake = scorer.score([Request("the ", "cake")])[0]
    assert cake.tokens == [BARE[kind] + "cake"]
    ids = [scorer.start_id] + loaded.tokenizer("the cake", add_special_tokens=False)["input_ids"]
    assert cake.total == pytest.approx(reference(m64, ids)[-1], abs=1e-5)
    # several spaces, and a tab: all of them belong to the target
    assert scorer.score([Request("the \t ", "icing")])[0].n_tokens > 2


def test_line_breaks_stay_in_the_context(lm):
    loaded, m64, kind = lm
    scorer = CausalScorer(loaded, Settings(progress=False))
    after_break, spaces_after_break = scorer.score([Request("the:\n\n", "icing"), Request("the:\n ", "icing")])
    assert after_break.tokens == ["icing"]
    assert spaces_after_break.tokens == [BARE[kind], "icing"]  # the space after the line break moves, not "\n"
    ids = [scorer.start_id] + loaded.tokenizer("the:\n\nicing", add_special_tokens=False)["input_ids"]
    assert after_break.total == pytest.approx(reference(m64, ids)[-1], abs=1e-5)
    assert target_start(Request("a \n", "b")) == 3 and target_start(Request("a\n \t", "b")) == 2


def test_separate_keeps_the_prompts_space_token(lm):
    loaded, m64, kind = lm
    scorer = CausalScorer(loaded, Settings(progress=False))
    prompt = "the answer: "
    readout = dict(zip(("icing", "cake"), scorer.score([Request(prompt, o, separate=True) for o in ("icing", "cake")])))
    tok = loaded.tokenizer
    head = [scorer.start_id] + tok(prompt, add_special_tokens=False)["input_ids"]
    assert tok.convert_ids_to_tokens(head[-1]) == BARE[kind]  # the prompt's own trailing space token
    for option in ("icing", "cake"):
        option_ids = tok(option, add_special_tokens=False)["input_ids"]
        expected = reference(m64, head + option_ids)[len(head) - 1:].sum()
        assert readout[option].total == pytest.approx(expected, abs=1e-5)
        assert readout[option].tokens == tok.convert_ids_to_tokens(option_ids)
    assert target_start(Request(prompt, "icing", separate=True)) == len(prompt)


def test_hu_levy_prompts_and_direct_score_the_same_word_form():
    """DTFit's case: a prompt ending in "the " and Direct's " icing" after "the" score the
    same two tokens (before the rule, the prompt's bare space was dropped). The byte-level
    tokenizer: the prompt's text has characters the Unigram lacks."""
    loaded, m64, _ = random_lm("bpe")
    scorer = CausalScorer(loaded, Settings(progress=False))
    item = {"prefix": "the confectioner spread the", "good_continuation": "icing", "bad_continuation": "cake"}
    pass_context = PassContext(scorer, "en")
    direct, simple = prompts_for("word_comparison", "en", ["direct", "metaQuestionSimple"])
    (icing, cake), prompted = (scorer.score(WORD_COMPARISON.requests(item, t, "", pass_context, None))
                               for t in (direct, simple))
    # both orders of the words in the prompt: good (icing), bad (cake), good, bad
    assert icing.tokens == prompted[0].tokens == prompted[2].tokens == ["Ġ", "icing"]
    assert cake.tokens == prompted[1].tokens == prompted[3].tokens == ["Ġcake"]
    for request, scored in zip(WORD_COMPARISON.requests(item, simple, "", pass_context, None), prompted):
        text = request.context + request.target
        ids = [scorer.start_id] + loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert scored.total == pytest.approx(reference(m64, ids)[-scored.n_tokens:].sum(), abs=1e-5)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(words=st.lists(st.sampled_from(["the", "icing", "cake", "a", "1", ":", "?", "b.c"]), min_size=1, max_size=6),
       spaces=st.sampled_from([" ", "  ", "\t", " \t "]), target=st.sampled_from(["icing", "cake", "1", "the icing"]))
def test_where_the_spaces_are_written_does_not_matter(words, spaces, target):
    """Spaces at the end of the context or at the start of the target: the same ids, the same
    first scored token, for both tokenizers, in the causal and the encoder-decoder encoders."""
    context = " ".join(words)
    for make in TOKENIZERS.values():
        tok = make()
        causal = Encoder(tok)
        a, b = causal.encode_many([Request(context + spaces, target), Request(context, spaces + target)])
        assert a == b
        assert a.offsets[a.first][0] == len(context)  # the first scored token begins with the spaces
        s2s = Seq2SeqEncoder(tok)
        c, d = s2s.encode_many([Request(context + spaces, target), Request(context, spaces + target)])
        assert (c.decoder_ids, c.first) == (d.decoder_ids, d.first)
        assert c.first == a.first - 1  # the same boundary, without the causal start token


def test_seq2seq_decoder_context_follows_the_rule():
    tok = metaspace_tokenizer()
    enc = Seq2SeqEncoder(tok)
    spaced, broken, apart = enc.encode_many([Request("the ", "icing"), Request("the\n", "icing"),
                                             Request("the ", "icing", separate=True)])
    assert tok.convert_ids_to_tokens(spaced.decoder_ids[spaced.first:spaced.end]) == ["▁", "icing"]
    assert tok.convert_ids_to_tokens(broken.decoder_ids[broken.first:broken.end]) == ["icing"]
    assert tok.convert_ids_to_tokens(apart.decoder_ids[:apart.first]) == ["▁the", "▁"]  # the prompt keeps its space
