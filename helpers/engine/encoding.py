"""Text to token ids: each request becomes one sequence that starts with exactly one
document-start token (under the default convention; see :data:`START_CONVENTIONS`), and the
index of its first scored (target) token.

Where the target begins (:func:`target_start`): a context's trailing spaces belong to the
target, as in lm-evaluation-harness (which moves a context's trailing whitespace to the
start of the continuation). A tokenizer attaches a word's leading space to the word (" icing",
"▁icing"), so a context ending in a space usually has its space scored inside the target's
first token; where the vocabulary lacks that token and the space tokenizes alone (a bare "Ġ"
or "▁" before "icing", before digits in Llama's vocabulary...), the bare space token is
scored with the target too, so a target's score never depends on whether its first word
merged with the space. Line breaks stay in the context (a prompt's "\n\n" before "Yes" is
not part of the answer; tokenizers do not attach them to the next word), and so do
whitespace characters before a line break. ``Request(..., separate=True)`` is exempt: its
context is the exact prompt a constrained decoder is given, trailing space token included.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .interface import Request
from .scorer_base import check_text
from ..settings import START_CONVENTIONS, Settings

# Characters at which str.splitlines() breaks: whitespace of these kinds stays in the context.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


@dataclass(frozen=True)
class Encoded:
    ids: tuple[int, ...]  # the whole sequence, start token included
    first: int  # index of the first scored target token
    offsets: tuple[tuple[int, int], ...] = ()  # character span of each id in context+target ((0, 0): added)
    # a word_boundary request's last id: a token appended after the text (EOS where the tokenizer has
    # one), never fed, so that the text's last token is fed and the position after it read
    probe: int | None = None


def distinct(encoded: Sequence[Encoded]) -> tuple[list[Encoded], list[int]]:
    """The distinct sequences of ``encoded`` (first copies, in order) and, per sequence, the index of
    its copy there: a sequence given twice runs once and both get its values, so that the same
    sentence twice ties exactly, whatever rows its copies would have run in (MultiBLiMP's identical pairs)."""
    slot: dict[tuple, int] = {}
    unique, which = [], []
    for e in encoded:
        k = slot.setdefault((e.ids, e.first, e.probe), len(slot))
        if k == len(unique):
            unique.append(e)
        which.append(k)
    return unique, which


def encoded_ids(sequences, max_positions: int | None) -> list[Encoded]:
    """Sequences already tokenized, each ``(ids, first)`` (``first``: its first scored token), as
    :class:`Encoded`; a clear error for one whose scored part is empty or starts at 0, or that
    is longer than the model's ``max_positions``."""
    out = []
    for i, (ids, first) in enumerate(sequences):
        ids = tuple(int(t) for t in ids)
        if not 1 <= first < len(ids):
            raise ValueError(f"sequence {i}: its scored tokens must start after its first token and before its end "
                             f"(first={first}, {len(ids)} tokens)")
        if max_positions and len(ids) > max_positions:
            raise ValueError(f"sequence {i} has {len(ids)} tokens, more than the model's {max_positions} positions: "
                             "truncate it from the left")
        out.append(Encoded(ids, int(first)))
    return out


def convention_of(start: str) -> str:
    """The named convention of a ``start`` setting: one of :data:`START_CONVENTIONS`, or "token"
    for a literal start token string."""
    if start in START_CONVENTIONS:
        return start
    return "token"


def resolve_start(tokenizer, start: str) -> tuple[int | None, str]:
    """(id of the document-start token or None, the policy as text, e.g. "bos:<s>").

    ``start="bos-else-eos"`` takes the tokenizer's BOS, else its EOS; "none" adds
    no start token; "minicons" adds none and lets the tokenizer add its
    own special tokens; any other string is a literal token.
    """
    convention = convention_of(start)
    if convention == "minicons":
        return None, "minicons:tokenizer-default"
    if convention == "none":
        return None, "none"
    if convention == "bos-else-eos":
        for kind, token in (("bos", tokenizer.bos_token), ("eos", tokenizer.eos_token)):
            if token is not None:
                return tokenizer.convert_tokens_to_ids(token), f"{kind}:{token}"
        raise ValueError("the tokenizer has neither a BOS nor an EOS token; pass start=<token string> or "
                         f"one of {', '.join(START_CONVENTIONS)}")
    token_id = tokenizer.convert_tokens_to_ids(start)
    if token_id is None or token_id == tokenizer.unk_token_id and start != tokenizer.unk_token:
        raise ValueError(f"start token {start!r} is not in the tokenizer's vocabulary; pass a token of it or "
                         f"one of the conventions {', '.join(START_CONVENTIONS)}")
    return token_id, f"token:{start}"


def target_start(request: Request) -> int:
    """Where the scored text begins in ``context + target`` (a character index): before the
    context's trailing whitespace other than line breaks (spaces, tabs, no-break spaces),
    which belongs to the target; at the end of the context for a ``separate`` request."""
    end = len(request.context)
    if request.separate:
        return end
    while end and request.context[end - 1].isspace() and request.context[end - 1] not in LINE_BREAKS:
        end -= 1
    return end


def first_target_token(offsets, request: Request) -> int | None:
    """Index of the first target token among tokens with these character ``offsets`` in
    context+target: the first that ends past the context (a token straddling the boundary
    belongs to the target) or lies in the context's trailing spaces (:func:`target_start`);
    None when no token does. Tokens with empty spans (added special tokens) are never first."""
    start_at, context_end = target_start(request), len(request.context)
    return next((i for i, (start, end) in enumerate(offsets)
                 if end > context_end or (end > start and start >= start_at)), None)


class Encoder:
    """Tokenizes requests for one tokenizer and start-token policy (see :func:`resolve_start`).

    The encoder adds the start token unless the text already begins with it; in minicons
    mode it adds none and lets the tokenizer add its own special tokens; with "none" it adds
    nothing at all. ``convention`` names the policy (:func:`convention_of`). ``max_positions``
    (the model's limit, if known) refuses longer sequences; ``settings`` are the scorer's. A ``word_boundary`` request's
    sequence ends in one more token, its ``probe`` (EOS, else the start token), never fed: the
    text's last token is then fed and the position after the text read.
    """

    def __init__(self, tokenizer, start: str = "bos-else-eos", max_positions: int | None = None,
                 settings: Settings | None = None):
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("the engine needs a fast tokenizer (it reads character offsets)")
        self.start = convention_of(start)
        self.tokenizer, self.max_positions = tokenizer, max_positions
        self.settings = settings or Settings()  # the scorer's: the engine settings that act on encoding
        self.special_tokens = self.start == "minicons"  # the tokenizer adds its own
        self.start_id, self.start_token = resolve_start(tokenizer, start)
        # appended after a word_boundary request's text: EOS, whose log-prob there is the text's end
        eos = tokenizer.eos_token_id
        self.probe_id = eos if eos is not None else (self.start_id or 0)

    def encode_many(self, requests: Sequence[Request]) -> list[Encoded]:
        """Token ids of each context+target with one start token, and where its target begins.

        A token that straddles the context/target boundary (e.g. " word" after a context
        ending in a space) belongs to the target, and so does a token made of the context's
        trailing spaces (a bare " " before "icing"; see :func:`target_start`).
        """
        for i, r in enumerate(requests):
            if not isinstance(r, Request):
                raise TypeError(f"request {i} is a {type(r).__name__}; build requests with Request(context, target)")
            check_text(r.context, "context", allow_empty=True)
            check_text(r.target, "target", allow_empty=False)
        batch = self.tokenizer([r.context + r.target for r in requests], add_special_tokens=self.special_tokens,
                               return_offsets_mapping=True)
        apart = [i for i, r in enumerate(requests) if r.separate]
        if apart:
            ctx = self.tokenizer([requests[i].context for i in apart], add_special_tokens=self.special_tokens)["input_ids"]
            tgt = self.tokenizer([requests[i].target for i in apart], add_special_tokens=False)["input_ids"]
            for i, c, t in zip(apart, ctx, tgt):
                batch["input_ids"][i] = list(c) + list(t)
                # context tokens end at 0, target tokens after the context: only the target is scored
                batch["offset_mapping"][i] = [(0, 0)] * len(c) + [(len(requests[i].context) + 1,) * 2] * len(t)
        return [self._finish(r, list(ids), offsets)
                for r, ids, offsets in zip(requests, batch["input_ids"], batch["offset_mapping"])]

    def _finish(self, request: Request, ids: list[int], offsets) -> Encoded:
        """Add the start token and find the first target token from the character offsets."""
        offsets = [tuple(o) for o in offsets]
        first = first_target_token(offsets, request)
        if first is None:
            raise ValueError(f"target {request.target!r} tokenizes to no tokens after context "
                             f"{request.context[-40:]!r}")
        if self.start_id is not None and (not ids or ids[0] != self.start_id):
            ids.insert(0, self.start_id)
            offsets.insert(0, (0, 0))
            first += 1
        first = max(first, 1)  # the very first token has nothing before it (minicons mode)
        cut = self.settings.given("max_tokens")  # e.g. ZhoBLiMP's reference: its first 64 tokens, start token included
        if cut is not None and len(ids) > cut:
            if first >= cut:
                raise ValueError(f"max_tokens={cut} keeps no token of the target {request.target[:40]!r}: its start "
                                 f"token and context take {first}; raise max_tokens or shorten the context")
            ids, offsets = ids[:cut], offsets[:cut]
        if self.max_positions and len(ids) > self.max_positions:
            raise ValueError(f"request of {len(ids)} tokens exceeds the model's {self.max_positions} positions "
                             f"(target begins {request.target[:40]!r}); shorten the context")
        if request.word_boundary:  # the position after the text is read too
            end = len(request.context) + len(request.target)
            return Encoded(tuple(ids) + (self.probe_id,), first, tuple(offsets) + ((end, end),), self.probe_id)
        return Encoded(tuple(ids), first, tuple(offsets))
