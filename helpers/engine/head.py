"""The vocabulary head every scorer shares, and its out-of-memory halving.

:func:`logprobs_at` turns hidden states at the positions read into log-probs: the output
projection runs once per position, in chunks that bound memory at rows x vocabulary floats,
with one fused float32 log-softmax per chunk and float64 results (and, where asked, the log of the
probability mass of a class of tokens at each position read, and the greedy token there).
:func:`halving_on_oom`
runs a batch and, on CUDA out-of-memory, halves it and goes on (never within a partial run,
whose batches must stay the whole run's).
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Callable, Sequence, TypeVar

import numpy as np
import torch

# Logits computed at once, by chunks of positions (and off the CPU by a vocabulary slice): bounds memory at
# rows x vocabulary floats (on the CPU a call beyond FUSED_ELEMENTS runs by slices where the head can).
LOGIT_ELEMENTS = {"cpu": 1 << 23}
LOGIT_ELEMENTS_ELSEWHERE = 1 << 25
# On these devices (the CPU) the head keeps its logits within the caches: a call of at most FUSED_ELEMENTS
# logits runs as one chunk of positions through the fused log-softmax (16 MiB of logits and as much output,
# within a 32 MiB L3); a larger one, of a head that can slice its vocabulary, slice by slice over every
# position read, at most SLICE_ELEMENTS logits a slice (2 MiB). On the CPU against 2^23-logit chunks:
# 1.1x faster on an 8k vocabulary from 900 positions a call, 1.3x on 49k and 262k, and as fast below
# (benchmarks/bench_head_blocks.py). Elsewhere a head slices only where chunks of positions would be short.
FUSED_ELEMENTS = {"cpu": 1 << 22}
SLICE_ELEMENTS = {"cpu": 1 << 19}
# A head whose chunks would hold fewer positions than this runs by vocabulary slices instead:
# chunks of few positions read the whole output embedding each (on the CPU: a vocabulary of
# 262,144, 32 positions a chunk, ran the head 2.1x slower).
SLICE_BELOW_ROWS = 256
MIN_SLICE = 1024  # vocabulary entries of a slice at least

T = TypeVar("T")


def logprobs_at(project: Callable[[torch.Tensor], torch.Tensor], vocab: int, hidden: torch.Tensor,
                which: np.ndarray, targets: np.ndarray, mass: torch.Tensor | None = None,
                greedy: bool = False) -> tuple[np.ndarray, ...]:
    """(log softmax(project(h))[t], project(h)[t]) for each entry, h = hidden[which[entry]]
    ([positions, width]) and t = targets[entry]: float32 arithmetic, float64 results, the
    projection (the output embedding, or the identity for logits already computed) run once
    per position. With ``mass`` ([vocab] bool, on the logits' device) a third array: log of the
    probability of the ``mass`` tokens at each entry's position, logsumexp(logits of the class)
    - logsumexp(logits), from the same logits. With ``greedy``, one more array: the id of the
    highest logit at each entry's position (the first of equal ones, as ``argmax``), from the same
    logits: whether the target is the greedy token. A projection that computes a slice of the
    vocabulary (:meth:`helpers.engine.projection.Projection.columns`) runs slice by slice
    over every position at once (:func:`_by_vocabulary`) where its logits would not fit the CPU's caches
    (:data:`FUSED_ELEMENTS`), and elsewhere where chunks of positions would be short
    (:data:`SLICE_BELOW_ROWS`); others position chunk by chunk."""
    kind = hidden.device.type
    if kind in FUSED_ELEMENTS:
        by_slices = hidden.shape[0] * vocab > FUSED_ELEMENTS[kind]
    else:
        by_slices = LOGIT_ELEMENTS.get(kind, LOGIT_ELEMENTS_ELSEWHERE) // vocab < SLICE_BELOW_ROWS
    with getattr(project, "ready", nullcontext)():  # a head offloaded by a hook: its weights loaded once
        if by_slices and hidden.shape[0] and getattr(project, "sliceable", False):
            return _by_vocabulary(project, vocab, hidden, which, targets, mass, greedy)
        return _by_positions(project, vocab, hidden, which, targets, mass, greedy)


def _by_vocabulary(project, vocab: int, hidden: torch.Tensor, which: np.ndarray, targets: np.ndarray,
                   mass: torch.Tensor | None, greedy: bool = False) -> tuple[np.ndarray, ...]:
    """The head slice by slice of the vocabulary, every position at once: the output embedding
    is read once per call whatever its size (a 262k-token head read per chunk of 32 positions
    made the head 2.5x slower), and each position's logsumexp gathers over the slices."""
    rows = hidden.shape[0]
    kind = hidden.device.type
    elements = SLICE_ELEMENTS.get(kind) or LOGIT_ELEMENTS.get(kind, LOGIT_ELEMENTS_ELSEWHERE)
    width = min(vocab, max(MIN_SLICE, elements // rows))
    h = project.prepared(hidden)
    device = h.device
    at, tokens = torch.from_numpy(which).to(device), torch.from_numpy(targets).to(device)
    # the slices' logsumexps combined in float64 (Apple's MPS has none): the combination adds no rounding
    # per slice (in float32, 150 slices of a 262k vocabulary were 8.6e-6 off float64, against 1.6e-6)
    wide = torch.float32 if device.type == "mps" else torch.float64
    total = torch.full((rows,), -math.inf, device=device, dtype=wide)
    of_class = torch.full((rows,), -math.inf, device=device, dtype=wide) if mass is not None else None
    raw = torch.empty(len(which), device=device)
    top = torch.full((rows,), -math.inf, device=device) if greedy else None
    top_id = torch.zeros(rows, dtype=torch.long, device=device) if greedy else None
    scratch = torch.empty(rows * width, device=device)  # one slice's logits, written in place by every slice
    for start in range(0, vocab, width):
        logits = project.columns(h, start, min(start + width, vocab), out=scratch)  # [positions, slice] float32
        if greedy:  # a later slice wins only with a higher logit: the first of equal ones, as argmax
            peak, at_best = logits.max(dim=-1)
            higher = peak > top
            top, top_id = torch.where(higher, peak, top), torch.where(higher, at_best + start, top_id)
        else:
            peak = logits.amax(dim=-1)
        inside = (tokens >= start) & (tokens < start + width)
        raw[inside] = logits[at[inside], tokens[inside] - start]
        if of_class is not None:
            part = mass[start:start + width]
            if bool(part.any()):
                of_class = torch.logaddexp(of_class, torch.logsumexp(logits[:, part], dim=-1).to(wide))
        total = torch.logaddexp(total, _logsumexp_(logits, peak).to(wide))  # last: it overwrites the logits
    out = [raw.to(wide) - total[at], raw] + ([(of_class - total)[at]] if of_class is not None else []) \
        + ([top_id[at]] if greedy else [])
    return tuple(x.double().cpu().numpy() for x in out)


def _logsumexp_(logits: torch.Tensor, peak: torch.Tensor) -> torch.Tensor:
    """``torch.logsumexp(logits, dim=-1)`` from each row's maximum ``peak``, in place: the operations
    torch's own runs (an infinite maximum taken as 0, subtracted, exp, sum, log, added back), bit for
    bit its values, without a second slice-sized tensor (``logits`` is overwritten). On the CPU, with
    the logits in one reused buffer: 0.99-1.05x the speed of new tensors a slice, in medians a call
    (benchmarks/bench_head_blocks.py); where the greedy token is read, its maximum is this one's."""
    shift = peak.masked_fill(peak.abs() == math.inf, 0)
    return logits.sub_(shift[:, None]).exp_().sum(dim=-1).log_().add_(shift)


def _by_positions(project, vocab: int, hidden: torch.Tensor, which: np.ndarray, targets: np.ndarray,
                  mass: torch.Tensor | None, greedy: bool = False) -> tuple[np.ndarray, ...]:
    """The head chunk by chunk of positions (a projection that cannot slice its vocabulary)."""
    step = max(1, LOGIT_ELEMENTS.get(hidden.device.type, LOGIT_ELEMENTS_ELSEWHERE) // vocab)
    order = np.argsort(which, kind="stable")  # entries by position: a chunk's entries are contiguous
    bounds = np.searchsorted(which[order], np.arange(0, hidden.shape[0] + step, step))
    picked, values, raw, masses, tops = [], [], [], [], []
    for c, i in enumerate(range(0, hidden.shape[0], step)):
        entries = order[bounds[c]:bounds[c + 1]]
        logits = project(hidden[i:i + step]).float()  # [step, vocab]
        at = (torch.from_numpy(which[entries] - i).to(logits.device), torch.from_numpy(targets[entries]).to(logits.device))
        raw.append(logits[at])
        # one fused pass (logsumexp makes three over the vocabulary: twice the time)
        values.append(torch.log_softmax(logits, dim=-1)[at])
        if mass is not None:
            share = torch.logsumexp(logits.masked_fill(~mass, float("-inf")), dim=-1) - torch.logsumexp(logits, dim=-1)
            masses.append(share[at[0]])
        if greedy:
            tops.append(logits.argmax(dim=-1)[at[0]])
        picked.append(entries)
    kinds = [values, raw] + ([masses] if mass is not None else []) + ([tops] if greedy else [])
    out = [np.empty(len(which)) for _ in kinds]
    if not picked:
        return tuple(out)
    entries = np.concatenate(picked)
    for array, parts in zip(out, kinds):
        array[entries] = torch.cat(parts).double().cpu().numpy()
    return tuple(out)


def halving_on_oom(batch: Sequence[T], process: Callable[[Sequence[T]], None], *, shrink: Callable[[], None],
                   partial: bool, budget: Callable[[], int]) -> None:
    """``process(batch)``; on CUDA out-of-memory, ``shrink()`` (halve the token budget for good) and
    run each half the same way. A batch of one that does not fit is the error itself; a partial
    run (only some requests, e.g. a shard's) refuses, since smaller batches would no longer be
    the whole run's, nor its numbers. ``budget()`` is the token budget now, named in that refusal."""
    try:
        process(batch)
    except torch.cuda.OutOfMemoryError:
        if len(batch) == 1:
            raise
        if partial:
            raise torch.cuda.OutOfMemoryError(
                "out of memory in a batch of a partial run (a shard), whose batches must be the whole "
                f"run's: score every shard and the whole run with a smaller token budget "
                f"(token_budget=..., now {budget()})") from None
        torch.cuda.empty_cache()
        shrink()
        half = len(batch) // 2
        for part in (batch[:half], batch[half:]):
            halving_on_oom(part, process, shrink=shrink, partial=partial, budget=budget)
