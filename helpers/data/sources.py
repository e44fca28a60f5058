"""Where the data files come from and where they are read: the origins and checksums of
data/sources.yaml, and :class:`DataSource`, the checksummed lookup every reader goes through.

A source looks for a file in its read-only mirror (``MINIMAL_PAIRS_DATA``, default
../shared/data beside the repository), then in its download folder (data/raw/); in mode
"download" a missing file is fetched from its origin at the recorded commit with pooch,
which checks the sha256 before the file lands. Every file read is checked against its sha256
in data/sources.yaml, and a file the manifest does not list is an error
(:class:`UnlistedFileError`): a maintainer adds its pattern to :data:`ORIGINS` and runs
``python -m helpers.data --write``. A researcher's own files (another corpus, edited pairs) are
read with ``DataSource(folder, manifest_file=None)``: unchecked, as they asked; a text file
passed as ``unigram_corpus`` or a model folder never goes through a source. A checksum is
computed once per (file, size, mtime). ``python -m helpers.data`` checks the whole mirror and
the papers folder (``--write`` rewrites the manifest).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pooch
import requests

from .. import paths
from .manifest_file import MANIFEST, ManifestError, read_manifest  # noqa: F401 - ManifestError: raised by read_manifest
from .schema import DataFormatError

MODES = ("mirror", "download")

# mirror folder -> origin. `repo_prefix` maps a mirror path to the path in the repository:
# repository path = repo_prefix + (mirror path without the folder).
ORIGINS = {
    "blimp": dict(url="https://github.com/alexwarstadt/blimp", commit="3e56b06", license="CC-BY 4.0",
                  repo_prefix="", files=["data/*.jsonl", "raw_results/summary/human_validation_summary.csv",
                                         "raw_results/summary/models_summary.jsonl"]),
    "climp": dict(url="https://github.com/beileixiang/CLiMP", commit="094a9e9", license="none stated",
                  repo_prefix="", files=["CLiMP_corpus/*_1000.csv"]),
    "syntaxgym/cpllab-syntactic-generalization": dict(
        url="https://github.com/cpllab/syntactic-generalization", commit="43f1f86", license="MIT",
        repo_prefix="", files=["test_suites/json/*.json", "test_suites/txt/*.txt", "data/raw/sg_results/*.csv"]),
    "zhoblimp": dict(url="https://github.com/sjtu-compling/ZhoBLiMP", commit="e840276", license="none stated",
                     repo_prefix="", files=["data/ZhoBLiMP/*.jsonl"]),
    "rublimp": dict(url="https://github.com/RussianNLP/RuBLiMP", commit="9f0d8df",
                    license="Apache 2.0 (sentences: copyright of the original corpora)", repo_prefix="",
                    files=["datasets/*.csv"]),
    "multiblimp-word-order": dict(url="https://github.com/jumelet/multiblimp (branch word_order)", commit="6ebca3d",
                                  license="Apache-2.0 (sentences: each Universal Dependencies treebank's own licence, "
                                          "some non-commercial)", repo_prefix="",
                                  files=["word_order/pairs/tight/*/*.csv"]),
    "turblimp": dict(url="https://github.com/ezgibasar/TurBLiMP", commit="297de13", license="CC BY 4.0 (its README)",
                     repo_prefix="", files=["data/base/augmented_*.csv"]),
    "qfrblimp": dict(url="https://github.com/davebulaval/QFrBLiMP", commit="bd14729", license="CC BY-NC-SA 4.0",
                     repo_prefix="", files=["datastore/QFrBLiMP/human_llm_annotations.tsv"]),
    "blimp-nl": dict(url="https://github.com/davebulaval/QFrBLiMP", commit="bd14729",
                     license="CC BY-NC-ND 4.0 (BLiMP-NL's article; the host repository's is CC BY-NC-SA 4.0)",
                     repo_prefix="", note="a copy kept in the QFrBLiMP repository (data.ru.nl is unreachable)",
                     files=["datastore/BLiMP-NL/Phenomenon*.csv"]),
    "bhs": dict(url="https://github.com/dariakryvosheieva/syntactic_generalization_multilingual", commit="7f44015",
                license="no licence file", repo_prefix="", files=["suites/*.json"]),
    "multiblimp-partial": dict(url="https://github.com/elliepreed/multiblimp-1", commit="59d5b5d",
                               license="CC-BY-4.0 (MultiBLiMP's Hub card)", repo_prefix="",
                               note="4 of MultiBLiMP 1.0's 101 languages: the Hub's <iso>/data.tsv as hf_hub_download "
                                    "saved them in a third-party repository",
                               files=["hf_cache/*/data.tsv"]),
    "jblimp": dict(url="https://github.com/osekilab/JBLiMP", commit="80dbcd8",
                   license="none granted (text excerpted from published works; research use)", repo_prefix="",
                   files=["data/validated/validated_minimal_pairs.jsonl", "data/raw/raw_minimal_pairs.jsonl"]),
    "sling": dict(url="https://github.com/Yixiao-Song/SLING_Data_Code", commit="5a7f791", license="MIT",
                  repo_prefix="", files=["SLING_Data/**/*.jsonl"]),
    "scamp": dict(url="https://github.com/tommccoy1/inductive-bias-distillation", commit="fe6540d", license="MIT",
                  repo_prefix="", files=["scamp/scamp_plausible/*.tsv", "scamp/scamp_implausible/*.tsv"]),
    "cola": dict(url="https://github.com/nyu-mll/CoLA", commit="6ba19a5", license="none in repo",
                 repo_prefix="", files=["cola_public/raw/*.tsv"]),
    "li": dict(url="https://github.com/SiyuanSong2004/language-introspection", commit="e8d4c5f", license="none stated",
               repo_prefix="", files=["LI_Large_pairs.csv"]),
    "hu-levy-2023": dict(url="https://github.com/jennhu/metalinguistic-prompting", commit="89d1b52",
                         license="no license file", repo_prefix="",
                         note="the Mandarin set comes from branch chinese @a8e6096",
                         files=["datasets/exp1/p18/corpus.csv", "datasets/exp1/news/corpus.csv",
                                "datasets/exp2/dtfit/corpus.csv", "datasets/exp3/blimp/corpus.csv",
                                "datasets/exp3/syntaxgym/corpus.csv", "datasets/exp3/syntaxgym/full_corpus.csv",
                                "datasets/exp3/mandarin/corpus.csv", "PROMPTS_transcribed.md"]),
    # Appendix D (Mandarin): files of branch chinese only; its results ship as results_zh.zip there
    **{f"hu-levy-2023/datasets/exp1/{name}": dict(
        url="https://github.com/jennhu/metalinguistic-prompting", commit="a8e6096", license="no license file",
        repo_prefix=f"datasets/exp1/{name}/", note="branch chinese", files=["corpus.csv"])
       for name in ("news_zh", "simple_zh")},
    "hu-levy-2023/results_zh": dict(url="https://github.com/jennhu/metalinguistic-prompting", commit="a8e6096",
                                    license="no license file", repo_prefix="", archive="results_zh.zip",
                                    note="branch chinese: extracted from results_zh.zip", files=["*/*.json"]),
    "ide2024-templates": dict(url="https://github.com/Yusuke196/llm-acceptability", commit="0d3e480",
                              license="no license file", repo_prefix="",
                              files=["templates_ll/*.txt", "prompts/*/*.json"]),
    "wikitext103-test": dict(url="https://github.com/Tylogi/TyloQuant", commit="", license="CC BY-SA 3.0",
                             repo_prefix="", files=["wikitext-raw_test.raw"]),
    "corpora/en-nltk-data": dict(url="https://github.com/nltk/nltk_data", commit="gh-pages",
                                 license="per corpus (see helpers/data/corpora.py)", repo_prefix="packages/corpora/",
                                 files=["*.zip"]),
    "corpora/en-nltk-2008": dict(url="https://github.com/nltk/nltk", commit="4dc39fb",
                                 license="per corpus (see helpers/data/corpora.py)", repo_prefix="",
                                 files=["corpora/gutenberg/*.txt", "corpora/reuters.tar.gz"]),
    "corpora/zh-sophonplus": dict(url="https://github.com/SophonPlus/ChineseNlpCorpus", commit="master",
                                  license="none stated", repo_prefix="datasets/",
                                  files=["dh_msra.zip", "online_shopping_10_cats.zip", "ChnSentiCorp_htl_all.csv",
                                         "waimai_10k.csv"]),
}


class DataNotFoundError(FileNotFoundError):
    """A data file that is neither in the mirror nor downloadable here."""


class ChecksumError(DataFormatError):
    """A data file whose sha256 differs from data/sources.yaml."""


class UnlistedFileError(ChecksumError):
    """A data file that data/sources.yaml does not list, so that its sha256 cannot be checked."""


def manifest() -> dict:
    """The project's manifest, data/sources.yaml."""
    return read_manifest(MANIFEST)


@functools.cache
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    return pooch.file_hash(str(path), alg="sha256")


def sha256(path: Path) -> str:
    """The file's sha256, computed once per (path, size, modification time)."""
    stat = path.stat()
    return _sha256(path.resolve(), stat.st_size, stat.st_mtime_ns)


def origin_of(relative: str) -> tuple[str, dict] | None:
    """The mirror folder and origin that ``relative`` belongs to (longest folder first)."""
    for folder in sorted(ORIGINS, key=len, reverse=True):
        if relative.startswith(folder + "/"):
            return folder, ORIGINS[folder]
    return None


def download_url(relative: str) -> str | None:
    """The raw-file URL of a mirror path at its recorded commit, if the origin is on GitHub
    (none for files extracted from an archive)."""
    found = origin_of(relative)
    if not found:
        return None
    folder, o = found
    if not o["commit"] or o.get("archive"):
        return None
    repo = o["url"].removeprefix("https://github.com/")
    return f"https://raw.githubusercontent.com/{repo}/{o['commit']}/{o['repo_prefix']}{relative[len(folder) + 1:]}"


@dataclass(frozen=True)
class DataSource:
    """Where data files are read: ``mirror`` (read-only, may be None), then ``raw_dir``;
    ``mode="download"`` fetches missing files into ``raw_dir``. Every file read must be listed
    in ``manifest_file`` with its sha256; ``manifest_file=None`` reads your own files unchecked."""

    mirror: Path | None
    raw_dir: Path = paths.RAW
    mode: Literal["mirror", "download"] = "mirror"
    manifest_file: Path | None = MANIFEST

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be 'mirror' or 'download', got {self.mode!r}")
        if self.manifest_file is not None and not Path(self.manifest_file).is_file():
            raise DataNotFoundError(
                f"manifest {self.manifest_file} does not exist. To fix: leave manifest_file out (the project's "
                f"{MANIFEST.relative_to(paths.ROOT)}), give a manifest file, or pass manifest_file=None to "
                "read your own files unchecked")

    @classmethod
    def default(cls, mode: Literal["mirror", "download"] = "mirror") -> DataSource:
        """The mirror named by ``MINIMAL_PAIRS_DATA`` now (default ../shared/data), then data/raw/."""
        return cls(paths.mirror(), paths.RAW, mode)

    @property
    def checksums(self) -> dict:
        """{relative path: {"sha256", "bytes"}}: the files the manifest lists (none without one)."""
        return read_manifest(self.manifest_file)["files"] if self.manifest_file is not None else {}

    def root(self) -> Path:
        """The mirror folder; a how-to error when there is none."""
        if self.mirror is None or not self.mirror.is_dir():
            where = self.mirror or paths.DEFAULT_MIRROR
            raise DataNotFoundError(
                f"no data mirror: looked for {where}. Set {paths.MIRROR_ENV} to a folder holding the mirror "
                "(data/sources.yaml lists each file's origin), or run 01_data_prep with source='download' "
                "on a machine with network access.")
        return self.mirror

    def verify(self, path: Path, relative: str) -> Path:
        """``path`` if its sha256 is the manifest's for ``relative``; a file the manifest does not
        list is an :class:`UnlistedFileError` (without a manifest nothing is checked)."""
        if self.manifest_file is None:
            return path
        entry = self.checksums.get(relative)
        if entry is None:
            raise UnlistedFileError(
                f"{path}: {relative} is not listed in {self.manifest_file.name}, so its sha256 cannot be "
                "checked. To fix: add it to ORIGINS in helpers/data/sources.py and run python -m helpers.data "
                "--write (or, for your own files, read them with DataSource(folder, manifest_file=None)).")
        actual = sha256(path)
        if actual != entry["sha256"]:
            raise ChecksumError(
                f"{path}: sha256 {actual[:16]}... differs from {self.manifest_file.name} "
                f"({entry['sha256'][:16]}...); the file is not the recorded version of {relative}. "
                f"To fix: restore it from {download_url(relative) or 'its origin in data/sources.yaml'} "
                "(or delete it from the download folder and read it again with mode='download').")
        return path

    def has(self, relative: str) -> bool:
        """Whether ``relative`` (a file or folder) is here, in the mirror or in ``raw_dir`` (unchecked)."""
        return any((base / relative).exists() for base in (self.mirror, self.raw_dir) if base is not None)

    def path(self, relative: str) -> Path:
        """The local copy of ``relative`` (a file or folder), checksummed; a how-to error if missing.
        In mode "download", the listed files that ``raw_dir`` lacks are fetched first."""
        if self.mirror is not None and (self.mirror / relative).exists():
            return self._checked(self.mirror / relative, relative)
        if self.mode == "download":
            self._download(relative)
        if (self.raw_dir / relative).exists():
            return self._checked(self.raw_dir / relative, relative)
        raise DataNotFoundError(self._not_found(relative))

    def files(self, relative_dir: str, pattern: str) -> list[Path]:
        """The files matching ``pattern`` in a data folder, sorted, each checksummed."""
        folder = self.path(relative_dir)
        found = sorted(folder.glob(pattern))
        return [self.verify(f, f"{relative_dir}/{f.relative_to(folder).as_posix()}") for f in found]

    def _checked(self, path: Path, relative: str) -> Path:
        return self.verify(path, relative) if path.is_file() else path

    def _not_found(self, relative: str, failure: str = "") -> str:
        looked = " and ".join(str(base / relative) for base in (self.mirror, self.raw_dir) if base is not None)
        url = download_url(relative)
        how = f"download it from {url}" if url else "get it from the origin listed in data/sources.yaml"
        return (f"{relative} was not found (looked in {looked}).{failure} To fix: {how} into {self.raw_dir}, "
                f"or set {paths.MIRROR_ENV} to a complete mirror.")

    def _download(self, relative: str) -> None:
        """Fetch into ``raw_dir`` the listed files that it lacks: ``relative`` itself, or every
        listed file under the folder ``relative``. pooch checks each sha256 before the file lands."""
        listed = self.checksums
        wanted = [relative] if relative in listed else [f for f in sorted(listed) if f.startswith(relative + "/")]
        urls = {f: download_url(f) for f in wanted}
        if not wanted or None in urls.values():
            return  # nothing this source knows how to download
        store = pooch.create(path=self.raw_dir, base_url="", urls=urls, allow_updates=False,
                             registry={f: f"sha256:{listed[f]['sha256']}" for f in wanted})
        for f in wanted:
            try:
                store.fetch(f)
            except (requests.exceptions.RequestException, OSError) as err:
                raise DataNotFoundError(self._not_found(
                    relative, f" Downloading {urls[f]} failed ({type(err).__name__}: no network?).")) from None
            except ValueError as err:  # the download (or an older copy in raw_dir) has another sha256
                raise ChecksumError(f"{urls[f]}: {err} The origin no longer serves the recorded version of {f}; "
                                    f"delete {self.raw_dir / f} if it exists, or use a mirror.") from None

    def check_all(self) -> int:
        """Check every manifest file in the mirror; the number checked."""
        root = self.root()
        for relative in self.checksums:
            self.verify(root / relative, relative)
        return len(self.checksums)


def resolve(source: DataSource | None) -> DataSource:
    """``source``, or the default source built from the environment now."""
    return DataSource.default() if source is None else source


def build(mirror: Path) -> dict:
    """The manifest of every file the readers use, with checksums, from a mirror folder."""
    files = {}
    for folder, o in ORIGINS.items():
        for pattern in o["files"]:
            matches = sorted((mirror / folder).glob(pattern))
            if not matches:
                raise FileNotFoundError(f"no file matches {folder}/{pattern} in {mirror}")
            for path in matches:
                rel = path.relative_to(mirror).as_posix()
                files[rel] = {"sha256": sha256(path), "bytes": path.stat().st_size}
    origins = {k: {kk: vv for kk, vv in v.items() if kk != "files"} for k, v in ORIGINS.items()}
    return {"origins": origins, "files": files}
