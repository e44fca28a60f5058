"""RuBLiMP (Russian) and JBLiMP (Japanese): counts, orientation read by hand, checksums, options,
and what the rest of the toolkit does with a language that has no templates, corpora or model."""
from __future__ import annotations

import re

import csv
import hashlib
import json
import shutil
import warnings

import pytest

from helpers import data, paths
from helpers.data import jblimp, rublimp, sources
from helpers.data.corpora import corpus_text_file
from helpers.data.selection import select
from helpers.data.sources import ChecksumError, DataSource
from helpers.methods.prompt_text import separator, with_context
from helpers.methods.templates import ide_templates
from helpers.engine.suitability import warn_language


@pytest.fixture(scope="module")
def ru():
    return data.load("rublimp")


@pytest.fixture(scope="module")
def ja():
    return data.load("jblimp")


@pytest.fixture(scope="module")
def ja_raw():
    return data.load("jblimp", subset="raw")


def _pair(df, paradigm, pair_id):
    row = df[(df.paradigm == paradigm) & (df.pair_id == pair_id)]
    assert len(row) == 1, (paradigm, pair_id)
    return row.iloc[0]


def test_rublimp_counts(ru):
    assert len(ru) == 45_000 and ru.paradigm.nunique() == 45
    assert set(ru.groupby("paradigm").size()) == {1000}
    assert ru.phenomenon.nunique() == 12
    assert ru.field.value_counts().to_dict() == {"syntax": 28_000, "semantics": 11_000, "morphology": 6_000}
    assert ru.domain.value_counts().to_dict() == {"librusec": 32_049, "wikipedia": 8_432, "wikinews": 4_519}
    assert (ru.tree_depth.min(), ru.tree_depth.max()) == (1, 23)
    assert not ru.identical.any()
    assert (ru.language == "ru").all() and (ru.dataset == "rublimp").all()
    assert list(ru.columns) == [*data.PAIR_COLUMNS, "good_word", "bad_word", "subtype", "domain", "tree_depth",
                                "identical"]


def test_rublimp_orientation_read_by_hand(ru):
    """source_sentence is the acceptable one: three pairs read and judged by hand."""
    agreement = _pair(ru, "noun_subj_predicate_agreement_number", 297454)  # feminine singular subject
    assert (agreement.good, agreement.bad) == ("Материализовавшаяся Алена мигом заменила прибор.",
                                               "Материализовавшаяся Алена мигом заменили прибор.")
    assert (agreement.good_word, agreement.bad_word, agreement.field) == ("заменила", "заменили", "syntax")
    concord = _pair(ru, "negative_concord", 4002)  # "никогда" needs "не" on the verb
    assert (concord.good, concord.bad) == ("Уюк не станет мужем Росы никогда!", "Уюк станет мужем не Росы никогда!")
    assert concord.phenomenon == "Negation" and concord.domain == "librusec" and concord.tree_depth == 2
    conjugation = _pair(ru, "change_verb_conjugation", 110682)  # "выходет" is the wrong conjugation
    assert (conjugation.good, conjugation.bad) == ("Но мент уже выходит из машины.", "Но мент уже выходет из машины.")
    assert conjugation.field == "morphology"


def test_rublimp_matches_the_csv_files_read_independently(ru):
    """Parity with the csv module: every row's good/bad are the file's source/target sentence."""
    folder = paths.mirror() / rublimp.FOLDER
    expected = {}
    for path in sorted(folder.glob("*.csv")):
        with open(path, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                expected[(path.stem, int(row["id"]))] = (row["source_sentence"], row["target_sentence"])
    got = {(p, i): (g, b) for p, i, g, b in ru[["paradigm", "pair_id", "good", "bad"]].itertuples(index=False)}
    assert len(expected) == 45_000 and got == expected


def test_jblimp_counts(ja, ja_raw):
    assert (len(ja), ja.paradigm.nunique(), ja.phenomenon.nunique()) == (331, 37, 11)
    assert ja.phenomenon.value_counts().to_dict()["argument structure"] == 140
    assert ja.type.value_counts().to_dict() == {"acceptability": 254, "interpretation": 51, "coreference": 13,
                                                "lexical": 13}
    assert ja.phenomenon_2.value_counts().to_dict() == {"filler-gap": 6, "argument structure": 3}
    assert (ja.field == "morphology").sum() == 35 and (ja.language == "ja").all()
    assert (len(ja_raw), ja_raw.paradigm.nunique(), int(ja_raw.validated.sum())) == (367, 39, 331)
    assert set(ja_raw.paradigm) - set(ja.paradigm) == {"adjunct ellipsis", "reciprocal"}
    assert (int(ja_raw.someya_val.sum()), int(ja_raw.possibly_invalid.sum())) == (336, 15)
    kept = ja_raw[ja_raw.validated].set_index("pair_id")[["paradigm", "good", "bad"]]
    assert kept.sort_index().equals(ja.set_index("pair_id")[["paradigm", "good", "bad"]].sort_index())
    assert not ja_raw.identical.any()


def test_jblimp_orientation_read_by_hand(ja, ja_raw):
    """good_sentence is the acceptable one: three validated pairs and one dropped in validation."""
    case = _pair(ja, "case", 5)  # けなす takes an accusative object, not a dative
    assert (case.good, case.bad) == ("太郎が花子をけなす。", "太郎が花子にけなす。")
    cleft = _pair(ja, "complex NP island", 8)  # the clefted wh-phrase keeps the verb's accusative
    assert (cleft.good, cleft.bad) == ("初めて会う人がけなすのは誰をですか？", "初めて会う人がけなすのは誰にですか？")
    assert (cleft.phenomenon, cleft.phenomenon_2, cleft.type) == ("island effects", "argument structure",
                                                                  "acceptability")
    island = _pair(ja, "complex NP island", 0)  # clefting out of a relative clause
    assert (island.good, island.bad) == ("太郎が昨日花子に会った人を探しているのだ。",
                                         "太郎が昨日会った人を探しているのは花子にだ。")
    dropped = _pair(ja_raw, "weak crossover", 3)
    assert (dropped.good, dropped.bad) == ("読んだ学生がうんざりしたのはどの論文にですか？",
                                           "それを読んだ学生がうんざりしたのはどの論文にですか？")
    assert not dropped.validated and 3 not in set(ja.pair_id)


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="JBLiMP subset must be 'validated' .* or 'raw' .*, got 'all'"):
        data.load("jblimp", subset="all")
    with pytest.raises(TypeError, match="dataset 'rublimp' has no option subset"):
        data.recorded_options("rublimp", {"subset": "raw"})
    assert data.recorded_options("jblimp", {"subset": "raw"}) == {"subset": "raw"}
    assert data.recorded_options("jblimp", {"subset": "validated"}) == {}


def test_every_file_is_checksummed_with_its_origin():
    files = sources.manifest()["files"]
    mirror = paths.mirror()
    listed = sorted(f for f in files if f.startswith(("rublimp/", "jblimp/")))
    assert len(listed) == 47
    assert listed == sorted([*(f"rublimp/datasets/{p.name}" for p in (mirror / "rublimp/datasets").glob("*.csv")),
                             *jblimp.FILES.values()])
    for relative in listed:
        assert files[relative]["sha256"] == hashlib.sha256((mirror / relative).read_bytes()).hexdigest(), relative
    origins = sources.manifest()["origins"]
    assert (origins["rublimp"]["url"], origins["rublimp"]["commit"]) == ("https://github.com/RussianNLP/RuBLiMP",
                                                                         "9f0d8df")
    assert (origins["jblimp"]["url"], origins["jblimp"]["commit"]) == ("https://github.com/osekilab/JBLiMP", "80dbcd8")
    assert origins["rublimp"]["license"].startswith("Apache 2.0")


def _mirror_with_copy(tmp_path, folder):
    """A mirror of links to the real one, with ``folder`` copied (so that it can be edited)."""
    real = paths.mirror()
    tmp_path.mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != folder:
            (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(real / folder, tmp_path / folder)
    return DataSource(tmp_path, raw_dir=tmp_path / "raw")


def test_an_edited_file_is_a_checksum_error(tmp_path):
    source = _mirror_with_copy(tmp_path / "ru", "rublimp")
    path = source.mirror / "rublimp/datasets/negative_concord.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("Уюк не станет", "Уюк станет", 1), encoding="utf-8")
    with pytest.raises(ChecksumError, match="rublimp/datasets/negative_concord.csv: sha256 .* differs") as err:
        rublimp.load(source=source)
    assert "https://raw.githubusercontent.com/RussianNLP/RuBLiMP/9f0d8df/datasets/negative_concord.csv" in str(err.value)
    source = _mirror_with_copy(tmp_path / "ja", "jblimp")
    raw = source.mirror / jblimp.FILES["raw"]
    rows = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    rows[0]["good_sentence"], rows[0]["bad_sentence"] = rows[0]["bad_sentence"], rows[0]["good_sentence"]
    raw.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert len(jblimp.load(source=source)) == 331  # the validated file is untouched
    with pytest.raises(ChecksumError, match="raw_minimal_pairs.jsonl: sha256 .* differs"):
        jblimp.load("raw", source=source)


def test_selection_carries_the_language():
    selection = select("rublimp", 2)
    assert (len(selection), selection.language) == (90, "ru")
    selection = select("jblimp", 1)
    assert (len(selection), selection.language) == (37, "ja")
    assert (data.DATASETS["rublimp"].language, data.DATASETS["jblimp"].language) == ("ru", "ja")


def test_a_model_registered_for_other_languages_is_warned_about():
    from helpers.engine import scorer_for
    from helpers.models import LoadedModel
    from helpers.settings import Settings

    selection = select("rublimp", 1)
    demo = scorer_for("demo-en", Settings(progress=False))
    # a folder or Hub id the registry does not list: its languages are unknown (), so no warning
    unregistered = type(demo)(LoadedModel.wrap(demo.loaded.model, demo.tokenizer), Settings(progress=False))
    assert demo.languages == ("en",) and unregistered.languages == ()

    def warned(scorer, chosen=selection):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warn_language(scorer, chosen)
        return [str(w.message) for w in caught]

    assert warned(demo) == [
        "demo-en is registered for en text, not 'ru' (rublimp): its accuracy there is no judgement of its grammar "
        "in that language, though it can be far from 50% (sentence length and shared words decide many pairs); "
        "choose a model trained on 'ru' text (a registry name, folder or Hugging Face id)"]
    assert warned(unregistered) == [] and warned(demo, select("blimp", 1)) == []


def test_languages_without_templates_or_corpora_are_clear_errors():
    for language in ("ru", "ja"):
        with pytest.raises(ValueError, match=f"got '{language}': Ide et al. released templates in English and "
                                             "Chinese only; score other languages with the template-free methods"):
            ide_templates("single", language)
        with pytest.raises(ValueError, match=f"the mirror has no corpora of language '{language}' \\(only en, zh\\): "
                                             "pass unigram_corpus="):
            corpus_text_file(language)
        assert not (paths.CACHE / f"corpus_{language}.txt").exists()  # no empty cache file left behind


def test_japanese_is_joined_without_spaces_russian_with():
    assert (separator("ja"), separator("ru"), separator("zh"), separator("en")) == ("", " ", "", " ")
    assert with_context("文脈", "太郎が花子をけなす。", "ja") == "文脈太郎が花子をけなす。"
    assert with_context("Контекст.", "Но мент уже выходит.", "ru") == "Контекст. Но мент уже выходит."


def test_the_load_benchmark_runs_as_committed(capsys, monkeypatch):
    """benchmarks/bench_data_load.py (the source of the quoted RuBLiMP load time) still runs."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_data_load", paths.ROOT / "benchmarks" / "bench_data_load.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr("sys.argv", ["bench_data_load.py", "--datasets", "jblimp", "--repeats", "5"])
    bench.main()
    out = capsys.readouterr().out
    assert out.startswith("# bench_data_load.py --datasets jblimp --repeats 5\n# machine: "), out
    # first reads (checksums computed) and cached reads interleaved: medians, ranges, the per-round speed-up
    assert re.search(r"^jblimp: 331 rows; first read [\d.]+ s \([\d.]+-[\d.]+, 5 runs\) \(with checksums\), then "
                     r"[\d.]+ s \([\d.]+-[\d.]+, 5 runs\) \(checksums cached\): [\d.]+x \([\d.]+-[\d.]+\) faster$", out,
                     re.M), out
    assert out.splitlines()[-1].startswith("# load average after: ")
