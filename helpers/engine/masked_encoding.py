"""Text to token ids for a masked LM, and the masked copies pseudo-log-likelihood runs.

A request's context and target are tokenized as one text with the tokenizer's own special
tokens around it ([CLS] ... [SEP], <s> ... </s>); the target tokens are found from the
character offsets exactly as for a causal model (:func:`helpers.engine.encoding.first_target_token`:
a token straddling the boundary and the context's trailing spaces belong to the target). Each
scored token gets one copy of the sequence with that token replaced by the mask token
(Salazar et al. 2020, ``pll``); ``within_word_l2r`` (Kauf & Ivanova 2023) also masks the tokens
of the same word to its right, so a word's pieces are scored left to right within the word.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .encoding import first_target_token
from .interface import Request
from .scorer_base import check_text

VARIANTS = {
    "pll": "each token masked in turn, every other token visible (Salazar et al. 2020)",
    "within_word_l2r": "each token masked in turn with the tokens of the same word to its right (Kauf & Ivanova 2023)",
}


@dataclass(frozen=True)
class MaskedEncoded:
    ids: tuple[int, ...]  # the whole sequence, the tokenizer's special tokens included
    first: int  # index of the first target token
    end: int  # one past the last target token (the closing special tokens follow)
    offsets: tuple[tuple[int, int], ...]  # character span of each id in context+target ((0, 0): special)
    words: tuple[int, ...]  # word index of each id (-1: special tokens)
    scorable: int  # index of the first token that is not a special token (where context tokens begin)


def checked_variant(variant) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))}, got {variant!r}")
    return variant


def encode_many(tokenizer, requests: Sequence[Request], max_positions: int | None) -> list[MaskedEncoded]:
    """Each request's ids with the tokenizer's special tokens, and where its target lies."""
    for i, r in enumerate(requests):
        if not isinstance(r, Request):
            raise TypeError(f"request {i} is a {type(r).__name__}; build requests with Request(context, target)")
        check_text(r.context, "context", allow_empty=True)
        check_text(r.target, "target", allow_empty=False)
        if r.separate:
            raise ValueError("separate=True requests are a constrained decoder's prompts (causal models); a masked "
                             "LM scores context+target as one text")
    batch = tokenizer([r.context + r.target for r in requests], add_special_tokens=True,
                      return_offsets_mapping=True, return_special_tokens_mask=True)
    out = []
    for k, r in enumerate(requests):
        ids, special = list(batch["input_ids"][k]), batch["special_tokens_mask"][k]
        offsets = [tuple(o) if not s else (0, 0) for o, s in zip(batch["offset_mapping"][k], special)]
        words = tuple(-1 if s or w is None else w for w, s in zip(batch.word_ids(k), special))
        first = first_target_token(offsets, r)
        if first is None:
            raise ValueError(f"target {r.target!r} tokenizes to no tokens after context {r.context[-40:]!r}")
        end = max(i for i, s in enumerate(special) if not s) + 1
        if max_positions and len(ids) > max_positions:
            raise ValueError(f"request of {len(ids)} tokens exceeds the model's {max_positions} positions "
                             f"(target begins {r.target[:40]!r}); shorten the context")
        scorable = next(i for i, s in enumerate(special) if not s)
        out.append(MaskedEncoded(tuple(ids), first, end, tuple(offsets), words, scorable))
    return out


def masked_positions(enc: MaskedEncoded, position: int, variant: str) -> tuple[int, ...]:
    """The positions masked in the copy that scores ``position``: it alone (``pll``), or it and
    the tokens of its word to its right (``within_word_l2r``)."""
    if variant == "pll" or enc.words[position] < 0:
        return (position,)
    word = enc.words[position]
    return (position, *(j for j in range(position + 1, enc.end) if enc.words[j] == word))
