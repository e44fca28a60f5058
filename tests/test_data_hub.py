"""The Hub datasets (MultiBLiMP, BLiMP-NL, TurBLiMP, BHS) read from fixtures written in each dataset's
Hub layout, as ``hf download --local-dir`` leaves them (the files, the dataset card, and
huggingface_hub's record of the commit of each file), through the same code as real copies:
counts, orientation, paradigm names, the lock written at first read and checked at every later
one, the revision pins, the offline errors, the ``languages`` option and "all" offline."""
from __future__ import annotations

import csv
import hashlib
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import data
from helpers.data import __main__ as data_cli
from helpers.data import hub, hub_lock
from helpers.data.hub_catalog import BHS_CONFIGS, BLIMP_NL_PARADIGMS, HUB, TURBLIMP_PHENOMENA
from helpers.data.hub_lock import RevisionMismatchError
from helpers.data.hub_status import hub_status, prepare_plan
from helpers.data.multiblimp_languages import LANGUAGES, language_codes, language_tag
from helpers.data.selection import DatasetSelection
from helpers.data.sources import ChecksumError, DataNotFoundError, DataSource
from helpers.engine.suitability import warn_language

PINNED = "de923efa8d2483d6b13364ee68e65308e990a991"
OTHER = "0123456789abcdef0123456789abcdef01234567"

RUS = [  # (sen, wrong_sen, phenomenon, verb, wrong_verb): the verb agrees with the subject in the first
    ("Алена заменила прибор.", "Алена заменили прибор.", "SV-#", "заменила", "заменили"),
    ("Мы пришли домой.", "Мы пришёл домой.", "SV-#", "пришли", "пришёл"),
    ("Я читаю книгу.", "Я читает книгу.", "SV-P", "читаю", "читает"),
]
ENG = [
    ("The dogs bark at night.", "The dogs barks at night.", "SV-#", "bark", "barks"),
    ("She \"writes\" letters.", "She \"write\" letters.", "SV-#", "writes", "write"),
]


def record(folder: Path, rel: str, commit: str) -> None:
    """huggingface_hub's record of a file that it downloaded into a local_dir: commit, etag, time."""
    meta = folder / ".cache" / "huggingface" / "download" / f"{rel}.metadata"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(f"{commit}\n\"etag-{rel}\"\n9999999999.0\n")


def put(folder: Path, rel: str, content: bytes | str, commit: str | None) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    if commit:
        record(folder, rel, commit)


def put_parquet(folder: Path, rel: str, rows: pd.DataFrame, commit: str | None) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(path, index=False)
    if commit:
        record(folder, rel, commit)


def card(configs: list[dict]) -> str:
    return "---\n" + yaml.safe_dump({"license": "cc-by-4.0", "configs": configs}, sort_keys=False) + "---\n# Card\n"


def write_multiblimp(base: Path, languages=("eng", "rus"), commit: str | None = PINNED) -> Path:
    """``<iso>/data.tsv`` per language (no configs in the card: found by folder), written with csv."""
    folder = base / "hub" / "jumelet__multiblimp"
    put(folder, "README.md", "---\nlicense: cc-by-4.0\n---\n# MultiBLiMP\n", commit)
    for code in languages:
        path = folder / code / "data.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(["sen", "verb", "wrong_sen", "wrong_verb", "phenomenon", "lang", "child_idx", "head_idx"])
            for k, (sen, wrong, phen, verb, wrong_verb) in enumerate({"eng": ENG, "rus": RUS}[code]):
                w.writerow([sen, verb, wrong, wrong_verb, phen, code, k + 1, k + 2])
        if commit:
            record(folder, f"{code}/data.tsv", commit)
    return folder


def write_turblimp(base: Path, commit: str | None = OTHER) -> Path:
    """One parquet file per phenomenon under data/, declared by glob in the card's configs."""
    folder = base / "hub" / "juletxara__turblimp"
    put(folder, "README.md", card([{"config_name": c, "data_files": f"data/{c}*.parquet"}
                                   for c in TURBLIMP_PHENOMENA]), commit)
    for k, config in enumerate(TURBLIMP_PHENOMENA):
        rows = pd.DataFrame({"sentence_good": [f"Ali kitabı okudu {k}.", f"Biz geldik {k}."],
                             "sentence_bad": [f"Ali kitabı okudum {k}.", f"Biz geldi {k}."],
                             "pair_id": [7, 8]})
        put_parquet(folder, f"data/{config}-00000-of-00001.parquet", rows, commit)
    return folder


def write_blimp_nl(base: Path, commit: str | None = OTHER) -> Path:
    """Split entries in the card; each config's test file is a JSON-lines file, and one config
    also has a train file that must not be read."""
    folder = base / "hub" / "jmichaelov__blimp_nl"
    configs = HUB["blimp_nl"].configs
    entries = [{"config_name": c, "data_files": [{"split": "test", "path": f"{c}/test-*.jsonl"}]} for c in configs]
    entries[0]["data_files"].append({"split": "train", "path": f"{configs[0]}/train-*.jsonl"})
    put(folder, "README.md", card(entries), commit)
    for config in configs:
        line = {"sentence_good": f"Wie heeft hij gezien? ({config})",
                "sentence_bad": f"Wie heeft hij gezien het? ({config})"}
        put(folder, f"{config}/test-00000.jsonl", json.dumps(line, ensure_ascii=False) + "\n", commit)
    put(folder, f"{configs[0]}/train-00000.jsonl", json.dumps({"sentence_good": "x", "sentence_bad": "y"}) + "\n",
        commit)
    return folder


def write_bhs(base: Path, commit: str | None = OTHER) -> Path:
    """``<config>/test-00000-of-00001.parquet`` per config, declared with its split in the card
    (the layout ``datasets``' push_to_hub writes); a row is a context and two endings, one
    context ending in a space (joined with one space all the same)."""
    folder = base / "hub" / "jmichaelov__bhs"
    put(folder, "README.md", card([{"config_name": c, "data_files": [{"split": "test", "path": f"{c}/test-*"}]}
                                   for c in BHS_CONFIGS]), commit)
    for k, config in enumerate(BHS_CONFIGS):
        rows = pd.DataFrame({"context": [f"Context {k} a", f"Context {k} b "],
                             "ending_good": ["right.", "good."], "ending_bad": ["wrong.", "bad."]})
        put_parquet(folder, f"{config}/test-00000-of-00001.parquet", rows, commit)
    return folder


@pytest.fixture
def raw(tmp_path, monkeypatch):
    """A source with no mirror and a scratch download folder; committed locks in a scratch folder."""
    monkeypatch.setattr(hub_lock, "LOCKS", tmp_path / "hub_locks")
    return DataSource(None, raw_dir=tmp_path / "raw")


def test_turblimp_is_read_through_its_card(raw):
    folder = write_turblimp(raw.raw_dir)
    df = data.load("turblimp", source=raw)
    assert (len(df), df.paradigm.nunique()) == (32, 16)
    assert list(df.paradigm.unique()) == list(TURBLIMP_PHENOMENA) and (df.paradigm == df.phenomenon).all()
    binding = df[df.paradigm == "binding"].set_index("pair_id")
    assert (binding.loc[0, "good"], binding.loc[0, "bad"]) == ("Ali kitabı okudu 3.", "Ali kitabı okudum 3.")
    assert (binding.loc[1, "good"], binding.loc[1, "bad"]) == ("Biz geldik 3.", "Biz geldi 3.")
    assert list(df.columns) == [*data.PAIR_COLUMNS, "release_pair_id", "identical"]  # the release's id kept apart
    assert list(binding.release_pair_id) == [7, 8] and (df.language == "tr").all() and not df.identical.any()
    lock = yaml.safe_load((folder / "hub-lock.yaml").read_text())
    assert (lock["repo"], lock["revision"]) == ("juletxara/turblimp", OTHER)
    assert len(lock["files"]) == 17  # the card and the 16 parquet files; huggingface_hub's records left out
    for rel, entry in lock["files"].items():
        content = (folder / rel).read_bytes()
        assert entry == {"sha256": hashlib.sha256(content).hexdigest(), "bytes": len(content)}, rel


def test_blimp_nl_reads_the_test_split_of_84_paradigms(raw):
    write_blimp_nl(raw.raw_dir)
    df = data.load("blimp_nl", source=raw)
    assert (len(df), df.paradigm.nunique(), df.phenomenon.nunique()) == (84, 84, 22)
    assert set(df.phenomenon) == set(BLIMP_NL_PARADIGMS) and (df.language == "nl").all()
    first = df[df.paradigm == "adpositional_phrases__argument_r_extraction"].iloc[0]
    assert first.phenomenon == "adpositional_phrases"  # its train file ("x", "y") is not read
    assert (first.good, first.bad) == ("Wie heeft hij gezien? (adpositional_phrases__argument_r_extraction)",
                                       "Wie heeft hij gezien het? (adpositional_phrases__argument_r_extraction)")
    stranding = df[df.paradigm == "wh_movement__stranding_1"]
    assert len(stranding) == 1 and stranding.phenomenon.iloc[0] == "wh_movement"


def test_bhs_joins_each_context_and_ending_with_one_space(raw):
    write_bhs(raw.raw_dir)
    df = data.load("bhs", source=raw)
    assert (len(df), df.paradigm.nunique()) == (44, 22) and list(df.paradigm.unique()) == list(BHS_CONFIGS)
    assert df.groupby("language").size().to_dict() == {"eu": 16, "hi": 12, "sw": 16}
    assert set(df.phenomenon) == {"basque-DO", "basque-IO", "basque-S", "hindi", "swahili"}
    rows = df[df.paradigm == "hindi-S_ne_O_V"].set_index("pair_id")
    assert (rows.loc[0, "good"], rows.loc[0, "bad"]) == ("Context 11 a right.", "Context 11 a wrong.")
    assert (rows.loc[1, "good"], rows.loc[1, "bad"]) == ("Context 11 b good.", "Context 11 b bad.")  # never two spaces
    assert list(df.columns) == [*data.PAIR_COLUMNS, "context", "ending_good", "ending_bad", "identical"]
    assert DatasetSelection("bhs", df, {}).languages == ("eu", "hi", "sw")


def test_multiblimp_reads_language_folders(raw):
    write_multiblimp(raw.raw_dir)
    df = data.load("multiblimp", source=raw, languages="rus,eng")
    assert len(df) == 5 and list(df.columns) == [*data.PAIR_COLUMNS, "verb", "wrong_verb", "lang", "child_idx",
                                                 "head_idx", "identical"]
    assert df.groupby("paradigm").size().to_dict() == {"eng/SV-#": 2, "rus/SV-#": 2, "rus/SV-P": 1}
    assert df.groupby("language").size().to_dict() == {"en": 2, "ru": 3}
    assert set(df.lang) == {"eng", "rus"} and set(df.phenomenon) == {"SV-#", "SV-P"}
    agreement = df[(df.lang == "rus") & (df.pair_id == 0)].iloc[0]
    assert (agreement.good, agreement.bad, agreement.verb, agreement.wrong_verb) == (
        "Алена заменила прибор.", "Алена заменили прибор.", "заменила", "заменили")
    quoted = df[(df.lang == "eng") & (df.pair_id == 1)].iloc[0]
    assert (quoted.good, quoted.bad) == ('She "writes" letters.', 'She "write" letters.')
    only = data.load("multiblimp", source=raw, languages=["rus"])
    assert len(only) == 3 and set(only.language) == {"ru"}
    pd.testing.assert_frame_equal(only, df[df.lang == "rus"].reset_index(drop=True))


def test_languages_are_checked_and_recorded_in_one_spelling():
    with pytest.raises(ValueError, match="unknown MultiBLiMP language 'xx': give ISO 639-3 codes .*eng \\(English\\)"):
        language_codes("rus,xx")
    assert language_codes("RUS, pol") == ("pol", "rus") and len(language_codes("all")) == 101
    assert sum(n for _, n in LANGUAGES.values()) == 121_305
    tags = {code: language_tag(code) for code in LANGUAGES}  # ISO 639-1 where there is one, else the code
    assert sum(len(tag) == 2 for tag in tags.values()) == 57 and len(set(tags.values())) == 101
    assert [tags[c] for c in ("eng", "rus", "nld", "tur", "arb", "hbs", "kpv")] == ["en", "ru", "nl", "tr", "arb",
                                                                                    "hbs", "kpv"]
    assert data.recorded_options("multiblimp", {"languages": ["rus", "eng"]}) == {"languages": "eng,rus"}
    assert data.recorded_options("multiblimp", {"languages": sorted(LANGUAGES)}) == {}
    assert data.recorded_options("multiblimp", {"languages": "all"}) == {}


def test_a_flipped_byte_is_a_checksum_error(raw):
    folder = write_multiblimp(raw.raw_dir)
    data.load("multiblimp", source=raw, languages="eng,rus")  # the first read locks the copy
    path = folder / "rus" / "data.tsv"
    content = bytearray(path.read_bytes())
    content[-3] ^= 1
    path.write_bytes(bytes(content))
    with pytest.raises(ChecksumError, match=r"rus/data.tsv: sha256 .* differs from hub-lock.yaml .*"
                                            r"python -m helpers.data --download multiblimp --languages eng,rus"):
        data.load("multiblimp", source=raw, languages="eng,rus")
    with pytest.raises(ChecksumError, match="rus/data.tsv: sha256"):  # every file of the copy is checked
        data.load("multiblimp", source=raw, languages="eng")


def test_a_copy_of_another_revision_is_an_error(raw, tmp_path):
    folder = write_multiblimp(raw.raw_dir, commit=OTHER)  # hf download without the pinned --revision
    with pytest.raises(RevisionMismatchError, match=f"{folder} records revision {OTHER}, but the manifest .* "
                                                    f"pins {PINNED}"):
        data.load("multiblimp", source=raw, languages="eng")
    assert not (folder / "hub-lock.yaml").exists()
    pinned = write_multiblimp(tmp_path / "other", commit=PINNED)
    lock = hub_lock.write(pinned, "jumelet/multiblimp", OTHER)  # a lock of another revision
    assert lock["revision"] == OTHER
    with pytest.raises(RevisionMismatchError, match=f"hub-lock.yaml records revision {OTHER}, but the manifest"):
        data.load("multiblimp", source=DataSource(None, raw_dir=tmp_path / "other"), languages="eng")


def test_the_committed_lock_takes_precedence(raw):
    folder = write_turblimp(raw.raw_dir)
    data.load("turblimp", source=raw)
    target = hub.commit_lock("turblimp", raw)
    assert target == hub_lock.LOCKS / "turblimp.yaml"
    assert yaml.safe_load(target.read_text()) == yaml.safe_load((folder / "hub-lock.yaml").read_text())
    path = folder / "data" / "binding-00000-of-00001.parquet"
    pd.DataFrame({"sentence_good": ["a"], "sentence_bad": ["b"], "pair_id": [1]}).to_parquet(path, index=False)
    hub_lock.save(folder / "hub-lock.yaml", {**hub_lock.read(folder / "hub-lock.yaml"), "files": {}})
    hub_lock.write(folder, "juletxara/turblimp", OTHER, hub_lock.read(folder / "hub-lock.yaml"))  # relocked
    with pytest.raises(ChecksumError, match="binding-00000-of-00001.parquet: sha256 .* differs from data/hub_locks"):
        data.load("turblimp", source=raw)
    committed = yaml.safe_load(target.read_text())
    hub_lock.save(target, {**committed, "revision": PINNED})  # unpinned dataset: the committed lock pins it
    with pytest.raises(RevisionMismatchError, match=f"records revision {OTHER}, but .*turblimp.yaml pins {PINNED}"):
        data.load("turblimp", source=raw)


def test_files_without_a_record_or_in_a_read_only_mirror_are_not_trusted(raw, tmp_path):
    write_turblimp(raw.raw_dir, commit=None)  # copied by hand: no lock, no record of the revision
    with pytest.raises(ChecksumError, match="holds files that no lock lists .* huggingface_hub recorded no revision"):
        data.load("turblimp", source=raw)
    mirror = tmp_path / "mirror"
    write_turblimp(mirror)
    with pytest.raises(ChecksumError, match="no lock lists .* read-only here"):
        data.load("turblimp", source=DataSource(mirror, raw_dir=tmp_path / "empty"))
    write_turblimp(tmp_path / "locked")
    data.load("turblimp", source=DataSource(None, raw_dir=tmp_path / "locked"))  # locks it
    (mirror / "hub").rename(tmp_path / "unlocked")
    (tmp_path / "locked" / "hub").rename(mirror / "hub")
    df = data.load("turblimp", source=DataSource(mirror, raw_dir=tmp_path / "empty"))
    assert len(df) == 32 and not (tmp_path / "empty").exists()  # read from the mirror, nothing written


def test_offline_with_nothing_present_says_what_to_run(raw, capsys):
    target = raw.raw_dir / "hub" / "jumelet__multiblimp"
    with pytest.raises(DataNotFoundError) as err:
        data.load("multiblimp", source=raw, languages="rus,pol")
    message = str(err.value)
    assert message.startswith("multiblimp (jumelet/multiblimp on the Hugging Face Hub) is not downloaded: no train "
                              f"files of 2 languages (pol, rus) in {target}.")
    assert "`python -m helpers.data --download multiblimp --languages pol,rus`" in message
    assert (f'`hf download jumelet/multiblimp --repo-type dataset --revision {PINNED} --include "pol/*" '
            f'--include "rus/*" --include README.md --local-dir {target}`') in message
    assert message.endswith(f"the files go to {target} (copy that folder here if you downloaded elsewhere).")
    with pytest.raises(DataNotFoundError, match="HF_HUB_OFFLINE is set: no download"):
        hub.download("turblimp", source=raw)  # the tests run with HF_HUB_OFFLINE=1
    with pytest.raises(DataNotFoundError, match="`hf download juletxara/turblimp --repo-type dataset --local-dir "):
        data.load("turblimp", source=DataSource(None, raw_dir=raw.raw_dir, mode="download"))  # GitHub, then the Hub
    assert not [p for p in raw.raw_dir.rglob("*") if p.is_file()]  # nothing written by the failed downloads
    assert data_cli.main(["--download", "multiblimp", "--languages", "rus,pol"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("error: multiblimp (jumelet/multiblimp on the Hugging Face Hub) is not")
    assert data_cli.main(["--download", "multiblimp", "--languages", "rus,zz"]) == 2
    assert "unknown MultiBLiMP language 'zz'" in capsys.readouterr().err


def test_all_offline_leaves_out_what_is_not_downloaded(raw):
    names, status = prepare_plan("all", raw)
    assert set(data.DATASETS) - set(names) == set(HUB) == {"multiblimp", "blimp_nl", "turblimp", "bhs", "qfrblimp",
                                                                  "xcomps"}
    assert status["bhs"] == ("not downloaded: run `python -m helpers.data --download bhs` on a machine that reaches "
                             "the Hugging Face Hub")
    assert status["multiblimp"] == ("not downloaded: run `python -m helpers.data --download multiblimp` on a machine "
                                    "that reaches the Hugging Face Hub")
    write_multiblimp(raw.raw_dir)
    names, status = prepare_plan("all", raw, {"multiblimp": {"languages": "eng,rus"}})
    assert "multiblimp" in names and status["multiblimp"].startswith("downloaded (")
    assert hub_status("multiblimp", raw, languages="eng,pol") == (
        "not downloaded (1 of the 2 languages missing: pol): run `python -m helpers.data --download multiblimp "
        "--languages eng,pol` on a machine that reaches the Hugging Face Hub")
    with pytest.raises(DataNotFoundError, match=r"no train files of 1 language \(pol\) in "):
        data.load("multiblimp", source=raw, languages="eng,pol")
    names, _ = prepare_plan("all", DataSource(None, raw_dir=raw.raw_dir, mode="download"))
    assert names == list(data.DATASETS)  # a downloading source fetches them when they are read
    names, _ = prepare_plan("li,turblimp", raw)
    assert names == ["li", "turblimp"]  # named on its own it stays, and its reader says how to get it


def test_the_language_of_a_selection_and_the_warning(raw):
    write_multiblimp(raw.raw_dir)
    frame = data.load("multiblimp", source=raw, languages="eng,rus")
    both = DatasetSelection("multiblimp", frame, {"languages": "eng,rus"})
    english = DatasetSelection("multiblimp", frame[frame.lang == "eng"].reset_index(drop=True), {"languages": "eng"})
    assert (both.language, both.languages, english.language, english.languages) == ("mul", ("en", "ru"), "en", ("en",))

    from helpers.engine import scorer_for
    from helpers.settings import Settings

    demo = scorer_for("demo-en", Settings(progress=False))

    def warned(selection):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warn_language(demo, selection)
        return [str(w.message) for w in caught]

    assert warned(english) == []
    assert warned(both) == ["demo-en is registered for en text, not 'ru' (multiblimp): its accuracy there is no "
                            "judgement of its grammar in that language, though it can be far from 50% (sentence "
                            "length and shared words decide many pairs); choose a model trained on 'ru' text (a "
                            "registry name, folder or Hugging Face id)"]


def test_every_hub_reader_returns_the_canonical_schema(raw):
    write_multiblimp(raw.raw_dir), write_turblimp(raw.raw_dir), write_blimp_nl(raw.raw_dir), write_bhs(raw.raw_dir)
    for name, options in (("multiblimp", {"languages": "eng,rus"}), ("turblimp", {}), ("blimp_nl", {}), ("bhs", {})):
        df = data.load(name, source=raw, **options)
        assert list(df.columns[:8]) == data.PAIR_COLUMNS
        for col in ("dataset", "language", "paradigm", "phenomenon", "field", "good", "bad"):
            assert df[col].dtype == "string", (name, col)
        assert df.pair_id.dtype == "int64" and df.identical.dtype == bool and (df.dataset == name).all()
        assert (df.good != df.bad)[~df.identical].all() and not df.identical.any()
        if data.DATASETS[name].language != "mul":  # MultiBLiMP's and BHS's rows carry each its language
            assert (df.language == data.DATASETS[name].language).all()


def test_the_card_forms_of_data_files(tmp_path):
    from helpers.data.hub_layout import card_configs, config_files, read_table, split_globs
    from helpers.data.schema import DataFormatError

    readme = tmp_path / "README.md"
    readme.write_text(card([
        {"config_name": "a", "data_files": "data/a*.parquet"},
        {"config_name": "b", "data_files": ["b/one.csv", "b/two.csv"]},
        {"config_name": "c", "data_files": [{"split": "test", "path": ["c/x.json", "c/y.json"]},
                                            {"split": "train", "path": "c/train.json"}]}]))
    declared = card_configs(readme)
    assert declared == {"a": {"train": ["data/a*.parquet"]}, "b": {"train": ["b/one.csv", "b/two.csv"]},
                        "c": {"test": ["c/x.json", "c/y.json"], "train": ["c/train.json"]}}
    assert split_globs(declared, "a", "test") == ["data/a*.parquet"]  # one split: read whatever its name
    assert split_globs(declared, "d", "test") == ["d/**/*"]  # undeclared: its folder
    with pytest.raises(DataFormatError, match="config c declares the splits \\['test', 'train'\\], not 'validation'"):
        split_globs(declared, "c", "validation")
    put(tmp_path, "c/x.json", json.dumps([{"sentence_good": "A.", "sentence_bad": "B."}]), None)
    put(tmp_path, "c/y.json", '{"sentence_good": "C.", "sentence_bad": "D."}\n{"sentence_good": "E.", '
                              '"sentence_bad": "F."}\n', None)  # one record a line, as the Hub also reads .json
    files = config_files(tmp_path, declared, "c", "test")
    assert [p.name for p in files] == ["x.json", "y.json"]
    assert pd.concat([read_table(p) for p in files]).sentence_good.tolist() == ["A.", "C.", "E."]
    readme.write_text("---\nconfigs:\n  - data_files: x.csv\n---\n")
    with pytest.raises(DataFormatError, match="a 'configs' entry without config_name"):
        card_configs(readme)
    readme.write_text("---\nconfigs: [\n")
    with pytest.raises(DataFormatError, match="never closed"):
        card_configs(readme)
