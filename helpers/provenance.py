"""Where a result came from: the project's git commit, the library versions, and the numerics
key a score file is reused under (the engine's numerics version and torch's and transformers'
major.minor versions: a file written under another key is stale)."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("torch", "transformers", "pandas", "numpy", "outlines")
# Bump when a change to helpers/engine (or to how methods turn log-probs into scores) changes any
# number a score file holds: every stored file of an older version is then recomputed.
ENGINE_NUMERICS = "1"
NUMERICS_LIBRARIES = ("torch", "transformers")  # compared by major.minor
REUSE_STALE_ENV = "HELPERS_REUSE_STALE"  # "1": reuse score files of another numerics key, with a warning


def git_commit() -> str:
    """HEAD of the repository, with "-dirty" when tracked files changed; "unknown" outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "") if commit else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def library_versions() -> dict[str, str]:
    """Python and the versions of the libraries that shape the numbers."""
    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def major_minor(text: str) -> str:
    """"2.13.0+cpu" -> "2.13"."""
    return ".".join(text.split("+")[0].split(".")[:2])


def numerics() -> dict[str, str]:
    """The key a score file is reused under: the engine's numerics version and the major.minor
    versions of the libraries that compute the numbers."""
    out = {"engine": ENGINE_NUMERICS}
    for name in NUMERICS_LIBRARIES:
        try:
            out[name] = major_minor(version(name))
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def describe_numerics(key: dict | None) -> str:
    """"engine 1, torch 2.13, transformers 5.2" (or "no numerics key: written before keys were recorded")."""
    if not key:
        return "no numerics key (written before the engine recorded one)"
    return ", ".join(f"{k} {v}" for k, v in key.items())
