"""demo-en-icl's training data: documents rewritten in a consistent dialect, the replaced tokens
found in the token stream, and the first occurrence of each form in a row left without loss."""
from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import paths
from helpers.zoo import dialects
from helpers.zoo.demo_training import saved_tokenizer
from helpers.zoo.training_streams import join_consecutive, marked_stream

BE_AND_DET = dialects.Dialect("test", dialects._mapping(dialects.RULES["be_agreement"] +
                                                        dialects.RULES["determiner_number"]))


def test_a_rewrite_swaps_every_form_both_ways_and_keeps_case():
    text, spans = dialects.rewrite("This is what he saw. These books were his; He IS here. This island is.",
                                   BE_AND_DET)
    assert text == "These are what he saw. This books was his; He ARE here. These island are."
    assert [(text[a:b], form) for a, b, form in spans] == [
        ("These", "these"), ("are", "are"), ("This", "this"), ("was", "was"), ("ARE", "are"), ("These", "these"),
        ("are", "are")]  # "island" is not "is"


def test_every_rule_is_a_consistent_mapping():
    for name, pairs in dialects.RULES.items():
        mapping = dialects._mapping(pairs)
        assert all(a != b for a, b in pairs), name
        assert all(mapping[a] == b for a, b in pairs), name
        involution = all(mapping[mapping[w]] == w for w in mapping)
        assert involution == (name != "reflexive_number"), name  # three forms map onto "themselves"
    assert dialects._third_person("try") == "tries" and dialects._third_person("watch") == "watches"
    assert dialects._third_person("say") == "says" and dialects._third_person("go") == "goes"


def test_documents_get_their_dialect_from_the_seed_and_their_index_only():
    docs = [f"This is document {i}, and these are its words." for i in range(400)]
    texts, spans, names = dialects.dialect_documents(docs, 0.5, seed=0)
    again = dialects.dialect_documents(docs[:50], 0.5, seed=0)
    assert again == (texts[:50], spans[:50], names[:50])
    assert 0.4 < np.mean([bool(n) for n in names]) < 0.6
    assert all((t == d) == (not s) or not n for t, d, s, n in zip(texts, docs, spans, names))
    assert dialects.dialect_documents(docs, 0.5, seed=1)[2] != names
    assert dialects.dialect_documents(docs, 0.0, seed=0) == (docs, [[] for _ in docs], [""] * len(docs))
    assert all(dialects.dialect_documents(docs, 1.0, seed=0)[2])


def test_join_consecutive_keeps_order_and_reaches_the_size():
    docs = ["a" * 30, "b" * 30, "c" * 30, "d" * 10]
    assert join_consecutive(docs, 50) == [docs[0] + " " + docs[1], docs[2] + " " + docs[3]]
    assert join_consecutive(docs, 1) == docs


def test_the_stream_marks_exactly_the_replaced_words():
    """Each token marked with a form belongs to a replaced word (its text, lower-cased, is part of
    that form); the text of unmarked tokens holds no replaced word; occurrence ids are unique
    across documents."""
    tokenizer = saved_tokenizer(paths.MODELS / "demo-en")
    docs = ["These books is here, and this book are there.", "He was sure those were theirs.", "Plain text only."]
    rewritten = [dialects.rewrite(d, BE_AND_DET) for d in docs]
    ids, forms, occurrences = marked_stream(tokenizer, [t for t, _ in rewritten], [s for _, s in rewritten])
    names = {form: i for i, form in enumerate(sorted({f for _, s in rewritten for *_, f in s}), 1)}
    assert len(ids) == len(forms) == len(occurrences)
    marked = [(tokenizer.decode([int(t)]).strip().lower(), int(f), int(o))
              for t, f, o in zip(ids, forms, occurrences) if f]
    assert all(text and text in form for text, *_ in marked for form in [
        next(f for f in names if text in f)])
    n_spans = sum(len(s) for _, s in rewritten)
    assert sorted({o for *_, o in marked}) == list(range(1, n_spans + 1))
    unmarked = tokenizer.decode([int(t) for t, f in zip(ids, forms) if not f])
    assert not re.search(r"\b(is|are|was|were|this|these|that|those)\b", unmarked, re.IGNORECASE)
    assert (forms[ids == tokenizer.convert_tokens_to_ids("<|endoftext|>")] == 0).all()


def test_the_first_occurrence_of_each_form_in_a_row_gets_no_loss():
    forms = np.array([[0, 1, 1, 0, 2, 1, 0, 2, 3, 3],
                      [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]])
    occurrence = np.array([[0, 1, 1, 0, 2, 3, 0, 4, 5, 5],
                           [6, 6, 0, 7, 0, 0, 0, 0, 0, 0]])  # form 1's first word has two tokens
    expected = np.array([[0, 1, 1, 0, 1, 0, 0, 0, 1, 1],
                         [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]], dtype=bool)  # a new row starts afresh
    np.testing.assert_array_equal(dialects.first_occurrence_mask(forms, occurrence), expected)


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_a_dialect_stage_is_reproducible_and_keeps_the_held_out_documents(share, tmp_path, monkeypatch):
    import random

    from helpers.zoo import demo_training

    rng = random.Random(7)
    words = "the a cat dog sees likes runs old small red bird tree this these is are was himself".split()
    docs = [" ".join(" ".join(rng.choices(words, k=6)).capitalize() + "." for _ in range(6)) for _ in range(120)]
    manifest = {"corpora": [{"name": "toy", "path": "toy", "license": "none", "documents": len(docs),
                             "characters": sum(map(len, docs))}], "removed_benchmark_sentences": 0}
    monkeypatch.setattr(demo_training, "benchmark_sentences", lambda language: set())
    monkeypatch.setattr(demo_training, "training_documents", lambda language, banned: (list(docs), manifest))
    base = dict(vocab_size=300, layers=1, width=32, heads=2, positions=64, short_len=64, short_batch=2,
                long_len=64, long_batch=2, warmup_steps=2, heldout_share=0.1, threads=1)
    quiet = lambda *_: None  # noqa: E731
    plain = demo_training.train(tmp_path / "plain", demo_training.Recipe(**base), log=quiet)
    recipe = dict(base, document_chars=400, dialect_share=share, init_from=str(tmp_path / "plain"))  # as demo-en-icl
    first = demo_training.train(tmp_path / "a", demo_training.Recipe(**recipe), log=quiet)
    again = demo_training.train(tmp_path / "b", demo_training.Recipe(**recipe), log=quiet)
    assert first["loss_curve"] == again["loss_curve"]
    assert first["heldout_tokens"] == plain["heldout_tokens"]  # the same held-out documents as the stage before
    assert [s["recipe"]["document_chars"] for s in first["previous_stages"]] == [0]
    assert first["training_documents"] < len(docs) // 3  # about 400 characters each, not ~190
    if share:
        assert sum(first["dialects"].values()) == first["training_documents"] and "plain" not in first["dialects"]
        assert first["dialect_tokens_without_loss"] > 0
    else:
        assert "dialects" not in first and "dialect_tokens_without_loss" not in first


def test_sentence_lists_hold_the_rule_in_every_sentence():
    """Every sentence of a list holds a word of its rule (found by the test's own word split), a
    rewritten list is the standard list with that rule applied, and lists depend on the seed only."""
    sentences = ["This is a test of things here.", "He saw himself in the mirror today.",
                 "The dogs were running home fast.", "She has gone to the city.", "Birds sing loudly."] * 40
    texts, spans, names = dialects.sentence_lists(sentences, 60, 200, 0.5, seed=3)
    assert (texts, spans, names) == dialects.sentence_lists(sentences, 60, 200, 0.5, seed=3)
    assert 0 < sum(map(bool, names)) < 60
    for text, found, name in zip(texts, spans, names):
        assert len(text) >= 200 and "Birds sing loudly." not in text  # holds no rule word
        if name:
            assert found and all(text[a:b].lower() == form for a, b, form in found)
        else:
            assert not found and all(s in sentences for s in re.split(r"(?<=\.) ", text))
