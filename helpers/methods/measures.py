"""Reductions of token log-probs to sentence scores (Ide et al. 2024; Lau et al. 2017).

LP, MeanLP, PenLP, SLLN-LP, LP per character and per byte, SLOR and the two Bayes factors, written once: methods, model cards and
tests use these. Log-probs are natural logs, as the engine returns them; the unigram model
is an add-one smoothed token table of the model's own tokenizer over a corpus.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .. import paths
from ..files import atomic_path
from ..settings import METHOD_SETTINGS

PENALTY_ALPHA = METHOD_SETTINGS["penlp_alpha"]  # Ide et al.'s (the setting's default: one place)


def lp(logprobs) -> float:
    """LP of one sentence: the float64 sum of its token log-probs."""
    a = np.asarray(logprobs, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("a measure needs the log-probs of at least one token")
    return float(a.sum())


# The reductions below take per-sentence sums and counts (numbers, arrays or Series) and work
# elementwise: every method, model card and test computes its measures through them.

def mean_lp(total, n_tokens):
    """MeanLP: LP divided by the token count."""
    return total / n_tokens


def length_penalty(n_tokens, alpha: float = PENALTY_ALPHA):
    """((5 + n) / 6) ** alpha, Wu et al. (2016)'s penalty as Ide et al. use it."""
    return ((5 + n_tokens) / 6) ** alpha


def pen_lp(total, n_tokens, alpha: float = PENALTY_ALPHA):
    """PenLP: LP / ((5 + len) / 6) ** alpha (Lau et al. 2017; Ide et al. fix alpha at 0.8), len = scored
    token count."""
    return total / length_penalty(n_tokens, alpha)


# SLLN-LP's exponent: ZhoBLiMP's released linking functions default to 0.5 (its README:
# SLLN-LP(x) = log P(x) / |x|^alpha, alpha in (0, 1); Liu et al. 2024, arXiv 2411.06096).
SLLN_ALPHA = 0.5


def slln_lp(total, n_tokens, alpha: float = SLLN_ALPHA):
    """SLLN-LP (Liu et al. 2024, ZhoBLiMP): log P(x) / |x| ** alpha, |x| the scored token count,
    alpha in (0, 1): sub-linear, between LP (alpha 0) and MeanLP (alpha 1)."""
    if not 0 < alpha < 1:
        raise ValueError(f"SLLN-LP's alpha must lie in (0, 1) (0 is LP, 1 is MeanLP), got {alpha}")
    return total / n_tokens ** alpha


def per_unit(total, units):
    """LP per unit of the sentence's text: per character (lm-eval's ``acc_norm``, lighteval's
    character norm) or per UTF-8 byte (lm-eval's byte-normalised accuracy)."""
    return total / units


def pmi(with_context, alone):
    """PMI-normalised LP: the target's LP after a context minus its LP alone, log P(x | c) - log P(x)
    (lighteval's PMI normalisation; how much the context raises the sentence)."""
    return with_context - alone


def text_units(text: str) -> tuple[int, int]:
    """(characters, UTF-8 bytes) of ``text``, as lm-eval counts them for its normalised accuracies."""
    return len(text), len(text.encode("utf-8"))


def slor(total, unigram_total, n_tokens):
    """SLOR: mean over tokens of log p(w | context) - log p_unigram(w)."""
    return (total - unigram_total) / n_tokens


def bf_uniform(total, n_tokens, log_vocab):
    """Bayes factor against a uniform model over the vocabulary: LP + len * log|V|."""
    return total + n_tokens * log_vocab


def bf_unigram(total, unigram_total):
    """Bayes factor against the unigram model: LP - sum of unigram log-probs."""
    return total - unigram_total


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
    files = [Path(f) for f in files]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"unigram corpus files not found: {missing}")
    key = hashlib.sha256(json.dumps([_tokenizer_hash(tokenizer)] + [
        [str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files]).encode()).hexdigest()[:20]
    cache = Path(cache_dir or paths.CACHE / "unigram") / f"{key}.npy"
    if cache.is_file():
        return UnigramTable(np.load(cache, allow_pickle=False))
    counts = np.zeros(len(tokenizer), dtype=np.int64)
    batch: list[str] = []

    def flush():
        # verbose=False: a corpus line longer than the model's context is counted, never fed
        # to the model, so transformers' "indexing errors" warning would only mislead
        for ids in tokenizer(batch, add_special_tokens=False, verbose=False)["input_ids"]:
            counts[:] += np.bincount(np.asarray(ids, dtype=np.int64), minlength=counts.size)[:counts.size]
        batch.clear()

    for line in _read_lines(files):
        batch.append(line)
        if len(batch) >= batch_lines:
            flush()
    if batch:
        flush()
    with atomic_path(cache) as tmp:
        with open(tmp, "wb") as handle:
            np.save(handle, counts, allow_pickle=False)
    return UnigramTable(counts)
