"""Reading a manifest (data/sources.yaml, or one a user gives :class:`~helpers.data.sources.DataSource`):
YAML whose ``files`` (and ``papers: {files}``) map each relative path to its sha256 and size. A
manifest that is not YAML, not such a mapping, or has an entry without a sha256 of 64 hex digits
is a :class:`ManifestError` naming the file, the entry and how to restore it."""
from __future__ import annotations

import functools
from pathlib import Path

import yaml

from .. import paths
from . import text_files
from .schema import DataFormatError

MANIFEST = paths.DATA / "sources.yaml"


class ManifestError(DataFormatError):
    """A manifest (data/sources.yaml or one a user gives) that cannot be read or has malformed entries."""


_MANIFEST_FORM = ("YAML with 'files' (and optionally 'origins' and 'papers': {files: ...}) mapping each relative "
                  "path to {sha256: 64 hex digits, bytes: its size}")


@functools.cache
def read_manifest(path: Path = MANIFEST) -> dict:
    """The manifest {"origins": ..., "files": {relative: {"sha256", "bytes"}}} (read once per path),
    every entry checked (a :class:`ManifestError` names the file, the entry and the fix)."""
    if not path.is_file():
        return {"origins": {}, "files": {}}
    fix = (f"restore it ({path.name} is committed: git checkout {path.name}), or write it again from a complete "
           "mirror with python -m helpers.data --write")
    try:
        body = yaml.safe_load(text_files.text(path, _MANIFEST_FORM, fix))
    except DataFormatError as err:
        raise ManifestError(str(err)) from None
    except yaml.YAMLError as err:
        raise ManifestError(f"{path}: not valid YAML ({str(err).splitlines()[0]}). To fix: {fix}") from None
    if not isinstance(body, dict) or not isinstance(body.get("files"), dict):
        raise ManifestError(f"{path}: expected a mapping with a 'files' mapping, got {type(body).__name__}. "
                            f"To fix: {fix}")
    papers = body.get("papers", {})
    sections = [("files", body["files"]), ("papers", papers.get("files", {}) if isinstance(papers, dict) else None)]
    for section, files in sections:
        if not isinstance(files, dict):
            raise ManifestError(f"{path}: the '{section}' section is not a mapping of files. To fix: {fix}")
        for name, entry in files.items():
            sha = entry.get("sha256") if isinstance(entry, dict) else None
            if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
                raise ManifestError(f"{path}: the entry {name!r} of '{section}' has no sha256 of 64 hex digits "
                                    f"({entry!r}). To fix: {fix}")
    return {"origins": {}, **body}
