"""Where every data file comes from: URL, commit, license and sha256 (data/sources.yaml).

    python -m helpers.data.sources          # check every file of the mirror against the manifest
    python -m helpers.data.sources --write  # (maintainers) rewrite the manifest from the mirror
"""
from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import yaml

from ..paths import DATA

MANIFEST = DATA / "sources.yaml"

# mirror folder -> origin. `repo_prefix` maps a mirror path to the path in the repository:
# repository path = repo_prefix + (mirror path without the folder).
ORIGINS = {
    "blimp": dict(url="https://github.com/alexwarstadt/blimp", commit="3e56b06", license="CC-BY 4.0",
                  repo_prefix="", files=["data/*.jsonl", "raw_results/summary/human_validation_summary.csv"]),
    "climp": dict(url="https://github.com/beileixiang/CLiMP", commit="094a9e9", license="none stated",
                  repo_prefix="", files=["CLiMP_corpus/*_1000.csv"]),
    "syntaxgym/cpllab-syntactic-generalization": dict(
        url="https://github.com/cpllab/syntactic-generalization", commit="43f1f86", license="MIT",
        repo_prefix="", files=["test_suites/json/*.json"]),
    "zhoblimp": dict(url="https://github.com/sjtu-compling/ZhoBLiMP", commit="e840276", license="none stated",
                     repo_prefix="", files=["data/ZhoBLiMP/*.jsonl"]),
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


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def origin_of(relative: str) -> tuple[str, dict] | None:
    """The mirror folder and origin that ``relative`` belongs to (longest folder first)."""
    for folder in sorted(ORIGINS, key=len, reverse=True):
        if relative.startswith(folder + "/"):
            return folder, ORIGINS[folder]
    return None


def download_url(relative: str) -> str | None:
    """The raw-file URL of a mirror path at its recorded commit, if the origin is on GitHub."""
    found = origin_of(relative)
    if not found:
        return None
    folder, o = found
    if not o["commit"]:
        return None
    repo = o["url"].removeprefix("https://github.com/")
    return f"https://raw.githubusercontent.com/{repo}/{o['commit']}/{o['repo_prefix']}{relative[len(folder) + 1:]}"


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


_manifest_cache: dict | None = None


def manifest() -> dict:
    global _manifest_cache
    if _manifest_cache is None:
        _manifest_cache = yaml.safe_load(MANIFEST.read_text()) if MANIFEST.is_file() else {"files": {}}
    return _manifest_cache


def main(argv=None) -> int:
    from .mirror import mirror_root, verify

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite data/sources.yaml from the mirror")
    args = ap.parse_args(argv)
    root = mirror_root()
    if args.write:
        MANIFEST.write_text("# Data sources: origin, commit, license and sha256 of every file the readers use.\n"
                            "# Written by `python -m helpers.data.sources --write`; checked on every read.\n"
                            + yaml.safe_dump(build(root), sort_keys=True, allow_unicode=True, width=120))
        print(f"wrote {MANIFEST}")
        return 0
    for rel in manifest()["files"]:
        verify(root / rel, rel)
    print(f"{len(manifest()['files'])} files match their checksums in {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
