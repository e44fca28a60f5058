"""Every path of the project, derived from the repository root.

Folders that an environment variable can redirect are functions that read the variable
when called (tests and sweeps point them at scratch folders):

- ``mirror()``: the read-only data mirror, ``MINIMAL_PAIRS_DATA`` (default ``../shared/data``
  beside the repository, when that folder exists);
- ``papers()``: the published numbers of the papers as CSV, ``MINIMAL_PAIRS_PAPERS`` (default
  ``../shared/papers`` beside the repository, when that folder exists);
- ``processed()``: the canonical tables, ``HELPERS_PROCESSED_DIR`` (default data/processed);
- ``outputs()`` and ``scores()``: results, ``HELPERS_OUTPUTS_DIR`` (default outputs/);
- ``embeddings()``: the sentence-embedding store, ``HELPERS_EMBEDDINGS_DIR`` (default
  data/cache/embeddings);
- ``model_cache()``: model files fetched from the package index (SmolLM2's GGUF),
  ``HELPERS_MODEL_CACHE`` (default data/cache/models);
- ``hub_offline()``: whether ``HF_HUB_OFFLINE`` asks for no network (read the way
  huggingface_hub reads it), the one place the project reads it.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
RAW = DATA / "raw"
CACHE = DATA / "cache"
MODELS = DATA / "models"
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_MIRROR = ROOT.parent / "shared" / "data"
DEFAULT_PAPERS = ROOT.parent / "shared" / "papers"

MIRROR_ENV = "MINIMAL_PAIRS_DATA"
PAPERS_ENV = "MINIMAL_PAIRS_PAPERS"
PROCESSED_ENV = "HELPERS_PROCESSED_DIR"
OUTPUTS_ENV = "HELPERS_OUTPUTS_DIR"
EMBEDDINGS_ENV = "HELPERS_EMBEDDINGS_DIR"
MODEL_CACHE_ENV = "HELPERS_MODEL_CACHE"


def mirror() -> Path | None:
    """The data mirror folder, or None when there is none."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None


def papers() -> Path | None:
    """The folder of the papers' published numbers (CSV), or None when there is none."""
    configured = os.environ.get(PAPERS_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return DEFAULT_PAPERS if DEFAULT_PAPERS.is_dir() else None


def processed() -> Path:
    """The folder of the canonical tables (data/processed unless redirected)."""
    return Path(os.environ.get(PROCESSED_ENV) or DATA / "processed")


def outputs() -> Path:
    """The folder of tables, figures, executed notebooks and scores (outputs/ unless redirected)."""
    return Path(os.environ.get(OUTPUTS_ENV) or ROOT / "outputs")


def scores() -> Path:
    """The score store, outputs()/scores."""
    return outputs() / "scores"


def embeddings() -> Path:
    """The store of sentence embeddings, one file per (embedding model, dataset)."""
    return Path(os.environ.get(EMBEDDINGS_ENV) or CACHE / "embeddings")


def model_cache() -> Path:
    """Model files fetched from the package index, one folder per file's sha256."""
    return Path(os.environ.get(MODEL_CACHE_ENV) or CACHE / "models").expanduser()


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` is set to a true value ("1", "true", "yes", "on")."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """Environment variables set (a value) or removed (None) inside the block, and restored as
    they were after it, also on an error (child processes started inside inherit them)."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        _set_environment(values)
        yield
    finally:
        _set_environment(saved)


def _set_environment(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
