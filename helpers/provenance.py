"""Where a result came from: the project's git commit and the library versions."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("torch", "transformers", "pandas", "numpy", "outlines")


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
