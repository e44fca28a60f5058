"""Every file the project opens in the data mirror, the papers folder or data/raw/ is listed in
data/sources.yaml with its sha256: the files opened by ``make data`` (notebook 01 over every
dataset, through the sweep) and by the notebooks' runs are recorded with an audit hook
(tests/open_audit.py), in the test process, the sweep and the notebook kernels, and each is checked
against the manifest with a sha256 computed here (tests/file_audit.py; the notebooks' own tests
watch their runs: tests/test_notebooks.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import open_audit
from file_audit import check, problems, roots, watch

from helpers import paths
from helpers.data import sources


def test_the_recorder_sees_every_kind_of_read(tmp_path):
    root, elsewhere, log = tmp_path / "root", tmp_path / "elsewhere", tmp_path / "opened.log"
    root.mkdir()
    elsewhere.mkdir()
    (root / "a.csv").write_text("x\n1\n")
    (root / "b.txt").write_text("text")
    with zipfile.ZipFile(root / "c.zip", "w") as z:
        z.writestr("c.txt", "zipped")
    with tarfile.open(root / "d.tar.gz", "w:gz") as t:
        t.add(root / "b.txt", "d.txt")
    (root / "link").symlink_to(root / "b.txt")
    (elsewhere / "e.txt").write_text("not recorded")
    with open_audit.recording(log, [root]):
        pd.read_csv(root / "a.csv")
        (root / "link").read_text()  # recorded as the file it points to
        zipfile.ZipFile(root / "c.zip").read("c.txt")
        tarfile.open(root / "d.tar.gz").extractfile("d.txt").read()
        os.close(os.open(root / "b.txt", os.O_RDONLY))
        (elsewhere / "e.txt").read_text()
    (root / "a.csv").read_text()  # after the block: not recorded
    assert open_audit.opened(log) == {root / "a.csv", root / "b.txt", root / "c.zip", root / "d.tar.gz"}
    # a child Python process (a sweep, a kernel) records through its sitecustomize
    child = tmp_path / "child.log"
    env = os.environ | open_audit.child_environment(tmp_path / "site", child, [root])
    subprocess.run([sys.executable, "-c", f"open({str(root / 'c.zip')!r}, 'rb').read()"], env=env, check=True)
    assert open_audit.opened(child) == {root / "c.zip"}


def test_the_check_finds_unlisted_and_changed_files(tmp_path):
    manifest, folders = sources.manifest(), roots()
    mirror = folders["mirror"]
    listed = mirror / "li/LI_Large_pairs.csv"
    assert problems({listed, mirror / "blimp/README.md", Path("/etc/hostname")}, manifest, folders) == [
        "mirror: blimp/README.md is not listed"]
    changed = {"files": manifest["files"] | {"li/LI_Large_pairs.csv": {"sha256": "0" * 64}}, "papers": {"files": {}}}
    assert problems({listed, folders["papers"] / "ide2024_table3.csv"}, changed, folders) == [
        "mirror: li/LI_Large_pairs.csv differs from its sha256", "papers: ide2024_table3.csv is not listed"]


def _make_data_command() -> list[str]:
    """The command of the Makefile's ``data`` target, run with this Python (without ``setup``)."""
    recipe = re.search(r"^data:.*\n\t(.+)$", (paths.ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    return [sys.executable, *recipe.replace("$(SWEEP_ARGS)", "").split()[1:]]


@pytest.mark.slow
def test_every_file_make_data_opens_is_listed_with_its_sha256(scratch, monkeypatch):
    """``make data`` (notebook 01 over every dataset, through the sweep); the notebooks' reads are
    checked by their own tests (tests/test_notebooks.py, file_audit.check)."""
    log = watch(monkeypatch, scratch)
    subprocess.run(_make_data_command(), cwd=paths.ROOT, check=True, env=os.environ.copy())
    assert (scratch / "processed" / "hl_news_zh.parquet").is_file()  # the sweep ran into the scratch folder
    check(log, ["blimp/data/adjunct_island.jsonl", "hu-levy-2023/datasets/exp1/news_zh/corpus.csv",
                "ide2024-templates/templates_ll/template_climp_single_2.txt"])
