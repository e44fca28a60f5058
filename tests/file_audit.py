"""A run's reads of the data mirror, the papers folder and data/raw/, checked against
data/sources.yaml: every file it opened is listed there with its sha256 (computed here, with
hashlib). ``watch`` records a test's child processes (the notebook kernel, the sweep) through
tests/open_audit.py; ``check`` reads the log and names what is wrong."""
from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

import open_audit
from helpers import paths
from helpers.data import sources


def roots() -> dict[str, Path]:
    """The folders whose files must be listed (data/raw/hub/ has its own locks: helpers.data.hub_lock)."""
    return {"mirror": paths.mirror().resolve(), "papers": paths.papers().resolve(), "raw": paths.RAW.resolve()}


def problems(opened: set[Path], manifest: dict, folders: dict[str, Path]) -> list[str]:
    """What is wrong with the files ``opened``: one line per file that the manifest does not list
    or whose sha256 differs."""
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


def watch(monkeypatch, folder: Path) -> Path:
    """Record the reads of this test's child processes under the listed folders; the log's path."""
    log = folder / "opened.log"
    for name, value in open_audit.child_environment(folder / "site", log, list(roots().values())).items():
        monkeypatch.setenv(name, value)
    return log


def check(log: Path, expected=()) -> None:
    """Every file the run opened is listed with its sha256, and it opened each of ``expected``
    (mirror paths; "papers:<name>" for the papers folder)."""
    folders, opened = roots(), open_audit.opened(log)
    named = {folders["papers"] / f.removeprefix("papers:") if f.startswith("papers:") else folders["mirror"] / f
             for f in expected}
    assert named <= opened, sorted(named - opened)  # the recorder saw this run's reads
    assert problems(opened, yaml.safe_load(sources.MANIFEST.read_text()), folders) == []
