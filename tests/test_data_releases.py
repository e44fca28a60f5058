"""TurBLiMP, BLiMP-NL, BHS, QFrBLiMP and MultiBLiMP's mirrored languages read from their real
release files in the mirror (../shared/data; counts as data/SOURCES.md and the papers give them),
and the same canonical rows from a Hub copy written from those files (the two layouts overlap)."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from helpers import data
from helpers.data import bhs, blimp_nl, hub_lock, multiblimp, qfrblimp, turblimp
from helpers.data.hub_catalog import BHS_CONFIGS, HUB, TURBLIMP_PHENOMENA
from helpers.data.hub_status import hub_status, prepare_plan
from helpers.data.schema import PAIR_COLUMNS
from helpers.data.sources import DataNotFoundError, DataSource
from tests.test_data_hub import OTHER, PINNED, card, put, put_parquet

CANONICAL = [*PAIR_COLUMNS, "identical"]


@pytest.fixture
def hub_only(tmp_path, monkeypatch):
    """A source with no mirror: only what a test writes into its download folder."""
    monkeypatch.setattr(hub_lock, "LOCKS", tmp_path / "hub_locks")
    return DataSource(None, raw_dir=tmp_path / "raw")


def test_turblimp_from_its_release():
    df = data.load("turblimp")
    assert len(df) == 16_000 and df.groupby("paradigm").size().eq(1_000).all()
    assert list(df.paradigm.unique()) == list(TURBLIMP_PHENOMENA)  # the Hub's names, subject_agreement included
    assert df[df.identical].paradigm.value_counts().to_dict() == {"anaphor_agreement": 10, "quantifiers": 10}
    first = df.iloc[df.index[df.paradigm == "binding"][0]]
    assert (first.good, first.bad) == ("Aslında bu kadar duygusal olduğum için kendime bazen kızıyorum.",
                                       "Aslında bu kadar duygusal olduğum için bana bazen kızıyorum.")
    assert (first.good_cue, first.bad_cue, first.critical_region) == ("kendime", "bana", "kızıyorum")
    assert not df.release_phenomenon.str.endswith(" ").any()  # 1,250 cells with trailing spaces, stripped
    assert set(df.loc[df.paradigm.str.startswith("argument_structure"), "release_phenomenon"]) == {"argument_structure"}
    assert df.subtype.notna().sum() == 2_000
    assert len(data.load("turblimp", drop_identical=True)) == 15_980


def test_blimp_nl_from_its_release_with_the_cut_sentences_mended():
    df = data.load("blimp_nl")
    assert len(df) == 8_400 and df.paradigm.nunique() == 84 and df.groupby("paradigm").size().eq(100).all()
    assert list(df.paradigm.unique()) == list(HUB["blimp_nl"].configs) and df.phenomenon.nunique() == 22
    assert "binding_principle_a__c_command" in set(df.paradigm)  # "Binding (Principle A)" / "c-command"
    assert "argument_structure__argument_number_in_transitive" in set(df.paradigm)  # "argument_number_(in)transitive"
    # 8 rows wrote a sentence with a comma as ""..."" unquoted; the release's own jsonl cuts them at the comma
    cogito = df[df.good.str.contains("cogito")].iloc[0]
    assert (cogito.good, cogito.bad) == (
        "Tijdens het filosofisch debat bespreekt de filosoof waar Descartes' cogito, ergo sum voor staat.",
        "Tijdens het filosofisch debat bespreekt de filosoof wat Descartes' cogito, ergo sum voor staat.")
    # 10 pairs hold one sentence twice (the jsonl's 11th is "Het feit dat ze niet werd uitgenodigd", cut)
    assert int(df.identical.sum()) == 10 and not df.good.str.endswith("uitgenodigd").any()
    assert df.groupby("paradigm").pair_id.apply(lambda ids: list(ids) == list(range(100))).all()
    assert (df.item.astype(int) > 0).all() and len(data.load("blimp_nl", drop_identical=True)) == 8_390


def test_bhs_from_its_release():
    df = data.load("bhs")
    assert len(df) == 22_000 and df.groupby("paradigm").size().eq(1_000).all()
    assert list(df.paradigm.unique()) == list(BHS_CONFIGS)
    assert df.groupby("language").size().to_dict() == {"eu": 8_000, "hi": 6_000, "sw": 8_000}
    hindi = df[df.paradigm == "hindi-S_O_V"].iloc[0]
    assert (hindi.context, hindi.ending_good, hindi.ending_bad) == ("बंदर सेब", "पाता है।", "पाया है।")
    assert (hindi.good, hindi.bad) == ("बंदर सेब पाता है।", "बंदर सेब पाया है।")
    assert (df.good == df.context + " " + df.ending_good).all() and not df.identical.any()


def test_qfrblimp_from_the_unshuffled_release():
    df = data.load("qfrblimp")
    sizes = df.groupby("paradigm", sort=False).size()
    assert len(df) == 1_761 and [sizes[f"LP{k}"] for k in range(1, 21)] == [
        97, 95, 97, 96, 99, 97, 114, 106, 113, 91, 100, 100, 96, 97, 60, 60, 60, 60, 60, 63]  # the README's table
    annotators = [c for c in df.columns if c.startswith("annotator_")]
    assert len(annotators) == 13 and df[annotators].astype(float).stack().size == 22_893
    assert df.human_agreement.mean() == pytest.approx(0.869523, abs=1e-6)  # per pair, then over pairs
    assert int((df.human_agreement < 0.5).sum()) == 69  # the majority chose the unacceptable sentence
    assert int(df.identical.sum()) == 18 and len(data.load("qfrblimp", drop_identical=True)) == 1_743
    assert df.phenomenon.iloc[0] == qfrblimp.PHENOMENA[int(df.type.iloc[0])]


def test_multiblimp_reads_the_mirrored_languages_and_names_them_when_one_is_missing():
    df = data.load("multiblimp", languages="eng,ell,nld,tur")
    assert df.groupby("lang").size().to_dict() == {"ell": 1_096, "eng": 770, "nld": 2_331, "tur": 1_742}
    assert len(df) == 5_939 and not df.identical.any() and set(df.language) == {"en", "el", "nl", "tr"}
    with pytest.raises(DataNotFoundError, match=r'pol.* the mirror holds MultiBLiMP\'s ell, eng, nld, tur only '
                                                r'\(multiblimp-partial/hf_cache\): pass languages="ell,eng,nld,tur"'):
        data.load("multiblimp", languages="eng,pol")
    assert hub_status("multiblimp", languages="eng,tur") == "mirrored (multiblimp-partial/hf_cache: eng, tur)"
    assert 'multiblimp_languages="ell,eng,nld,tur" prepares those' in hub_status("multiblimp")
    names, status = prepare_plan("all")  # offline: the releases in, MultiBLiMP's 101 languages and XCOMPS out
    assert {"turblimp", "blimp_nl", "bhs", "qfrblimp"} <= set(names) and not {"multiblimp", "xcomps"} & set(names)
    assert status["turblimp"] == "release in the mirror (turblimp/data/base)"


def hub_copies(base) -> None:
    """Hub copies of TurBLiMP, BLiMP-NL, BHS, QFrBLiMP and MultiBLiMP's eng, written from the release."""
    tur = turblimp.from_release(DataSource.default())
    folder = base / "hub" / "juletxara__turblimp"
    put(folder, "README.md", card([{"config_name": c, "data_files": f"data/{c}-*.parquet"} for c in TURBLIMP_PHENOMENA]),
        OTHER)
    for config, rows in tur.groupby("paradigm", sort=False):
        put_parquet(folder, f"data/{config}-00000-of-00001.parquet",
                    rows[["good", "bad"]].set_axis(["sentence_good", "sentence_bad"], axis=1), OTHER)
    nl = blimp_nl.from_release(DataSource.default())
    folder = base / "hub" / "jmichaelov__blimp_nl"
    put(folder, "README.md", card([{"config_name": c, "data_files": [{"split": "test", "path": f"{c}/test-*.jsonl"}]}
                                   for c in HUB["blimp_nl"].configs]), OTHER)
    for config, rows in nl.groupby("paradigm", sort=False):
        put(folder, f"{config}/test-00000.jsonl", "".join(json.dumps({"sentence_good": g, "sentence_bad": b}) + "\n"
                                                          for g, b in zip(rows.good, rows.bad)), OTHER)
    b = bhs.from_release(DataSource.default())
    folder = base / "hub" / "jmichaelov__bhs"
    put(folder, "README.md", card([{"config_name": c, "data_files": [{"split": "test", "path": f"{c}/test-*"}]}
                                   for c in BHS_CONFIGS]), OTHER)
    for config, rows in b.groupby("paradigm", sort=False):
        put_parquet(folder, f"{config}/test-00000-of-00001.parquet", rows[["context", "ending_good", "ending_bad"]],
                    OTHER)
    q = qfrblimp.from_release(DataSource.default())
    folder = base / "hub" / "graalul__qfrblimp"
    put(folder, "README.md", card([{"config_name": "qfrblimp", "data_files": [{"split": "test",
                                                                              "path": "qfrblimp.jsonl"}]}]), OTHER)
    votes = [c for c in q.columns if c.startswith("annotator_")]
    put(folder, "qfrblimp.jsonl", "".join(json.dumps(
        {"sentence_good": r.good, "sentence_bad": r.bad, "linguistic_phenomenon": r.phenomenon,
         "phenomenon_id": int(r.type), **{c: int(getattr(r, c)) for c in votes}}, ensure_ascii=False) + "\n"
        for r in q.itertuples()), OTHER)
    folder = base / "hub" / "jumelet__multiblimp"
    put(folder, "README.md", "---\nlicense: cc-by-4.0\n---\n", PINNED)
    put(folder, "eng/data.tsv", (DataSource.default().mirror / multiblimp.MIRRORED_FOLDER / "eng/data.tsv").read_bytes(),
        PINNED)


def test_a_hub_copy_gives_the_release_s_canonical_rows(hub_only, tmp_path):
    hub_copies(hub_only.raw_dir)
    for name, options in [("turblimp", {}), ("blimp_nl", {}), ("bhs", {}), ("qfrblimp", {}),
                          ("multiblimp", {"languages": "eng"})]:
        released = data.load(name, **options)[CANONICAL]
        from_hub = data.load(name, source=hub_only, **options)
        pd.testing.assert_frame_equal(from_hub[CANONICAL], released, obj=name)
    q = data.load("qfrblimp", source=hub_only)
    assert q.human_agreement.tolist() == data.load("qfrblimp").human_agreement.tolist()
    shutil.rmtree(hub_only.raw_dir / "hub" / "juletxara__turblimp")
    with pytest.raises(DataNotFoundError, match=r"turblimp: its release files \(turblimp/data/base\) are in neither "
                                                r"the mirror nor .* no Hub copy is downloaded.*hf download"):
        data.load("turblimp", source=hub_only)
