"""Every path of the project, derived from the repository root.

The data mirror (read-only copies of public datasets) comes from one environment
variable, ``MINIMAL_PAIRS_DATA``; it defaults to ``../shared/data`` beside the
repository when that folder exists.
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
RAW = DATA / "raw"
PROCESSED = DATA / "processed"
CACHE = DATA / "cache"
MODELS = DATA / "models"
OUTPUTS = ROOT / "outputs"
SCORES = OUTPUTS / "scores"
NOTEBOOKS = ROOT / "notebooks"

MIRROR_ENV = "MINIMAL_PAIRS_DATA"


def mirror() -> Path | None:
    """The data mirror folder, or None when there is none."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    default = ROOT.parent / "shared" / "data"
    return default if default.is_dir() else None
