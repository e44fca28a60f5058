"""The papers folder (``MINIMAL_PAIRS_PAPERS``, default ../shared/papers): the published numbers
of the four papers as CSV files, read-only shared data like the mirror. Every file read from it is
checked against the ``papers`` section of data/sources.yaml, and one the section does not list
is an error, as for the mirror (:mod:`helpers.data.sources`).
"""
from __future__ import annotations

from pathlib import Path

from .sources import MANIFEST, ChecksumError, UnlistedFileError, read_manifest, sha256

ORIGIN = dict(what="published numbers of Ide et al. 2024, Hu et al. 2025, Hu & Levy 2023 and Sinha et al. 2023, "
                   "copied from the papers' texts (the folder's README.md says from which)",
              files=["*.csv"])


def checksums(manifest_file: Path = MANIFEST) -> dict:
    """{file name: {"sha256", "bytes"}}: the papers' files the manifest lists."""
    return read_manifest(manifest_file).get("papers", {}).get("files", {})


def verify(path: Path, manifest_file: Path = MANIFEST) -> Path:
    """``path`` (a file of the papers folder) if its sha256 is the manifest's; a file the manifest
    does not list is an :class:`UnlistedFileError`."""
    entry = checksums(manifest_file).get(path.name)
    if entry is None:
        raise UnlistedFileError(
            f"{path}: the papers' file {path.name} is not listed in {manifest_file.name}, so its sha256 cannot be "
            f"checked. To fix: run python -m helpers.data --write (a file name that ORIGIN['files'] in "
            "helpers/data/papers.py does not match needs its pattern added there first).")
    actual = sha256(path)
    if actual != entry["sha256"]:
        raise ChecksumError(
            f"{path}: sha256 {actual[:16]}... differs from {manifest_file.name} ({entry['sha256'][:16]}...); "
            f"it is not the recorded version of the papers' {path.name}. To fix: restore the papers folder "
            "(../shared/papers) or point MINIMAL_PAIRS_PAPERS at an unchanged copy.")
    return path


def check_all(folder: Path, manifest_file: Path = MANIFEST) -> int:
    """Check every papers' file the manifest lists in ``folder``; the number checked."""
    for name in checksums(manifest_file):
        verify(folder / name, manifest_file)
    return len(checksums(manifest_file))


def build(folder: Path) -> dict:
    """The manifest's ``papers`` section: what the folder holds and every file's checksum."""
    files = {}
    for pattern in ORIGIN["files"]:
        matches = sorted(folder.glob(pattern))
        if not matches:
            raise FileNotFoundError(f"no file matches {pattern} in the papers folder {folder}")
        files |= {p.name: {"sha256": sha256(p), "bytes": p.stat().st_size} for p in matches}
    return {"what": ORIGIN["what"], "files": files}
