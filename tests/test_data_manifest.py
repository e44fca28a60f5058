"""data/sources.yaml as the list of what may be read: an unlisted file is an error, a researcher's
own files are read with ``manifest_file=None``, the papers folder has its own section, and
``python -m helpers.data`` checks and rewrites it."""
from __future__ import annotations

import shutil

import pandas as pd
import pytest

from helpers import paths
from helpers.data import __main__ as data_cli
from helpers.data import hu_levy, papers, sources
from helpers.data.schema import DataFormatError
from helpers.data.sources import ChecksumError, DataNotFoundError, DataSource, UnlistedFileError
from helpers.reporting import published

FIX = ("To fix: add it to ORIGINS in helpers/data/sources.py and run python -m helpers.data --write (or, for your "
       "own files, read them with DataSource(folder, manifest_file=None)).")


def test_an_unlisted_file_is_an_error_that_says_how_to_list_it():
    source = DataSource.default()
    with pytest.raises(UnlistedFileError) as err:
        source.path("blimp/README.md")  # in the mirror, read by no reader, so not listed
    assert str(err.value) == (f"{paths.mirror() / 'blimp/README.md'}: blimp/README.md is not listed in sources.yaml, "
                              f"so its sha256 cannot be checked. {FIX}")
    assert isinstance(err.value, ChecksumError) and isinstance(err.value, DataFormatError)
    assert source.path("blimp/data") == paths.mirror() / "blimp/data"  # a folder is no file: its files are checked
    # the files the issue named are listed now, and read
    assert len(hu_levy.load_word_prediction("news_zh")) == 90 and len(hu_levy.load_word_prediction("simple_zh")) == 3


def test_own_files_are_read_unchecked_only_when_asked(tmp_path):
    own = tmp_path / "blimp" / "README.md"
    own.parent.mkdir(parents=True)
    own.write_text("my notes")
    assert DataSource(tmp_path, manifest_file=None).path("blimp/README.md") == own
    assert DataSource(tmp_path, manifest_file=None).checksums == {}
    with pytest.raises(UnlistedFileError, match="blimp/README.md is not listed"):
        DataSource(tmp_path).path("blimp/README.md")
    with pytest.raises(DataNotFoundError) as err:  # a mistyped manifest never turns the checks off
        DataSource(tmp_path, manifest_file=tmp_path / "sourcse.yaml")
    assert str(err.value) == (f"manifest {tmp_path / 'sourcse.yaml'} does not exist. To fix: leave manifest_file out "
                              "(the project's data/sources.yaml), give a manifest file, or pass manifest_file=None to "
                              "read your own files unchecked")


def test_origins_of_the_added_files():
    base = "https://raw.githubusercontent.com/jennhu/metalinguistic-prompting"
    assert sources.download_url(hu_levy.WORD_PREDICTION["news_zh"]) == f"{base}/a8e6096/datasets/exp1/news_zh/corpus.csv"
    assert sources.download_url(hu_levy.WORD_PREDICTION["p18"]) == f"{base}/89d1b52/datasets/exp1/p18/corpus.csv"
    # the Mandarin results exist only inside results_zh.zip: no file URL to fetch
    assert sources.download_url("hu-levy-2023/results_zh/exp1_word-prediction/news_zh_text-davinci-003_direct.json") \
        is None
    assert sources.download_url("blimp/raw_results/summary/models_summary.jsonl") == (
        "https://raw.githubusercontent.com/alexwarstadt/blimp/3e56b06/raw_results/summary/models_summary.jsonl")
    origins = sources.manifest()["origins"]
    assert origins["hu-levy-2023/results_zh"]["archive"] == "results_zh.zip"
    assert {origins[f"hu-levy-2023/datasets/exp1/{n}"]["commit"] for n in ("news_zh", "simple_zh")} == {"a8e6096"}


def _papers_copy(tmp_path, monkeypatch):
    folder = tmp_path / "papers"
    shutil.copytree(paths.papers(), folder)
    monkeypatch.setenv(paths.PAPERS_ENV, str(folder))
    return folder


def test_the_papers_files_are_checked(tmp_path, monkeypatch):
    original = published.read("ide2024_table4.csv")
    folder = _papers_copy(tmp_path, monkeypatch)
    pd.testing.assert_frame_equal(published.read("ide2024_table4.csv"), original)  # an unchanged copy reads
    table = folder / "ide2024_table4.csv"
    table.write_text(table.read_text().replace(",BLiMP,", ",BLIMP,", 1))
    with pytest.raises(ChecksumError, match=r"ide2024_table4.csv: sha256 .* differs from sources.yaml .* not the "
                                            r"recorded version of the papers' ide2024_table4.csv"):
        published.read("ide2024_table4.csv")
    shutil.copy(folder / "ide2024_table3.csv", folder / "ide2024_table3_mine.csv")
    with pytest.raises(UnlistedFileError, match=r"the papers' file ide2024_table3_mine.csv is not listed in "
                                                r"sources.yaml, .* To fix: run python -m helpers.data --write"):
        published.read("ide2024_table3_mine.csv")
    with pytest.raises(ChecksumError, match="ide2024_table4.csv: sha256"):
        papers.check_all(folder)


def test_the_check_command_checks_the_mirror_and_the_papers(tmp_path, monkeypatch, capsys):
    manifest = sources.manifest()
    assert data_cli.main([]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{len(manifest['files'])} files match their checksums in {paths.mirror()}",
        f"{len(manifest['papers']['files'])} files match their checksums in {paths.papers()}"]
    table = _papers_copy(tmp_path, monkeypatch) / "hu2025_table1.csv"
    table.write_text(table.read_text() + "\n")
    assert data_cli.main([]) == 1
    assert capsys.readouterr().err.startswith(f"error: {table}: sha256 ")


def test_write_reproduces_the_committed_manifest(tmp_path, monkeypatch):
    """--write gives data/sources.yaml byte for byte: nothing in it is edited by hand or stale."""
    target = tmp_path / "sources.yaml"
    monkeypatch.setattr(data_cli, "MANIFEST", target)
    assert data_cli.main(["--write"]) == 0
    assert target.read_text() == sources.MANIFEST.read_text()
    monkeypatch.setenv(paths.PAPERS_ENV, str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError):  # the folder named is not there: nothing is written
        papers.build(tmp_path / "absent")
    assert data_cli.main(["--write"]) == 1 and target.read_text() == sources.MANIFEST.read_text()
