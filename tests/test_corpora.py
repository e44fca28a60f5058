"""Corpus cleaning for unigram tables and the demo models."""
from __future__ import annotations

from helpers.data import corpora


def test_detokenize_and_truecase():
    assert corpora.detokenize("`` Hello , world '' , he said ( quietly ) .") == '"Hello, world", he said (quietly).'
    assert corpora.detokenize("it is n't John 's") == "it isn't John's"
    assert corpora.truecase_line("i think i'm right, said ivan.") == "I think I'm right, said ivan."


def test_corpora_yield_clean_text():
    brown = next(corpora.documents("brown"))
    assert "/at" not in brown and brown.startswith("The Fulton County Grand Jury said Friday")
    msra = next(corpora.documents("msra_ner"))
    assert " " not in msra and len(msra) > 5
    assert {c.language for c in corpora.ENGLISH} == {"en"} and {c.language for c in corpora.CHINESE} == {"zh"}
