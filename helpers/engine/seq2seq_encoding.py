"""Requests to an encoder-decoder as token ids: the three request shapes (``decoder``, ``span``,
``answer``; see :mod:`helpers.engine.seq2seq`) encoded by one tokenizer call each, with the
decoder positions that are scored and their character spans."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from .encoding import first_target_token
from .interface import Request
from .scorer_base import check_text

SENTINEL, NEXT_SENTINEL = "<extra_id_0>", "<extra_id_1>"
Shape = Literal["decoder", "span", "answer"]
SHAPES = ("decoder", "span", "answer")


@dataclass(frozen=True)
class Seq2SeqRequest:
    """One request to an encoder-decoder (see the module docstring for the shapes).

    ``source`` goes to the encoder (for ``span`` it holds ``<extra_id_0>`` once);
    ``context`` is decoder text before the target (``decoder`` shape only; its trailing
    spaces are scored with the target, as :func:`helpers.engine.encoding.target_start` says);
    ``separate`` tokenizes the decoder context and target apart, as :class:`Request` does.
    """

    shape: Shape
    source: str
    target: str
    context: str = ""
    separate: bool = False


def span_request(before: str, target: str, after: str = "") -> Seq2SeqRequest:
    """The sentinel-span request for ``target`` between ``before`` and ``after``; whitespace
    leading the target stays in the source, before the sentinel ("prefix <extra_id_0>")."""
    word = target.lstrip()
    return Seq2SeqRequest("span", before + target[:len(target) - len(word)] + SENTINEL + after, word)


def answer_request(prompt: str, answer: str) -> Seq2SeqRequest:
    """The prompt as source, the answer as target."""
    return Seq2SeqRequest("answer", prompt, answer)


@dataclass(frozen=True)
class Encoded2:
    """A request as token ids: the encoder's ids, the decoder's ids after its start token,
    the scored decoder positions [first, end), and the character span of each decoder token."""

    source_ids: tuple[int, ...]
    decoder_ids: tuple[int, ...]
    first: int
    end: int
    offsets: tuple[tuple[int, int], ...]
    shape: Shape


class Seq2SeqEncoder:
    """Encodes requests for one tokenizer: ``source`` is the encoder text of plain (decoder-shape)
    requests, ``span_end`` whether the token closing a sentinel span is scored."""

    def __init__(self, tokenizer, source: str = "", span_end: bool = True):
        self.tokenizer, self.source, self.span_end = tokenizer, source, span_end

    def encode_many(self, requests: Sequence[Request | Seq2SeqRequest]) -> list[Encoded2]:
        """Token ids of every request (see :class:`Encoded2`)."""
        return [self._encode(r, i) for i, r in enumerate(requests)]

    def _source_ids(self, text: str) -> tuple[int, ...]:
        return tuple(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def _target(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if not enc["input_ids"]:
            raise ValueError(f"target {text!r} tokenizes to no tokens")
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def _encode(self, r, i: int) -> Encoded2:
        if isinstance(r, Request):
            r = Seq2SeqRequest("decoder", self.source, r.target, r.context, r.separate)
        if not isinstance(r, Seq2SeqRequest):
            raise TypeError(f"request {i} is a {type(r).__name__}; build requests with Request(context, target) "
                            "or helpers.engine.seq2seq.Seq2SeqRequest")
        if r.shape not in SHAPES:
            raise ValueError(f"request {i}: shape must be one of {SHAPES}, got {r.shape!r}")
        check_text(r.source, "source", allow_empty=True)
        check_text(r.context, "context", allow_empty=True)
        check_text(r.target, "target", allow_empty=False)
        source = self._source_ids(r.source)
        if r.shape == "answer":
            ids, offsets = self._target(r.target)
            return Encoded2(source, tuple(ids), 0, len(ids), tuple(offsets), "answer")
        if r.shape == "span":
            return self._encode_span(r, source)
        if r.separate:
            ctx = self.tokenizer(r.context, add_special_tokens=False)["input_ids"] if r.context else []
            ids, offsets = self._target(r.target)
            at = len(r.context)
            return Encoded2(source, tuple(ctx) + tuple(ids), len(ctx), len(ctx) + len(ids),
                            tuple([(0, 0)] * len(ctx) + [(a + at, b + at) for a, b in offsets]), "decoder")
        enc = self.tokenizer(r.context + r.target, add_special_tokens=False, return_offsets_mapping=True)
        offsets = [tuple(o) for o in enc["offset_mapping"]]
        # the causal encoder's boundary: the context's trailing spaces are scored with the target
        first = first_target_token(offsets, Request(r.context, r.target))
        if first is None:
            raise ValueError(f"target {r.target!r} tokenizes to no tokens after context {r.context[-40:]!r}")
        return Encoded2(source, tuple(enc["input_ids"]), first, len(offsets), tuple(offsets), "decoder")

    def _encode_span(self, r: Seq2SeqRequest, source: tuple[int, ...]) -> Encoded2:
        sentinel = self.tokenizer.convert_tokens_to_ids(SENTINEL)
        if sentinel is None or sentinel == self.tokenizer.unk_token_id or source.count(sentinel) != 1:
            raise ValueError(f"a span request's source must hold {SENTINEL} exactly once, and the tokenizer must "
                             f"know it (T5's sentinels); got source {r.source[-60:]!r}")
        after = r.source.split(SENTINEL, 1)[1]
        closing = self.tokenizer.convert_tokens_to_ids(NEXT_SENTINEL) if after.strip() else self.tokenizer.eos_token_id
        ids, offsets = self._target(r.target)
        n = len(r.target)
        return Encoded2(source, (sentinel, *ids, closing), 1, len(ids) + 1 + self.span_end,
                        ((0, 0), *offsets, (n, n)), "span")
