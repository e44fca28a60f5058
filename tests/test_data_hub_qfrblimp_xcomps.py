"""QFrBLiMP and XCOMPS read from fixtures in their Hub layouts (as ``hf download --local-dir``
leaves them): QFrBLiMP's one JSON-lines file with its annotators' choices as the human column,
XCOMPS's languages as splits of one card config, and both offline and in 01's "all"."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import data
from helpers.analysis import accuracy
from helpers.analysis.paradigms import phenomena_with_humans
from helpers.data import hub, hub_lock
from helpers.data.hub_catalog import HUB, XCOMPS_LANGUAGES
from helpers.data.hub_status import prepare_plan
from helpers.data.schema import DataFormatError
from helpers.data.sources import DataNotFoundError, DataSource
from test_data_hub import OTHER, card, put, put_parquet

QFR = [  # (phenomenon_id, linguistic_phenomenon, good, bad, the 12 annotators' choices: 1 = the good one)
    (1, "Accords participes passés (Past participle agreements)",
     "Après tous ces efforts, elles se sont senties très fatiguées.",
     "Après tous ces efforts, elles se sont senti très fatiguées.", [1] * 12),
    (7, "Négation standard (Standard negation)", "Je ne pouvais pas compter sur vous.",
     "Je pouvais pas compter sur vous.", [1] * 9 + [0] * 3),
    (1, "Accords participes passés (Past participle agreements)", "Elle s'est lavée.", "Elle s'est lavé.",
     [1] * 6 + [0] * 5 + [None]),
    (20, "Préposition orpheline (Orphan preposition)", "C'est la fille avec qui je sors.",
     "C'est la fille que je sors avec.", [0] * 12),
]


def write_qfrblimp(base: Path, rows=QFR, annotators: bool = True, commit: str | None = OTHER,
                   readme_shape: bool = False) -> Path:
    """The card's one config ``qfrblimp``, split test, in ``qfrblimp.jsonl`` at the top;
    ``readme_shape``: records as the GitHub README shows one (no phenomenon_id nor source, the
    French name alone, a label)."""
    folder = base / "hub" / "graalul__qfrblimp"
    put(folder, "README.md", card([{"config_name": "qfrblimp",
                                    "data_files": [{"split": "test", "path": "qfrblimp.jsonl"}]}]), commit)
    lines = []
    for pid, phenomenon, good, bad, votes in rows:
        line = {"sentence_good": good, "sentence_bad": bad, "linguistic_phenomenon": phenomenon,
                "phenomenon_id": pid, "source": "Banque de dépannage linguistique"}
        if readme_shape:
            line = {"sentence_good": good, "sentence_bad": bad,
                    "linguistic_phenomenon": phenomenon.split(" (")[0], "label": 1}
        if annotators:
            line |= {f"annotator_{n}": v for n, v in zip((1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), votes)}
        lines.append(json.dumps(line, ensure_ascii=False))
    put(folder, "qfrblimp.jsonl", "\n".join(lines), commit)  # the release's last line has no newline
    return folder


def write_xcomps(base: Path, languages=XCOMPS_LANGUAGES, commit: str | None = OTHER, declared: bool = True) -> Path:
    """One parquet file per language under data/, each a split of the card's ``default`` config
    (the layout ``datasets``' push_to_hub writes for a DatasetDict); ``declared=False``: a card
    without configs, the splits named by the files alone (the Hub's custom-split file names)."""
    folder = base / "hub" / "fpadovani__xcomps-dataset"
    entries = [{"config_name": "default", "data_files": [
        {"split": f"comps_{code}", "path": f"data/comps_{code}-*"} for code in languages]}]
    put(folder, "README.md", card(entries) if declared else "---\nlicense: mit\n---\n# XCOMPS\n", commit)
    for k, code in enumerate(languages):
        rows = pd.DataFrame({"acceptable_sent": [f"A {code} robin can fly.", f"A {code} bat has fur."],
                             "unacceptable_sent": [f"A {code} penguin can fly.", f"A {code} toad has fur."],
                             "negative_sample_type": ["taxonomic", "random" if k % 2 else "co-occurrence"]})
        put_parquet(folder, f"data/comps_{code}-00000-of-00001.parquet", rows, commit)
    return folder


@pytest.fixture
def raw(tmp_path, monkeypatch):
    monkeypatch.setattr(hub_lock, "LOCKS", tmp_path / "hub_locks")
    return DataSource(None, raw_dir=tmp_path / "raw")


def test_qfrblimp_reads_its_pairs_and_the_annotators_agreement(raw):
    write_qfrblimp(raw.raw_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 27 of 47 judgments chose the acceptable sentence: no warning
        df = data.load("qfrblimp", source=raw)
    assert list(df.paradigm) == ["LP1", "LP7", "LP1", "LP20"] and list(df.pair_id) == [0, 0, 1, 0]
    assert df.phenomenon.iloc[3] == "Préposition orpheline" and (df.language == "fr").all()  # the README's name
    assert df.release_phenomenon.iloc[3] == "Préposition orpheline (Orphan preposition)"  # the card's, kept
    assert (df.good.iloc[2], df.bad.iloc[2]) == ("Elle s'est lavée.", "Elle s'est lavé.")
    assert df.human_agreement.tolist() == [1.0, 0.75, 6 / 11, 0.0]  # the one who did not judge is left out
    assert list(df.columns[8:12]) == ["human_agreement", "release_phenomenon", "phenomenon_id", "source"]
    scores = df.assign(model="m", method="lp", correct=[True, False, True, False], tie=False, template="")
    table = phenomena_with_humans(scores).set_index("phenomenon")
    assert table.loc["Accords participes passés", "human"] == pytest.approx(
        (1.0 + 6 / 11) / 2)  # per pair, then per paradigm, then per phenomenon
    assert table.loc["Négation standard", ["accuracy", "human"]].tolist() == [0.0, 0.75]
    phenomena = accuracy.by_phenomenon(scores)
    assert phenomena.set_index("phenomenon")["human"].to_dict() == table["human"].to_dict()
    matrix = accuracy.phenomenon_matrix(phenomena, humans=True)  # 02's table: the humans beside the methods
    assert list(matrix.columns) == ["lp", "humans"] and matrix["humans"].tolist() == table["human"].tolist()


def test_qfrblimp_records_as_its_readme_shows_them_read_too(raw, tmp_path):
    """The GitHub README's record: sentence_good, sentence_bad, the phenomenon's French name and a
    label, no phenomenon_id: the id is the README table's for the name."""
    write_qfrblimp(raw.raw_dir, readme_shape=True, annotators=False)
    with pytest.warns(UserWarning, match="no annotator_<n> columns"):
        df = data.load("qfrblimp", source=raw)
    assert list(df.paradigm) == ["LP1", "LP7", "LP1", "LP20"] and list(df.pair_id) == [0, 0, 1, 0]
    assert df.phenomenon.tolist()[:2] == ["Accords participes passés", "Négation standard"]
    assert (df.good.iloc[3], df.label.iloc[3]) == ("C'est la fille avec qui je sors.", 1)
    unknown = [(1, "Accords inconnus", "Elle est là.", "Elle sont là.", [1] * 12)]
    write_qfrblimp(tmp_path / "unknown", unknown, readme_shape=True, annotators=False)
    with pytest.raises(DataFormatError, match=r"record 1 has no phenomenon_id and its linguistic_phenomenon "
                                              r"'Accords inconnus' is none of the README's 20"):
        data.load("qfrblimp", source=DataSource(None, raw_dir=tmp_path / "unknown"))


def test_qfrblimp_without_annotators_warns_and_a_bad_choice_is_an_error(raw, tmp_path):
    write_qfrblimp(raw.raw_dir, annotators=False)
    with pytest.warns(UserWarning, match="has no annotator_<n> columns: QFrBLiMP's human column .* is empty"):
        df = data.load("qfrblimp", source=raw)
    assert len(df) == 4 and df.human_agreement.isna().all()
    flipped = [(*row[:4], [None if v is None else 1 - v for v in row[4]]) for row in QFR]  # 0 = the good one
    write_qfrblimp(tmp_path / "flipped", flipped)
    with pytest.warns(UserWarning, match=r"chose the acceptable sentence in 42.6% of their judgments, against 87.0% "
                                         r"in the GitHub release .* human_agreement would then be reversed"):
        data.load("qfrblimp", source=DataSource(None, raw_dir=tmp_path / "flipped"))
    bad = [*QFR[:3], (20, "Préposition orpheline (Orphan preposition)", "A.", "B.", [1] * 11 + [2])]
    write_qfrblimp(tmp_path / "bad", bad)
    with pytest.raises(DataFormatError, match=r"qfrblimp.jsonl: record 4, annotator_14 is 2.0; an annotator's "
                                              r"choice is 1"):
        data.load("qfrblimp", source=DataSource(None, raw_dir=tmp_path / "bad"))


def test_xcomps_reads_each_language_split_of_the_default_config(raw):
    folder = write_xcomps(raw.raw_dir)
    df = data.load("xcomps", source=raw)
    assert len(df) == 34 and list(df.language.unique()) == list(XCOMPS_LANGUAGES)
    assert df.groupby("phenomenon").size().to_dict() == {"taxonomic": 17, "co-occurrence": 9, "random": 8}
    de = df[df.language == "de"]
    assert list(de.paradigm) == ["de/taxonomic", "de/co-occurrence"] and list(de.pair_id) == [0, 1]
    assert (de.good.iloc[1], de.bad.iloc[1]) == ("A de bat has fur.", "A de toad has fur.")
    assert list(df.columns) == [*data.PAIR_COLUMNS, "identical"]
    assert len(yaml.safe_load((folder / "hub-lock.yaml").read_text())["files"]) == 18  # the card and 17 files
    undeclared = write_xcomps(raw.raw_dir.parent / "undeclared", declared=False)
    pd.testing.assert_frame_equal(data.load("xcomps", source=DataSource(None, raw_dir=undeclared.parents[1])), df)


def test_xcomps_missing_a_language_says_which_and_all_offline_leaves_both_out(raw):
    write_xcomps(raw.raw_dir, languages=XCOMPS_LANGUAGES[:-1])  # no comps_zh: neither in the card nor a file
    with pytest.raises(DataNotFoundError) as err:
        data.load("xcomps", source=raw)
    target = raw.raw_dir / "hub" / "fpadovani__xcomps-dataset"
    assert str(err.value).startswith("xcomps (fpadovani/xcomps-dataset on the Hugging Face Hub) is not downloaded: "
                                     f"no comps_<language> files of 1 language (comps_zh) in {target}.")
    assert f"`hf download fpadovani/xcomps-dataset --repo-type dataset --local-dir {target}`" in str(err.value)
    assert hub.missing("xcomps", None, raw) == ["comps_zh"]
    names, status = prepare_plan("all", DataSource(None, raw_dir=raw.raw_dir.parent / "empty"))
    assert {"qfrblimp", "xcomps"} <= set(HUB) and not {"qfrblimp", "xcomps"} & set(names)
    assert status["qfrblimp"] == ("not downloaded: run `python -m helpers.data --download qfrblimp` on a machine "
                                  "that reaches the Hugging Face Hub")


def test_both_return_the_canonical_schema_are_prepared_as_01_does_and_name_their_linking(raw, tmp_path,
                                                                                         monkeypatch):
    from helpers.data import linking

    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    write_qfrblimp(raw.raw_dir), write_xcomps(raw.raw_dir)
    for name in ("qfrblimp", "xcomps"):
        df = data.prepare(name, source=raw)  # what notebook 01 calls for each dataset
        assert list(df.columns[:8]) == data.PAIR_COLUMNS and (df.dataset == name).all()
        for col in ("dataset", "language", "paradigm", "phenomenon", "field", "good", "bad"):
            assert df[col].dtype == "string", (name, col)
        assert df.pair_id.dtype == "int64" and df.identical.dtype == bool and not df.identical.any()
        pd.testing.assert_frame_equal(data.load_processed(name, prepared_only=True), df)
    assert (linking.paper_linking("qfrblimp").method, linking.paper_linking("xcomps").method) == ("meanlp", "lp")
