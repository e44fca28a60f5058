"""Token streams for the demo trainer: documents joined into one array of ids (each after the
document-start token), with the per-token marks that dialect documents and template lists need
(which dialect form a token belongs to; whether it carries loss), and the batches cut from it."""
from __future__ import annotations

import numpy as np

from . import dialects, template_lists

START = "<|endoftext|>"  # document start (and end), as GPT-2's


def token_stream(tokenizer, docs: list[str]) -> np.ndarray:
    """The token ids of ``docs`` in order, each document preceded by START."""
    start = tokenizer.convert_tokens_to_ids(START)
    parts = []
    for i in range(0, len(docs), 2000):
        for ids in tokenizer(docs[i:i + 2000], add_special_tokens=False)["input_ids"]:
            parts.append(np.asarray([start] + ids, dtype=np.int32))
    return np.concatenate(parts)


def marked_stream(tokenizer, texts: list[str], spans: list[list]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The token ids of ``texts`` as :func:`token_stream`, with, per token, the id of the dialect
    form it belongs to (0: none) and a stream-unique id of that replacement (0: none)."""
    start = tokenizer.convert_tokens_to_ids(START)
    ids, forms, occurrences, interned, base = [], [], [], {}, 0
    for i in range(0, len(texts), 2000):
        enc = tokenizer(texts[i:i + 2000], add_special_tokens=False, return_offsets_mapping=True)
        for doc_ids, offsets, doc_spans in zip(enc["input_ids"], enc["offset_mapping"], spans[i:i + 2000]):
            form, occurrence = dialects.token_forms(offsets, doc_spans, interned)
            occurrence[occurrence > 0] += base
            base += len(doc_spans)
            ids.append(np.asarray([start] + doc_ids, dtype=np.int32))
            forms.append(np.concatenate([[0], form]).astype(np.int32))
            occurrences.append(np.concatenate([[0], occurrence]).astype(np.int32))
    return np.concatenate(ids), np.concatenate(forms), np.concatenate(occurrences)


def masked_stream(tokenizer, texts: list[str], no_loss: list[list]) -> tuple[np.ndarray, np.ndarray]:
    """The token ids of ``texts`` as :func:`token_stream`, and per token whether it is trained
    (False for tokens that start inside a document's ``no_loss`` character spans)."""
    start = tokenizer.convert_tokens_to_ids(START)
    ids, trained = [], []
    for i in range(0, len(texts), 2000):
        enc = tokenizer(texts[i:i + 2000], add_special_tokens=False, return_offsets_mapping=True)
        for doc_ids, offsets, spans in zip(enc["input_ids"], enc["offset_mapping"], no_loss[i:i + 2000]):
            ids.append(np.asarray([start] + doc_ids, dtype=np.int32))
            trained.append(np.concatenate([[True], template_lists.trained_tokens(offsets, spans)]))
    return np.concatenate(ids), np.concatenate(trained)


def join_consecutive(docs: list[str], chars: int) -> list[str]:
    """Consecutive ``docs`` joined with spaces into documents of at least ``chars`` characters
    (the last may be shorter): a corpus's running text, long enough to learn from its context."""
    out, current, size = [], [], 0
    for doc in docs:
        current.append(doc)
        size += len(doc) + 1
        if size >= chars:
            out.append(" ".join(current))
            current, size = [], 0
    if current:
        out.append(" ".join(current))
    return out


def batch_spans(n: int, recipe):
    """(start, rows, length) of each batch over a stream of ``n`` tokens; every long_every-th is long."""
    pos, k = 0, 0
    while True:
        long = (k % recipe.long_every) == recipe.long_every - 1
        rows, length = (recipe.long_batch, recipe.long_len) if long else (recipe.short_batch, recipe.short_len)
        if pos + rows * length > n:
            return
        yield pos, rows, length
        pos, k = pos + rows * length, k + 1
