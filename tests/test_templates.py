"""Templates and prompts as data."""
from __future__ import annotations

import json
import shutil

import pytest

from helpers import paths
from helpers.methods import templates as T
from helpers.data.sources import ChecksumError, DataSource


def test_ide_templates_five_per_language():
    for lang in ("en", "zh"):
        for method in ("single", "compar"):
            ts = T.ide_templates(method, lang)
            assert [t.id for t in ts] == [1, 2, 3, 4, 5]
        for method in ("yn", "ab"):
            for style in ("base", "chat"):
                assert len(T.ide_templates(method, lang, style)) == 5
    single = T.ide_templates("single", "en")[0]
    assert single.text == "The following sentence is grammatically acceptable.\n\n{sentence}"
    assert single.split() == ("The following sentence is grammatically acceptable.\n\n", "")
    yn = T.ide_templates("yn", "en")[0]
    assert yn.system == "Your task is to evaluate the quality of given text."
    assert yn.user.endswith("\n\n{sentence}\nAnswer: ")
    assert T.ide_templates("yn", "en", "chat")[0].user.endswith("{sentence}")


def test_known_slips_are_reported_not_changed():
    slips = T.known_slips()
    assert 'Chinese single template 5 says 英语 ("English sentence") for Chinese data' in slips
    assert "Chinese Yes/No (base) templates 2 and 4 are identical" in slips
    assert "英语" in T.ide_templates("single", "zh")[4].text


def test_user_template_files(tmp_path):
    txt = tmp_path / "mine.txt"
    txt.write_text("Grammatical:\n{sentence}")
    t = T.load_template_file(txt, "single")
    assert t.fill(sentence="A cat.") == "Grammatical:\nA cat."
    bad = tmp_path / "bad.txt"
    bad.write_text("No slot here")
    with pytest.raises(ValueError, match="needs the placeholders"):
        T.load_template_file(bad, "single")
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"system_prompt": "S", "user_template": "Is {sentence} fine?"}))
    with pytest.raises(ValueError, match="must end with"):
        T.load_template_file(js, "yn")
    assert T.load_template_file(js, "yn", style="chat").user == "Is {sentence} fine?"


def test_hu_levy_prompts():
    p = T.hu_levy_prompts()
    assert len(p) == 21
    assert p[("sentence_judgment", "en", "metaQuestionComplex")] == (
        "Here is a sentence:\n\n{sentence} Is the sentence a good sentence of English? "
        "Respond with either Yes or No as your answer.\n\nAnswer: {continuation}")
    assert p[("word_prediction", "zh", "metaInstruct")].startswith("你是一个善于帮助的写作助理")


def _template_mirror(tmp_path):
    """A mirror holding a copy of the Ide et al. templates only."""
    shutil.copytree(paths.mirror() / T.IDE_DIR, tmp_path / T.IDE_DIR)
    first = tmp_path / T.IDE_DIR / "templates_ll" / "template_blimp_single_1.txt"
    first.write_text("My own frame:\n{sentence}")
    return tmp_path


def test_templates_come_from_the_source_given(tmp_path):
    root = _template_mirror(tmp_path)
    unlisted = DataSource(root, raw_dir=tmp_path / "raw", manifest_file=None)
    assert T.ide_templates("single", "en", source=unlisted)[0].text == "My own frame:\n{sentence}"
    assert T.ide_templates("single", "en")[0].text.startswith("The following sentence")  # default: the mirror
    with pytest.raises(ChecksumError, match="template_blimp_single_1.txt: sha256 .* differs"):
        T.ide_templates("single", "en", source=DataSource(root, raw_dir=tmp_path / "raw"))
