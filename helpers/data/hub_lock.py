"""The lock of a Hub dataset's local copy: the revision it was downloaded at and the sha256 and
size of every file, in ``hub-lock.yaml`` beside the files.

A lock is written when a copy is first made (``python -m helpers.data --download``) or first read
after ``hf download --local-dir`` put the files there: the revision is then the commit that
huggingface_hub noted for each file in the copy's ``.cache/huggingface/download/`` records. Files
added later at the same revision (more MultiBLiMP languages) are added to the lock; the sums of
files already listed are never recomputed, so an edited file stays an error. A lock committed
to ``data/hub_locks/<name>.yaml`` (``python -m helpers.data --hub-lock NAME``) takes precedence:
its revision must be the copy's and its sums those of the files it lists.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .. import paths
from ..files import write_text
from .schema import DataFormatError
from .sources import ChecksumError, sha256

LOCK_NAME = "hub-lock.yaml"
LOCKS = paths.DATA / "hub_locks"  # the committed locks, one per dataset
HF_RECORDS = ".cache"  # huggingface_hub's bookkeeping inside a local_dir: not data, never locked


class RevisionMismatchError(DataFormatError):
    """A local copy (or lock) of another revision than the one the project pins."""


def committed_path(name: str) -> Path:
    """data/hub_locks/<name>.yaml: the lock a downloader committed for everyone."""
    return LOCKS / f"{name}.yaml"


def copy_files(folder: Path) -> list[str]:
    """The files of a local copy, relative and sorted (its lock and huggingface_hub's records left out)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.name != LOCK_NAME and p.relative_to(folder).parts[0] != HF_RECORDS)


def read(path: Path) -> dict | None:
    """A lock {"repo", "revision", "files": {relative: {"sha256", "bytes"}}}, or None when absent."""
    if not path.is_file():
        return None
    lock = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(lock, dict) or not {"repo", "revision", "files"} <= set(lock):
        raise DataFormatError(f"{path}: not a lock (expected the keys repo, revision, files); delete it and "
                              "download the dataset again")
    return lock


def recorded_revision(folder: Path, files: list[str]) -> str | None:
    """The one commit that huggingface_hub recorded for ``files`` when it downloaded them into
    ``folder`` (first line of ``.cache/huggingface/download/<file>.metadata``); None if any lacks one."""
    commits = set()
    for rel in files:
        record = folder / HF_RECORDS / "huggingface" / "download" / f"{rel}.metadata"
        if not record.is_file():
            return None
        commits.add(record.read_text(encoding="utf-8").split("\n", 1)[0].strip())
    if len(commits) > 1:
        raise RevisionMismatchError(f"{folder} mixes files of the revisions {sorted(commits)}: delete it and "
                                    "download the dataset again at one revision")
    return commits.pop() if commits else None


def write(folder: Path, repo: str, revision: str, previous: dict | None = None) -> dict:
    """Lock every file of the copy at ``revision``, keeping the sums ``previous`` already holds."""
    if previous is not None and previous["revision"] != revision:
        raise RevisionMismatchError(f"{folder / LOCK_NAME} is for revision {previous['revision']}, the new files "
                                    f"for {revision}: download the dataset again into an empty folder")
    files = dict(previous["files"]) if previous else {}
    for rel in copy_files(folder):
        if rel not in files:
            path = folder / rel
            files[rel] = {"sha256": sha256(path), "bytes": path.stat().st_size}
    lock = {"repo": repo, "revision": revision, "files": files}
    save(folder / LOCK_NAME, lock)
    return lock


def save(path: Path, lock: dict) -> Path:
    """Write a lock (atomically)."""
    return write_text(path, yaml.safe_dump(lock, sort_keys=True, allow_unicode=True, width=120))


def check_revision(lock: dict, where: Path, expected: str | None, why: str, fix: str) -> None:
    """An error when ``lock`` is for another revision than ``expected`` (None: anything goes)."""
    if expected is not None and lock["revision"] != expected:
        raise RevisionMismatchError(f"{where} records revision {lock['revision']}, but {why} pins {expected}. {fix}")


def verify(folder: Path, local: dict | None, committed: dict | None, fix: str) -> int:
    """Check every file of the copy against the locks (the committed one's sums first); the
    number checked. A file in no lock, or whose sha256 differs, is a ChecksumError."""
    sums = {**(local or {}).get("files", {}), **(committed or {}).get("files", {})}
    checked = 0
    for rel in copy_files(folder):
        path = folder / rel
        if rel not in sums:
            raise ChecksumError(f"{path} is in no lock of this copy, so it cannot be checked. {fix}")
        actual = sha256(path)
        if actual != sums[rel]["sha256"]:
            source = "data/hub_locks" if committed and rel in committed["files"] else LOCK_NAME
            raise ChecksumError(f"{path}: sha256 {actual[:16]}... differs from {source} "
                                f"({sums[rel]['sha256'][:16]}...): the file is not the one downloaded. "
                                f"To fix: delete it and {fix[0].lower()}{fix[1:]}")
        checked += 1
    return checked
