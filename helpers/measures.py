"""Reductions of token log-probs to sentence scores (Ide et al. 2024; Lau et al. 2017).

Every function takes the token log-probs of one sentence (natural log, as the engine
returns them) and, where needed, the unigram log-probs of the same tokens.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

PENALTY_ALPHA = 0.8


def _arr(logprobs: Sequence[float]) -> np.ndarray:
    a = np.asarray(logprobs, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("a measure needs the log-probs of at least one token")
    return a


def lp(logprobs) -> float:
    """LP: sum of token log-probs."""
    return float(_arr(logprobs).sum())


def meanlp(logprobs) -> float:
    """MeanLP: LP divided by the token count."""
    a = _arr(logprobs)
    return float(a.sum() / a.size)


def length_penalty(n_tokens: int, alpha: float = PENALTY_ALPHA) -> float:
    """((5 + n) / 6) ** alpha, Wu et al. (2016)'s penalty as Ide et al. use it."""
    return ((5 + n_tokens) / 6) ** alpha


def penlp(logprobs, alpha: float = PENALTY_ALPHA) -> float:
    """PenLP: LP / ((5 + len) / 6) ** 0.8, len = scored token count."""
    a = _arr(logprobs)
    return float(a.sum() / length_penalty(a.size, alpha))


def slor(logprobs, unigram_logprobs) -> float:
    """SLOR: mean over tokens of log p(w | context) - log p_unigram(w)."""
    a, u = _arr(logprobs), _arr(unigram_logprobs)
    if a.shape != u.shape:
        raise ValueError(f"{a.size} token log-probs but {u.size} unigram log-probs")
    return float((a - u).sum() / a.size)


def bf_uniform(logprobs, vocab_size: int) -> float:
    """Bayes factor against a uniform model over the vocabulary: LP + len * log|V|."""
    a = _arr(logprobs)
    return float(a.sum() + a.size * math.log(vocab_size))


def bf_unigram(logprobs, unigram_logprobs) -> float:
    """Bayes factor against the unigram model: LP - sum of unigram log-probs."""
    a, u = _arr(logprobs), _arr(unigram_logprobs)
    if a.shape != u.shape:
        raise ValueError(f"{a.size} token log-probs but {u.size} unigram log-probs")
    return float(a.sum() - u.sum())


class UnigramTable:
    """Add-one smoothed unigram log-probs over a tokenizer's vocabulary."""

    def __init__(self, counts: np.ndarray):
        self.counts = np.asarray(counts, dtype=np.int64)
        total = self.counts.sum() + self.counts.size
        self.logprobs = np.log((self.counts + 1) / total)

    def __call__(self, token_ids: Sequence[int]) -> np.ndarray:
        return self.logprobs[np.asarray(token_ids, dtype=np.int64)]

    @property
    def n_tokens(self) -> int:
        return int(self.counts.sum())


def _tokenizer_hash(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = backend.to_str() if backend is not None else json.dumps(sorted(tokenizer.get_vocab().items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_lines(files: Iterable[Path]) -> Iterable[str]:
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    yield line.rstrip("\n")


def unigram_table(tokenizer, files: Sequence[str | Path], cache_dir: str | Path | None = None,
                  batch_lines: int = 2000) -> UnigramTable:
    """Token frequencies of ``files`` under ``tokenizer``, add-one smoothed, cached on disk.

    The cache key covers the tokenizer and each file's path, size and modification time.
    """
    from .paths import CACHE

    files = [Path(f) for f in files]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"unigram corpus files not found: {missing}")
    key = hashlib.sha256(json.dumps([_tokenizer_hash(tokenizer)] + [
        [str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files]).encode()).hexdigest()[:20]
    cache = Path(cache_dir or CACHE / "unigram") / f"{key}.npy"
    if cache.is_file():
        return UnigramTable(np.load(cache, allow_pickle=False))
    counts = np.zeros(len(tokenizer), dtype=np.int64)
    batch: list[str] = []

    def flush():
        for ids in tokenizer(batch, add_special_tokens=False)["input_ids"]:
            counts[:] += np.bincount(np.asarray(ids, dtype=np.int64), minlength=counts.size)[:counts.size]
        batch.clear()

    for line in _read_lines(files):
        batch.append(line)
        if len(batch) >= batch_lines:
            flush()
    if batch:
        flush()
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp.npy")
    np.save(tmp, counts, allow_pickle=False)
    tmp.replace(cache)
    return UnigramTable(counts)
