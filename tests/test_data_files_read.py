"""Every file the project opens in the data mirror, the papers folder or data/raw/ is listed in
data/sources.yaml with its sha256: the files opened by ``make data`` (notebook 01 over every
dataset, through the sweep) and by the notebooks' runs are recorded with an audit hook
(tests/open_audit.py), in the test process, the sweep and the notebook kernels, and each is checked
against the manifest with a sha256 computed here."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

import open_audit
from notebook_run import run_notebook

from helpers import paths
from helpers.data import sources


def roots() -> dict[str, Path]:
    """The folders whose files must be listed (data/raw/hub/ has its own locks: helpers.data.hub_lock)."""
    return {"mirror": paths.mirror().resolve(), "papers": paths.papers().resolve(), "raw": paths.RAW.resolve()}


def problems(opened: set[Path], manifest: dict, folders: dict[str, Path]) -> list[str]:
    """What is wrong with the files ``opened``: one line per file that the manifest does not list
    or whose sha256 (computed here, with hashlib) differs."""
    out = []
    for path in sorted(opened):
        for kind, folder in folders.items():
            if path.is_relative_to(folder):
                relative = path.relative_to(folder).as_posix()
                break
        else:
            continue
        if kind == "raw" and relative.startswith("hub/"):
            continue
        listed = manifest["papers"]["files"] if kind == "papers" else manifest["files"]
        if relative not in listed:
            out.append(f"{kind}: {relative} is not listed")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != listed[relative]["sha256"]:
            out.append(f"{kind}: {relative} differs from its sha256")
    return out


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


# (notebook, its parameters as the notebook tests run them, small; files each run must open)
RUNS = {
    "make data": (None, {}, ["blimp/data/adjunct_island.jsonl", "hu-levy-2023/datasets/exp1/news_zh/corpus.csv",
                             "ide2024-templates/templates_ll/template_climp_single_2.txt"]),
    "02": ("02_readout.ipynb", dict(model="tiny-llama", dataset="blimp", methods="lp,intemplate_lp", templates=[1],
                                    limit=1),
           ["blimp/raw_results/summary/models_summary.jsonl", "papers:ide2024_table3.csv"]),
    "03": ("03_prompting.ipynb", dict(model="tiny-gpt2", dataset="blimp", limit=1, templates=[1],
                                      hu_levy_sets="hl_blimp,hl_dtfit", hu_levy_limit=2, fewshot_ks=[0]),
           ["hu-levy-2023/PROMPTS_transcribed.md",
            "hu-levy-2023/results_zh/exp3a_sentence-judgment/mandarin_text-davinci-003_direct.json"]),
    "06": ("06_context_priming.ipynb", dict(model="tiny-gpt2", dataset="blimp", limit=1, lengths=[0, 25],
                                            phenomenon_sentences=2),
           ["wikitext103-test/wikitext-raw_test.raw", "papers:sinha2023_text_numbers.csv",
            "syntaxgym/cpllab-syntactic-generalization/data/raw/sg_results/syntaxgym_results_gpt-2-pretrained_.csv"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("run", list(RUNS))
def test_every_file_opened_is_listed_with_its_sha256(run, scratch, monkeypatch):
    notebook, parameters, expected = RUNS[run]
    log, folders = scratch / "opened.log", roots()
    for name, value in open_audit.child_environment(scratch / "site", log, list(folders.values())).items():
        monkeypatch.setenv(name, value)
    if notebook is None:
        subprocess.run(_make_data_command(), cwd=paths.ROOT, check=True, env=os.environ.copy())
        assert (scratch / "processed" / "hl_news_zh.parquet").is_file()  # the sweep ran into the scratch folder
    else:
        run_notebook(notebook, scratch / notebook, **parameters)
    opened = open_audit.opened(log)
    named = {folders["papers"] / f.removeprefix("papers:") if f.startswith("papers:") else folders["mirror"] / f
             for f in expected}
    assert named <= opened  # the recorder saw this run's reads
    assert problems(opened, yaml.safe_load(sources.MANIFEST.read_text()), folders) == []
