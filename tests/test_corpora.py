"""Corpus cleaning for unigram tables and the demo models."""
from __future__ import annotations

from helpers import paths
from helpers.data import corpora
from helpers.data.sources import DataSource


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


def test_gutenberg_reads_every_file_of_its_folder_in_order():
    files = corpora.CORPORA["gutenberg"].files()
    assert [f.name for f in files] == sorted(p.name for p in (paths.mirror() / corpora.GUTENBERG).glob("*.txt"))
    assert len(files) == 13 and files[0].name == "austen-emma.txt"
    assert next(corpora.documents("gutenberg")) == "[Emma by Jane Austen 1816]"


def test_corpora_read_the_source_they_are_given(tmp_path):
    """A source with its own files (and a manifest that lists none) is read instead of the mirror."""
    folder = tmp_path / "corpora" / "zh-sophonplus"
    folder.mkdir(parents=True)
    (folder / "waimai_10k.csv").write_text("label,review\n1,很快，好吃\n0,\n0,送餐太慢了\n", encoding="utf-8")
    source = DataSource(tmp_path, raw_dir=tmp_path / "raw", manifest_file=None)
    assert list(corpora.documents("waimai_reviews", source)) == ["很快，好吃", "送餐太慢了"]
    assert next(corpora.documents("waimai_reviews")) != "很快，好吃"  # the default source is untouched
