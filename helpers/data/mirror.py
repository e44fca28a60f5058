"""Where the data files are: the local mirror (or data/raw after a download), checksummed.

Lookup order for a file: the mirror (``MINIMAL_PAIRS_DATA``, default ../shared/data), then
data/raw/ (files downloaded earlier), then, when downloads are switched on
(``set_source("download")``), its URL at the recorded commit. Every file listed in
data/sources.yaml is checked against its sha256 once per process.
"""
from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from .. import paths
from .schema import DataFormatError

_source = "mirror"
_verified: set[str] = set()


class DataNotFoundError(FileNotFoundError):
    """A data file that is neither in the mirror nor downloadable here."""


class ChecksumError(DataFormatError):
    """A data file whose sha256 differs from data/sources.yaml."""


def set_source(source: str) -> None:
    """"mirror" (default) or "download" (fetch missing files into data/raw/)."""
    global _source
    if source not in ("mirror", "download"):
        raise ValueError(f"source must be 'mirror' or 'download', got {source!r}")
    _source = source


def mirror_root() -> Path:
    root = paths.mirror()
    if root is None or not root.is_dir():
        where = root or paths.ROOT.parent / "shared" / "data"
        raise DataNotFoundError(
            f"no data mirror: looked for {where}. Set {paths.MIRROR_ENV} to a folder holding the mirror "
            "(data/sources.yaml lists each file's origin), or run 01_data_prep with source='download' "
            "on a machine with network access.")
    return root


def verify(path: Path, relative: str) -> None:
    """Check ``path`` against the manifest's sha256 for ``relative`` (once per process)."""
    from .sources import manifest, sha256

    if relative in _verified:
        return
    entry = manifest()["files"].get(relative)
    if entry is not None:
        actual = sha256(path)
        if actual != entry["sha256"]:
            raise ChecksumError(f"{path}: sha256 {actual[:16]}... differs from data/sources.yaml "
                                f"({entry['sha256'][:16]}...); the file is not the recorded version. "
                                "Restore it from its source (see data/sources.yaml).")
    _verified.add(relative)


def _download(relative: str, target: Path) -> bool:
    from .sources import download_url

    url = download_url(relative)
    if url is None:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError):
        return False
    tmp = target.with_suffix(target.suffix + ".part")
    tmp.write_bytes(data)
    tmp.replace(target)
    return True


def mirror_path(relative: str) -> Path:
    """The local copy of ``relative`` (a file or folder), checksummed; a how-to error if missing."""
    candidates = []
    root = paths.mirror()
    if root is not None:
        candidates.append(root / relative)
    candidates.append(paths.RAW / relative)
    for path in candidates:
        if path.exists():
            if path.is_file():
                verify(path, relative)
            return path
    if _source == "download" and _download(relative, paths.RAW / relative):
        verify(paths.RAW / relative, relative)
        return paths.RAW / relative
    from .sources import download_url

    looked = " and ".join(str(c) for c in candidates)
    how = (f"download it from {download_url(relative)}" if download_url(relative)
           else "get it from the origin listed in data/sources.yaml")
    tried = " Downloading failed (no network?)." if _source == "download" else ""
    raise DataNotFoundError(f"{relative} was not found (looked in {looked}).{tried} To fix: {how} into "
                            f"{paths.RAW}, or set {paths.MIRROR_ENV} to a complete mirror.")


def mirror_files(relative_dir: str, pattern: str) -> list[Path]:
    """The files matching ``pattern`` in a mirror folder, each checksummed."""
    folder = mirror_path(relative_dir)
    files = sorted(folder.glob(pattern))
    for f in files:
        verify(f, f"{relative_dir}/{f.relative_to(folder).as_posix()}")
    return files
