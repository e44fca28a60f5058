"""Corrected word and region log-probabilities (Pimentel & Meister 2024, "How to compute the
probability of a word"; Oh & Schuler 2024) from one engine pass.

With a tokenizer that marks the *beginning* of a word (GPT-2's "Ġword", SentencePiece's
"▁word"), the space before a word travels with the word's first token, so summing a word's
(or a region's) own tokens leaves out the probability that it *ends* there and counts, in its
first token, the probability that the word before it ended. The corrected log-probability of
the text between token edges ``i`` and ``j`` of a target is

    sum(lp[i:j]) + L(j) - L(i),   L(k) = log B(k) where a word may begin at edge k, else 0

with B(k) the probability mass of word-initial tokens where target token k is predicted
(:class:`helpers.engine.interface.Scored`'s ``boundary_logmass``, read in the scoring pass of a
``word_boundary`` request). A word may begin at an edge whose token is word-initial and after
the last token, where B also counts EOS (the text may go on with a word or end there, as in the
paper). At the start of a text B = 1 (a word begins there for sure). Where the token at an edge
is not word-initial (the "." after "dog", a piece inside a word) L = 0: no correction, its
probability stays with the tokens. Inside a text B counts word-initial tokens only, not EOS: a
word's probability there is conditioned on the text going on with a word, which it does
(Pimentel & Meister's released code counts EOS at every edge: each inner edge then differs by
log(1 + p(EOS) / B); the sum over a text's words is the same).

Since the inner edges cancel, the corrected log-probs of a target's words (or regions, any
partition of its tokens into runs) sum to its LP + L(n) - L(0): the plain sum, plus the
log-probability that a word boundary (or the end) follows the text, minus the one that a word
began where the target begins (0 at the start of a text).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.interface import Scored


def _checked(scored: Scored) -> Scored:
    if scored.boundary_logmass is None or scored.word_initial is None:
        raise ValueError("this result has no word-boundary mass: score it with Request(..., word_boundary=True) "
                         "on a causal LM")
    return scored


def edge_logmass(scored: Scored) -> np.ndarray:
    """[n_tokens + 1] L(k): log B at each token edge where a word may begin (a word-initial token,
    and the end of the target), 0 at the others (see the module's docstring)."""
    scored = _checked(scored)
    may_begin = np.append(np.asarray(scored.word_initial, dtype=bool), True)
    return np.where(may_begin, scored.boundary_logmass, 0.0)


def corrected_spans(scored: Scored, spans: Sequence[Sequence[int]]) -> np.ndarray:
    """The corrected log-prob (nats) of each span of consecutive target-token indices: the sum of
    its tokens' log-probs + L(after its last token) - L(at its first); 0 for an empty span."""
    edges, lp = edge_logmass(scored), np.asarray(scored.logprobs, dtype=np.float64)
    out = np.zeros(len(spans))
    for w, span in enumerate(spans):
        if len(span):
            first, last = int(span[0]), int(span[-1])
            if list(span) != list(range(first, last + 1)):
                raise ValueError(f"span {w} is not a run of consecutive tokens: {list(span)}")
            out[w] = lp[first:last + 1].sum() + edges[last + 1] - edges[first]
    return out


def word_starts(scored: Scored) -> list[int]:
    """The target-token indices where a word begins: the first token, and every word-initial one."""
    initial = _checked(scored).word_initial
    return [0] + [k for k in range(1, len(initial)) if initial[k]]


def word_spans(scored: Scored) -> list[list[int]]:
    """The target's words as runs of token indices: each from a word-initial token (or the
    first) to the token before the next word-initial one (the words whitespace separates)."""
    starts = word_starts(scored) + [len(scored.token_ids)]
    return [list(range(a, b)) for a, b in zip(starts, starts[1:])]


def corrected_words(scored: Scored) -> np.ndarray:
    """The corrected log-prob (nats) of each word of the target (:func:`word_spans`)."""
    return corrected_spans(scored, word_spans(scored))
