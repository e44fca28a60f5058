"""Sentence embeddings as a dataset-level artefact: one file per (embedding model, dataset).

A sentence's embedding depends on its text and the embedding model, not on the language model
being judged, so every model's 07 run (and every job of a sweep) reads the same file,
``data/cache/embeddings/<model id>/<dataset>.parquet`` (``HELPERS_EMBEDDINGS_DIR`` moves the
folder): one row per distinct sentence (``key``, the SHA-256 of the text; ``vector``, float32),
and in the file's metadata its provenance (:func:`provenance`: the embedding model with its
version and the libraries', the dataset and the SHA-256 of its processed file, the text hashes'
digest, how many of the dataset's sentences it holds, dates and seconds spent). A run embeds only
the sentences it needs that the file lacks, and adds them; ``python -m helpers embed --datasets
...`` embeds whole datasets ahead. A lock per file makes a second process wait for the first and
then read its vectors instead of computing them again.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from .. import paths
from ..data import load_processed, processed_path
from ..data.sources import sha256
from ..files import atomic_path
from ..progress import bar as progress_bar
from ..provenance import library_versions
from . import embeddings
from .embeddings import PACKAGED, cosine_distances, model_id, text_key

META_KEY = b"embeddings"
FORMAT = 1
LIBRARIES = ("sentence-transformers", "transformers", "torch", "numpy")


def cache_folder(model: str, cache_dir: str | Path | None = None) -> Path:
    """``<cache_dir>/<model id>/`` (default :func:`helpers.paths.embeddings`, data/cache/embeddings):
    the model id carries a packaged model's version, so a new version gets new files."""
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", model_id(model)).strip("_")
    return Path(cache_dir or paths.embeddings()) / safe


def store_path(model: str, dataset: str, cache_dir: str | Path | None = None) -> Path:
    if not dataset or "/" in dataset:
        raise ValueError(f"embeddings are stored per dataset: give its name (e.g. 'blimp_hu2025'), got {dataset!r}")
    return cache_folder(model, cache_dir) / f"{dataset}.parquet"


def read_store(path: Path) -> tuple[dict[bytes, np.ndarray], dict]:
    """The vectors of a store file by text key, and its provenance ({} and {} when absent)."""
    if not path.is_file():
        return {}, {}
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[META_KEY])
    column = table.column("vector").combine_chunks()
    vectors = column.flatten().to_numpy().reshape(len(table), column.type.list_size)
    return dict(zip((k.encode("ascii") for k in table.column("key").to_pylist()), vectors)), meta


def provenance(model: str, dataset: str, cache_dir: str | Path | None = None) -> dict:
    """What the store file of (``model``, ``dataset``) records about its vectors ({} without one)."""
    path = store_path(model, dataset, cache_dir)
    return json.loads(pq.read_schema(path).metadata[META_KEY]) if path.is_file() else {}


def _versions(model: str) -> dict[str, str]:
    """Python and the versions of the libraries (and the package of a packaged model) that made the vectors."""
    out = {"python": library_versions()["python"]}
    for name in (*LIBRARIES, *([PACKAGED[model][0]] if model in PACKAGED else [])):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def dataset_sentences(dataset: str) -> list[str]:
    """Every distinct sentence of the processed dataset (both sides of pairs, or single sentences)."""
    frame = load_processed(dataset, prepared_only=True)
    columns = [c for c in ("good", "bad", "sentence") if c in frame]
    if not columns:
        raise ValueError(f"{dataset} has no good/bad or sentence column to embed")
    return list(dict.fromkeys(str(t) for c in columns for t in frame[c].dropna()))


def _processed_file(dataset: str) -> Path | None:
    """The dataset's processed file, or None (not prepared, or a name the project does not know)."""
    try:
        path = processed_path(dataset)
    except KeyError:
        return None
    return path if path.is_file() else None


def _dataset_record(dataset: str, stored: dict) -> dict:
    """The processed file the vectors belong to (name, SHA-256) and how much of it they cover."""
    path = _processed_file(dataset)
    if path is None:
        return {"processed_file": None, "processed_sha256": None, "dataset_sentences": None, "complete": None}
    wanted = {text_key(t) for t in dataset_sentences(dataset)}
    return {"processed_file": path.name, "processed_sha256": sha256(path), "dataset_sentences": len(wanted),
            "complete": wanted <= stored.keys()}


def _write(path: Path, vectors: dict[bytes, np.ndarray], meta: dict) -> None:
    keys = sorted(vectors)
    matrix = np.stack([vectors[k] for k in keys]).astype(np.float32)
    table = pa.table({"key": pa.array([k.decode("ascii") for k in keys], pa.string()),
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel(), pa.float32()),
                                                                  matrix.shape[1])})
    meta = meta | {"texts": len(keys), "dim": int(matrix.shape[1]),
                   "texts_sha256": hashlib.sha256(b"".join(keys)).hexdigest()}
    table = table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """torch's CPU threads set to ``threads`` inside the block (None: left as they are)."""
    if threads is None:
        yield
        return
    import torch

    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive number of CPU threads or None, got {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _compute(texts: list[str], model: str, dataset: str, batch_size: int, device: str | None,
             progress: bool) -> np.ndarray:
    """Vectors of ``texts``: cut by length (a batch pads little), the batches in a shuffled
    order, so that the bar's rate (sentences per second) is the whole run's from the start."""
    encoder = embeddings.load_encoder(model, device)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    random.Random(0).shuffle(chunks)
    out = np.empty((len(texts), 0), dtype=np.float32)
    bar = progress_bar(total=len(texts), unit="sentence", disable=not progress,
                       desc=f"embedding {len(texts):,} sentences of {dataset} with {model} "
                            "(once per dataset; reused by every model)")
    try:
        for chunk in chunks:
            vectors = np.asarray(encoder.encode([texts[i] for i in chunk]), dtype=np.float32)
            if vectors.shape[0] != len(chunk):
                raise RuntimeError(f"{model} returned {vectors.shape[0]} vectors for {len(chunk)} texts")
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
            bar.update(len(chunk))
    finally:
        bar.close()
    return out


def _locked(path: Path, what: str) -> FileLock:
    lock = FileLock(str(path.with_name(path.name + ".lock")))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"another process is embedding {what}; waiting for it, then reading its vectors", flush=True)
        lock.acquire()
    return lock


def embed(texts: Sequence[str], model: str, dataset: str, *, batch_size: int = 512,
          cache_dir: str | Path | None = None, device: str | None = None, progress: bool = True,
          threads: int | None = None) -> np.ndarray:
    """Embeddings of ``texts`` (sentences of ``dataset``; one row each, in order) with ``model``,
    read from the (model, dataset) store file; those it lacks are computed and added. ``threads``:
    torch's CPU threads while computing (None: as set; 1 is much faster on a machine whose cores
    other processes keep busy)."""
    texts = [str(t) for t in texts]
    keys = [text_key(t) for t in texts]
    path = store_path(model, dataset, cache_dir)
    stored, _ = read_store(path)
    if any(k not in stored for k in keys):
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path, f"{dataset} with {model}"):
            stored, meta = read_store(path)  # another process may have added them meanwhile
            by_key = dict(zip(keys, texts))
            todo = [k for k in by_key if k not in stored]
            if todo:
                start = time.perf_counter()
                with _torch_threads(threads):
                    stored.update(zip(todo, _compute([by_key[k] for k in todo], model, dataset, batch_size,
                                                     device, progress)))
                now = datetime.now(timezone.utc).isoformat(timespec="seconds")
                _write(path, stored, {
                    "format": FORMAT, "embedding_model": model, "embedding_model_id": model_id(model),
                    "libraries": _versions(model), "dataset": dataset, **_dataset_record(dataset, stored),
                    "created": meta.get("created", now), "updated": now,
                    "computed": meta.get("computed", 0) + len(todo),
                    "seconds": round(meta.get("seconds", 0.0) + time.perf_counter() - start, 1)})
    return np.stack([stored[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)


def pair_distances(good: Sequence[str], bad: Sequence[str], model: str, dataset: str, **options) -> np.ndarray:
    """Cosine distance between the embeddings of each pair's two sentences (one ``embed`` call)."""
    good, bad = list(good), list(bad)
    if len(good) != len(bad):
        raise ValueError(f"{len(good)} good and {len(bad)} bad sentences: give one of each per pair")
    vectors = embed(good + bad, model, dataset, **options)
    return cosine_distances(vectors[:len(good)], vectors[len(good):])


def precompute(dataset: str, model: str, **options) -> Path:
    """Embed every sentence of the processed ``dataset`` with ``model`` into its store file."""
    embed(dataset_sentences(dataset), model, dataset, **options)
    return store_path(model, dataset, options.get("cache_dir"))
