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
# Derived data and results can be redirected (tests and sweeps use scratch folders).
PROCESSED = Path(os.environ.get("HELPERS_PROCESSED_DIR") or DATA / "processed")
CACHE = DATA / "cache"
MODELS = DATA / "models"
OUTPUTS = Path(os.environ.get("HELPERS_OUTPUTS_DIR") or ROOT / "outputs")
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
