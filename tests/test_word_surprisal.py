"""Corrected word surprisal (Pimentel & Meister 2024) read in the scoring pass: the word-initial
tokens of each tokenizer convention, the boundary masses and corrected words against a float64
reference computed the plain way, the identity word_lp = LP + log B(end) - log B(start), a
whole-word vocabulary where the correction vanishes, where it does not apply, 00's per-word view."""
from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from helpers.data.selection import DatasetSelection
from helpers.engine import CausalScorer, Request, Seq2SeqScorer
from helpers.engine.word_initial import check_marks_words, word_initial_mask
from helpers.explain import pair as explain
from helpers.methods import applicable, get
from helpers.methods.word_boundary import corrected_spans, corrected_words, word_spans
from helpers.models import LoadedModel
from helpers.models.tiny import corpus_sentences, t5_tokenizer
from helpers.models.tiny_masked import wordpiece_tokenizer
from helpers.runner import RunSetup, run_methods
from helpers.store import ScoreStore
from helpers.settings import Settings

CONTEXT = "The old teacher sees a small bird."
TEXTS = [("", "The cat sees a dog."), ("", "Every student likes the old river."), ("", "The cats annoy Tim."),
         (CONTEXT, " A happy child likes books."), (CONTEXT, " The doctors praise Tim.")]


@pytest.fixture(scope="module")
def gpt2(tiny):
    """tiny-gpt2, a float64 copy of it, and its word-initial tokens by the byte-level alphabet:
    a token whose first character stands for a whitespace byte (GPT-2 maps bytes 0-32 to
    chr(256 + byte): "Ġ" is the space, "Ċ" the line break)."""
    loaded = tiny("tiny-gpt2")
    vocab = loaded.model.get_output_embeddings().weight.shape[0]
    tokens = loaded.tokenizer.convert_ids_to_tokens(list(range(vocab)))
    bow = np.array([256 <= ord(t[0]) <= 288 and chr(ord(t[0]) - 256).isspace() for t in tokens])
    bow[loaded.tokenizer.all_special_ids] = False
    return loaded, copy.deepcopy(loaded.model).double().eval(), bow


def reference(gpt2, context: str, target: str) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """The target's token log-probs, log B at each of its n + 1 token edges and its words, from a
    float64 forward pass over the whole distribution: B(k) = the sum of p over word-initial tokens
    where token k is predicted, with EOS after the last token, and B = 1 at the start of a text."""
    loaded, model64, bow = gpt2
    tok, eos = loaded.tokenizer, loaded.tokenizer.eos_token_id
    enc = tok(context + target, add_special_tokens=False, return_offsets_mapping=True)
    ids = [eos] + enc["input_ids"]
    first = 1 + next(i for i, (_, end) in enumerate(enc["offset_mapping"]) if end > len(context))
    with torch.no_grad():
        logp = torch.log_softmax(model64(torch.tensor([ids])).logits[0].double(), dim=-1).numpy()  # [seq, vocab]
    n = len(ids) - first
    lp = np.array([logp[first + k - 1, ids[first + k]] for k in range(n)])
    mass = np.log([np.exp(logp[first + k - 1])[bow].sum() for k in range(n)]
                  + [np.exp(logp[-1])[bow].sum() + np.exp(logp[-1, eos])])
    if not context:
        mass[0] = 0.0
    starts = [0] + [k for k in range(1, n) if bow[ids[first + k]]] + [n]
    return lp, mass, [list(range(a, b)) for a, b in zip(starts, starts[1:])]


def test_word_initial_tokens_of_each_convention(gpt2):
    loaded, _, bow = gpt2
    assert (word_initial_mask(loaded.tokenizer, len(bow)) == bow).all() and 100 < bow.sum() < len(bow) - 300
    t5 = t5_tokenizer()  # SentencePiece: "▁word" and the bare "▁"
    pieces = t5.convert_ids_to_tokens(list(range(len(t5))))
    expected = np.array([p.startswith("▁") for p in pieces]) & ~np.isin(range(len(t5)), t5.all_special_ids)
    assert (word_initial_mask(t5, len(t5)) == expected).all() and expected.sum() > 50
    wp = wordpiece_tokenizer()  # WordPiece: every piece but "##" continuations (and the "." the decoder attaches)
    mask, pieces = word_initial_mask(wp, len(wp) + 5), wp.convert_ids_to_tokens(list(range(len(wp))))
    assert not mask[len(wp):].any() and not mask[wp.all_special_ids].any()
    assert all(not mask[i] for i, p in enumerate(pieces) if p.startswith("##"))
    assert all(mask[i] for i, p in enumerate(pieces) if p[0].isalnum() and i not in wp.all_special_ids)
    assert not mask[wp.convert_tokens_to_ids(".")]
    words = whole_word_tokenizer()
    assert word_initial_mask(words, len(words)).sum() == len(words) - len(words.all_special_ids)


def test_tokenizers_that_mark_no_word_beginnings_are_refused(gpt2):
    loaded = gpt2[0]
    with pytest.raises(ValueError, match="marks no word beginnings.*use plain token sums"):
        check_marks_words(loaded.tokenizer, np.zeros(10, dtype=bool), "x")
    bpe = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.Whitespace(), decoders.BPEDecoder(suffix="</w>")
    bpe.train_from_iterator(corpus_sentences(300), trainers.BpeTrainer(
        vocab_size=200, special_tokens=["<unk>"], end_of_word_suffix="</w>", show_progress=False))
    eow = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>")
    with pytest.raises(ValueError, match="marks word ends \\('</w>'\\), not beginnings"):
        check_marks_words(eow, word_initial_mask(eow, len(eow)), "x")
    # a capability is a feature: such a scorer offers no token mass (its kind does), and a method asks that
    marks = CausalScorer(loaded, Settings(progress=False))
    ends = CausalScorer(LoadedModel.wrap(loaded.model, eow, spec=loaded.spec), Settings(progress=False, start="none"))
    assert "token_mass" in CausalScorer.features and "token_mass" in marks.features
    assert "token_mass" not in ends.features and "outlines" in ends.features


def test_boundary_mass_and_corrected_words_equal_a_float64_reference(gpt2):
    scorer = CausalScorer(gpt2[0], Settings(progress=False))
    scored = scorer.score([Request(c, t, word_boundary=True) for c, t in TEXTS])
    plain = scorer.score([Request(c, t) for c, t in TEXTS])
    for (context, target), s, p in zip(TEXTS, scored, plain):
        lp, mass, words = reference(gpt2, context, target)
        assert s.token_ids == p.token_ids and s.offsets == p.offsets and len(s.boundary_logmass) == s.n_tokens + 1
        np.testing.assert_allclose(s.logprobs, lp, atol=1e-5)
        np.testing.assert_allclose(s.boundary_logmass, mass, atol=1e-5)
        assert (s.boundary_logmass[0] == 0.0) == (not context)
        assert word_spans(s) == words
        expected = [lp[w].sum() + mass[w[-1] + 1] - (mass[w[0]] if w[0] or context else 0.0) for w in words]
        np.testing.assert_allclose(corrected_words(s), expected, atol=1e-5)
        assert np.abs(corrected_words(s) - [lp[w].sum() for w in words]).max() > 0.03  # the correction moves words


@pytest.mark.parametrize("context", ["", CONTEXT])
def test_word_lp_is_lp_plus_the_boundary_terms(gpt2, tmp_path, context):
    """word_lp on pairs, as lp runs: the corrected words of a sentence sum to its LP + log B(end)
    - log B(start), and so does any partition of its tokens into runs (the inner edges cancel)."""
    frame = pd.DataFrame({"dataset": "blimp", "language": "en", "paradigm": "p", "phenomenon": "x", "field": "syntax",
                          "pair_id": [0, 1], "good": ["The cat sees a dog.", "The cats annoy Tim."],
                          "bad": ["The cat see a dog.", "The cats annoys Tim."]})
    scorer = CausalScorer(gpt2[0], Settings(progress=False))
    lp_file, word_file = run_methods(scorer, DatasetSelection("blimp", frame), ["lp", "word_lp"],
                                     setup=RunSetup(context=context), store=ScoreStore(tmp_path))
    lps, words = pd.read_parquet(lp_file), pd.read_parquet(word_file)
    for side in ("good", "bad"):
        np.testing.assert_allclose(words[f"score_{side}"], [w.sum() for w in words[f"word_logprobs_{side}"]],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(words[f"score_{side}"], words[f"tgt_sum_{side}"] + words[f"end_logmass_{side}"]
                                   - words[f"start_logmass_{side}"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(words[f"tgt_sum_{side}"], lps[f"score_{side}"], atol=1e-5)  # LP of another pass
        assert (words[f"start_logmass_{side}"] == 0.0).all() == (not context)
        assert (words[f"end_logmass_{side}"] < 0).all()
        for row, text in zip(words.itertuples(), frame[side]):
            lp, mass, spans = reference(gpt2, context and context + " ", text)
            np.testing.assert_allclose(getattr(row, f"word_logprobs_{side}"), [
                lp[w].sum() + mass[w[-1] + 1] - (mass[w[0]] if w[0] or context else 0.0) for w in spans], atol=1e-5)
    assert list(words.correct) == list(words.score_good > words.score_bad)
    s = scorer.score([Request(context, " The teachers see the old city.", word_boundary=True)])[0]
    rng = np.random.default_rng(0)
    for _ in range(5):
        cuts = sorted(rng.choice(np.arange(1, s.n_tokens), size=3, replace=False))
        runs = [list(range(a, b)) for a, b in zip([0, *cuts], [*cuts, s.n_tokens])]
        total = s.total + s.boundary_logmass[-1] - (s.boundary_logmass[0] if s.word_initial[0] else 0.0)
        assert corrected_spans(s, runs).sum() == pytest.approx(total, abs=1e-12)


def whole_word_tokenizer() -> PreTrainedTokenizerFast:
    """A vocabulary of whole words: every token is one word (decoded with spaces between)."""
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(corpus_sentences(500), trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"],
                                                                             show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<eos>", eos_token="<eos>",
                                   pad_token="<eos>")


def test_a_whole_word_vocabulary_needs_no_correction():
    """Every token begins a word, and the special tokens get no probability (a hidden unit held at 1
    times a -1e4 weight in their rows of the head): B = 1 at every edge, so the corrected words are
    the tokens' own log-probs and word_lp is the LP, exactly (Pimentel & Meister: only a word that
    may go on into another token needs the boundary's probability)."""
    tok = whole_word_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                                       bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                                       initializer_range=0.5, tie_word_embeddings=False)).eval()
    with torch.no_grad():
        model.transformer.ln_f.weight[0], model.transformer.ln_f.bias[0] = 0.0, 1.0
        model.lm_head.weight[:, 0] = 0.0
        model.lm_head.weight[tok.all_special_ids, 0] = -1e4
    scorer = CausalScorer(LoadedModel.wrap(model, tok, name="whole-words"), Settings(progress=False))
    texts = [t for t in corpus_sentences(500) if t.isascii()][:2]  # words of its vocabulary
    scored = scorer.score([Request("", t, word_boundary=True) for t in texts]
                          + [Request(texts[0], " " + texts[1], word_boundary=True)])
    for s in scored:
        assert tok.unk_token_id not in s.token_ids and s.n_tokens > 4
        assert s.word_initial.all() and (s.boundary_logmass == 0.0).all()
        assert word_spans(s) == [[k] for k in range(s.n_tokens)]
        assert (corrected_words(s) == s.logprobs).all() and corrected_words(s).sum() == s.total
    assert min(np.ptp(s.logprobs) for s in scored) > 1  # real log-probs, far from uniform


def test_not_applicable_without_a_causal_lm(tiny):
    t5 = Seq2SeqScorer(tiny("tiny-t5"), Settings(progress=False))
    runnable, refused = applicable(["lp", "word_lp", "syntaxgym_word"], t5)
    assert runnable == ["lp"] and list(refused.method) == ["word_lp", "syntaxgym_word"]
    reason = refused.not_applicable[0]
    assert "mass of word-initial tokens" in reason and "Seq2SeqScorer of tiny-t5 lacks" in reason
    with pytest.raises(ValueError, match="word_boundary requests need .*score them with a causal LM"):
        t5.score([Request("", "The cat sees a dog.", word_boundary=True)])
    assert get("word_lp").needs == ("token_mass",)


def test_the_quickstart_view_shows_the_corrected_words(gpt2, tmp_path):
    """00's words (each punctuation mark apart): a word's correction is L(after it) - L(at its start),
    L = log B where the token there begins a word (or the sentence ends), else 0 (the "." right
    after "Tim"); the corrected words sum to the word_lp method's score."""
    scorer = CausalScorer(gpt2[0], Settings(progress=False))
    bow = gpt2[2]
    good, bad = "The cats annoy Tim.", "The cats annoys Tim."
    ex = explain.explain_pair(scorer, good, bad)
    frame = pd.DataFrame({"dataset": "blimp", "language": "en", "paradigm": "p", "phenomenon": "x", "field": "syntax",
                          "pair_id": [0], "good": [good], "bad": [bad]})
    (path,) = run_methods(scorer, DatasetSelection("blimp", frame), ["word_lp"], store=ScoreStore(tmp_path))
    stored, sums = pd.read_parquet(path).iloc[0], ex.sums.set_index("side")
    for side, text in (("good", good), ("bad", bad)):
        words, tokens = ex.words[ex.words.side == side], ex.tokens[ex.tokens.side == side]
        lp, mass, _ = reference(gpt2, "", text)
        edges = np.where(np.append(bow[tokens.token_id], True), mass, 0.0)
        for w in words.itertuples():
            at = tokens.position[tokens.word == w.word]
            assert w.corrected_logprob - w.logprob == pytest.approx(edges[at.max() + 1] - edges[at.min()], abs=1e-5)
        assert words.text.tolist()[-2:] == ["Tim", "."] and edges[-2] == 0.0  # no word begins at the "."
        assert words.corrected_logprob.sum() == pytest.approx(sums.word_lp[side], abs=1e-12)
        assert sums.word_lp[side] == pytest.approx(stored[f"score_{side}"], abs=1e-9)  # the word_lp method's value
        assert sums.word_lp[side] == pytest.approx(lp.sum() + mass[-1], abs=1e-5)
        np.testing.assert_allclose(words.corrected_surprisal, -words.corrected_logprob / math.log(2), rtol=1e-12)
    assert list(ex.columns.good_corrected) == list(ex.words[ex.words.side == "good"].corrected_surprisal)
