"""Template lists (demo-en-icl's training data): every sentence of a list is its template with
content words drawn anew, a deviation is kept by the whole list, the first sentence of every list
carries no loss, and lists depend on the seed only."""
from __future__ import annotations

import re
import zipfile

import numpy as np
import pytest

from helpers.zoo import template_lists as tl
from helpers.zoo.demo_training import saved_tokenizer
from helpers.zoo.training_streams import masked_stream

# a Brown-format corpus: one tagged sentence a line; the lexicon needs MIN_COUNT occurrences
LEXICON_LINES = ["The/at dog/nn sees/vbz a/at cat/nn ./.", "The/at cow/nn eats/vbz an/at apple/nn ./.",
                 "The/at dogs/nns see/vb a/at cat/nn ./.", "The/at cows/nns eat/vb an/at egg/nn ./.",
                 "The/at apples/nns see/vb a/at dog/nn ./."]
NOUNS, PLURALS, VERBS_S, VERBS = {"dog", "cow", "cat", "apple", "egg"}, {"dogs", "cows", "apples"}, \
    {"sees", "eats"}, {"see", "eat"}


@pytest.fixture(scope="module")
def brown(tmp_path_factory):
    path = tmp_path_factory.mktemp("brown") / "brown.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("brown/ca01", "\n\n".join(LEXICON_LINES * 3))
    return path


def test_brown_templates_and_lexicon(brown):
    templates, vocab = tl.brown_templates(brown, min_words=4)
    assert templates[0] == tl.Template(("the", "dog", "sees", "a", "cat"), ("at", "nn", "vbz", "at", "nn"))
    assert set(vocab["nn"][0]) == NOUNS and set(vocab["vbz"][0]) == VERBS_S and set(vocab["nns"][0]) == PLURALS
    assert vocab["nn"][1].sum() == 3 * 7  # counts: 7 singular nouns a pass


def _lists(text: str, spans: list[tuple[int, int]]) -> list[list[str]]:
    """The text cut at each list's first sentence, each list cut into its sentences."""
    starts = [a for a, _ in spans] + [len(text) + 1]
    return [re.split(r"(?<=\.) ", text[a:b].strip()) for a, b in zip(starts, starts[1:])]


def test_every_sentence_realises_its_template_and_a_deviation_holds_for_the_whole_list(brown):
    texts, spans, names = tl.template_lists(80, 300, seed=5, path=brown)
    assert (texts, spans, names) == tl.template_lists(80, 300, seed=5, path=brown)  # the seed decides
    assert texts != tl.template_lists(80, 300, seed=6, path=brown)[0]
    kinds = [k for name in names for k in name.split("|")]
    assert 0.3 < sum(map(bool, kinds)) / len(kinds) < 0.7  # about half the lists deviate
    for text, no_loss, name in zip(texts, spans, names):
        lists = _lists(text, no_loss)
        assert len(lists) == len(name.split("|")) and all(len(x) >= 3 for x in lists)
        assert [text[a:b] for a, b in no_loss] == [x[0] for x in lists]  # each list's first sentence: no loss
        for sentences, kind in zip(lists, name.split("|")):
            shapes = {tuple(_slot(w) for w in s[:-1].split()) for s in sentences}
            assert len(shapes) == 1, (kind, sentences)  # one template a list: the same slots in every sentence
            shape = shapes.pop()
            if kind == "":
                assert shape[0] == "The" and len(shape) == 5 and shape[1] in ("noun", "plural")
            elif kind.startswith("drop_word"):
                assert len(shape) == 4
            elif kind.startswith("swap_tag:nn>nns"):
                assert "plural" in shape and len(shape) == 5
        for s in (x for lst in lists for x in lst):
            words = s[:-1].split()
            for article, following in zip(words, words[1:]):
                if article.lower() in ("a", "an"):
                    assert (article.lower() == "an") == (following[0] in "aeiou")


def _slot(word: str) -> str:
    w = word.lower()
    return ("noun" if w in NOUNS else "plural" if w in PLURALS else "verb_s" if w in VERBS_S else
            "verb" if w in VERBS else "article" if w in ("a", "an") else word)


def test_a_swapped_tag_draws_every_word_of_that_slot_from_its_partner(brown):
    templates, vocab = tl.brown_templates(brown, min_words=4)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        out = tl.deviate(templates[0], vocab, rng)
        if out and out[1].startswith("swap_tag"):
            template, kind = out
            old, new = kind.split(":")[1].split(">")
            assert tl.PARTNERS[old] == new and tl.PARTNERS[new] == old
            i = [k for k, (a, b) in enumerate(zip(templates[0].tags, template.tags)) if a != b]
            assert len(i) == 1 and template.words[i[0]] in vocab[new][0]
            seen.add(kind)
    assert seen == {"swap_tag:nn>nns", "swap_tag:vbz>vb"}


def test_tokens_starting_in_a_list_s_first_sentence_carry_no_loss():
    tokenizer = saved_tokenizer("data/models/demo-en")
    text = "The dog sees a cat. The cow sees a cat. The cow eats an egg."
    ids, trained = masked_stream(tokenizer, [text, "A plain document."], [[(0, 19)], []])
    pieces = [tokenizer.decode([int(i)]) for i in ids]
    assert pieces[0] == "<|endoftext|>" and trained[0]
    first_end = pieces.index(" The")  # the second sentence's first token
    assert "".join(pieces[1:first_end]) == "The dog sees a cat."
    assert not trained[1:first_end].any() and trained[first_end:].all()
    assert tl.trained_tokens([(0, 3), (3, 7), (7, 9)], [(3, 7)]).tolist() == [True, False, True]
