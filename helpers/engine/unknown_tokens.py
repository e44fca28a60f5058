"""How much of a dataset's text a tokenizer turns into its unknown token, and a warning when it is much.

A WordPiece tokenizer trained on English (BERT's) turns every word with a character it lacks
into one ``[UNK]``; a SentencePiece one (T5's) does the same to runs of such characters. Those
words are then scored as the unknown token, so a model's scores on Russian or Japanese say
little about them. :func:`unknown_share` tokenizes a selection's texts and counts, through the
fast tokenizer's character offsets, the non-space characters that end up inside a token whose
id is ``tokenizer.unk_token_id``; a tokenizer without one (byte-level BPE: GPT-2, Llama, Qwen)
covers every text and measures 0. :func:`warn_unknown_tokens` is the runner's check before
scoring: one warning line above :data:`THRESHOLD`.
"""
from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..data.selection import DatasetSelection

# A tokenizer that covers a script leaves only rare symbols unknown (bert-base-uncased's WordPiece:
# 0 of BLiMP's 5,379,499 non-space characters, 20 of RuBLiMP's 4,664,183); one that lacks it loses
# much of the text (bert-base-uncased: 18% of JBLiMP's; the tiny English BERT: 98% of RuBLiMP's, 90%
# of JBLiMP's; tiny-t5, whose pieces lack 'W', 'M', 'x'...: 3.3% of BLiMP's). 1% sits far from both;
# at ~5.5 characters a word it is about one word in a hundred, one sentence in ten or so, and a
# pair's critical word may be among them. (benchmarks/results/bench_unknown_tokens.txt)
THRESHOLD = 0.01
# Texts tokenized per selection, every k-th: RuBLiMP's 90,000 sentences took 11 to 18 s to tokenize
# on the shared 2-core machine, 2,000 of them 0.2 to 0.3 s, within half a point of the whole set's
# share on RuBLiMP, BLiMP and CLiMP (benchmarks/bench_unknown_tokens.py).
SAMPLE = 2000
EXAMPLES = 5  # the most frequent unknown words named in the warning
TEXT_COLUMNS = ("good", "bad", "sentence", "prefix", "continuation", "good_continuation", "bad_continuation",
                "content")


@dataclass(frozen=True)
class UnknownShare:
    """What :func:`unknown_share` measured over ``texts`` of ``of_texts`` texts."""

    unk_token: str | None  # the tokenizer's unknown token (None: it has none)
    texts: int  # texts tokenized (the sample)
    of_texts: int  # texts in the selection
    characters: int  # non-space characters in the sample
    unknown: int  # of which inside an unknown token
    examples: tuple[str, ...] = ()  # the most frequent stretches of text that became unknown

    @property
    def share(self) -> float:
        """The share of non-space characters inside an unknown token (0 for no text)."""
        return self.unknown / self.characters if self.characters else 0.0

    def meta(self) -> dict:
        """The numbers as a score file's metadata records them."""
        return {"unk_token": self.unk_token, "share": self.share, "unknown_characters": self.unknown,
                "characters": self.characters, "texts": self.texts, "of_texts": self.of_texts,
                "examples": list(self.examples)}


def selection_texts(frame: pd.DataFrame) -> list[str]:
    """Every text a selection's frame holds, column by column (``good``, then ``bad``...);
    SyntaxGym items' conditions as their regions joined by spaces."""
    texts = [str(t) for c in TEXT_COLUMNS if c in frame.columns for t in frame[c].dropna()]
    if "conditions" in frame.columns:
        for conditions in frame["conditions"].dropna():
            texts.extend(" ".join(str(r[1]) for r in c["regions"]) for c in json.loads(conditions))
    return [t for t in texts if t]


def sampled(texts: Sequence[str], limit: int | None) -> list[str]:
    """``texts``, or at most ``limit`` of them evenly spaced (every k-th: the same each run)."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive number of texts or None, got {limit!r}")
    texts = list(texts)
    if limit is None or len(texts) <= limit:
        return texts
    return texts[::math.ceil(len(texts) / limit)]


def unknown_share(tokenizer, texts: Sequence[str], limit: int | None = SAMPLE) -> UnknownShare:
    """The non-space characters of ``texts`` (at most ``limit`` of them, evenly spaced; None:
    all) that ``tokenizer`` puts inside its unknown token, read from its offsets mapping."""
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(f"{type(tokenizer).__name__} is not a fast tokenizer: the unknown share is read from "
                        "character offsets; load the model's fast tokenizer (use_fast=True)")
    texts = [str(t) for t in texts]
    sample = sampled(texts, limit)
    characters = sum(not ch.isspace() for t in sample for ch in t)
    unk = tokenizer.unk_token_id
    if unk is None or not sample:
        return UnknownShare(tokenizer.unk_token if unk is not None else None, len(sample), len(texts), characters, 0)
    encoded = tokenizer(sample, add_special_tokens=False, return_offsets_mapping=True)
    unknown, spans = 0, Counter()
    for text, ids, offsets in zip(sample, encoded["input_ids"], encoded["offset_mapping"]):
        if unk not in ids:
            continue
        inside = set()
        for i, (a, b) in zip(ids, offsets):
            if i == unk:
                inside.update(p for p in range(a, b) if not text[p].isspace())
                if span := text[a:b].strip():
                    spans[span] += 1
        unknown += len(inside)
    examples = tuple(s for s, _ in spans.most_common(EXAMPLES))
    return UnknownShare(tokenizer.unk_token, len(sample), len(texts), characters, unknown, examples)


def warning_text(model: str, dataset: str, measured: UnknownShare) -> str:
    """The one line :func:`warn_unknown_tokens` warns with."""
    examples = f" (e.g. {', '.join(repr(e) for e in measured.examples)})" if measured.examples else ""
    part = measured.texts < measured.of_texts
    sample = f" (in {measured.texts:,} of its {measured.of_texts:,} texts)" if part else ""
    return (f"{model}'s tokenizer turns {measured.share:.1%} of the non-space characters of {dataset}{sample} into its "
            f"unknown token {measured.unk_token!r}{examples}: those words are scored as one unknown token, so "
            "the scores say little about them; choose a model whose tokenizer covers the script (a byte-level BPE "
            "tokenizer, as GPT-2's, Llama's, Qwen's or RoBERTa's, has no unknown token)")


def warn_unknown_tokens(scorer, selection: DatasetSelection, threshold: float = THRESHOLD,
                        limit: int | None = SAMPLE, stacklevel: int = 3) -> UnknownShare | None:
    """Measure the unknown share of ``selection``'s texts under ``scorer``'s tokenizer and warn
    (at ``stacklevel``) when it exceeds ``threshold``; None where the scorer has no fast tokenizer
    to measure with."""
    tokenizer = getattr(scorer, "tokenizer", None)
    if not getattr(tokenizer, "is_fast", False):
        return None
    measured = unknown_share(tokenizer, selection_texts(selection.frame), limit)
    if measured.share > threshold:
        warnings.warn(warning_text(scorer.name, selection.name, measured), stacklevel=stacklevel)
    return measured
