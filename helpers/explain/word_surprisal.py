"""Per-word surprisal of one scored text, plain and corrected for word boundaries (Pimentel &
Meister 2024; :mod:`helpers.methods.word_boundary`), over the words of 00's per-word view
(:mod:`.words`: runs of letters and digits, each punctuation mark, each Chinese character).

A word's plain surprisal is the sum of its tokens'; its corrected surprisal also moves the
probability that a word boundary follows it onto it, and the one that a word began where it
begins off it (both read in the scoring pass of a ``word_boundary`` request). Where the token
after a word is not word-initial (a "." right after "dog") nothing moves at that edge.
``python -m helpers score --words`` prints :func:`word_table` (:func:`word_lines`, or
:func:`word_record` as JSON).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine.interface import Scored
from ..methods.word_boundary import corrected_spans, edge_logmass
from .words import group_tokens

LN2 = math.log(2)


def token_words(text: str, offsets) -> tuple[list[tuple[int, int]], list[int]]:
    """The words of ``text`` that these tokens (character ``offsets`` in ``text``) cover, and the
    word of each token (:func:`.words.group_tokens`; words of a context before them left out)."""
    spans, of_token = group_tokens(text, offsets)
    used = sorted(set(of_token))
    index = {w: i for i, w in enumerate(used)}
    return [spans[w] for w in used], [index[w] for w in of_token]


def corrected_by_word(scored: Scored, of_token: list[int], n_words: int) -> np.ndarray:
    """The corrected log-prob (nats) of each of ``n_words`` words, ``of_token`` giving the word of
    each target token of ``scored`` (a word_boundary result)."""
    return corrected_spans(scored, [[t for t, w in enumerate(of_token) if w == k] for k in range(n_words)])


def word_table(text: str, scored: Scored) -> pd.DataFrame:
    """One row per word of ``scored``'s target (``text``: the context and target it was scored
    in): word, text, start, end, n_tokens, logprob and surprisal (its tokens' sum), and the
    corrected_logprob and corrected_surprisal (log-probs in nats, surprisal in bits)."""
    spans, of_token = token_words(text, scored.offsets)
    lp = np.asarray(scored.logprobs, dtype=np.float64)
    plain = np.array([lp[[t for t, w in enumerate(of_token) if w == k]].sum() for k in range(len(spans))])
    corrected = corrected_by_word(scored, of_token, len(spans))
    return pd.DataFrame({"word": range(len(spans)), "text": [text[s:e] for s, e in spans],
                         "start": [s for s, _ in spans], "end": [e for _, e in spans],
                         "n_tokens": np.bincount(of_token, minlength=len(spans)), "logprob": plain,
                         "surprisal": -plain / LN2, "corrected_logprob": corrected,
                         "corrected_surprisal": -corrected / LN2})


def boundary_terms(scored: Scored) -> tuple[float, float]:
    """(log B(end), log B(start)): what the corrected words add to the LP and take from it."""
    edges = edge_logmass(scored)
    return float(edges[-1]), float(edges[0])


def word_lines(table: pd.DataFrame, scored: Scored) -> list[str]:
    """The word table as text lines, and the identity its corrected sum keeps."""
    end, start = boundary_terms(scored)
    lines = [f"  {'word':>20}  {'tokens':>6}  {'bits':>8}  {'corrected':>9}"]
    lines += [f"  {row.text!r:>20}  {row.n_tokens:>6}  {row.surprisal:8.3f}  {row.corrected_surprisal:9.3f}"
              for row in table.itertuples()]
    lines.append(f"  corrected word log-probs sum to {table.corrected_logprob.sum():.4f} nats = LP {scored.total:.4f}"
                 f" + log B(end) {end:.4f} - log B(start) {start:.4f}")
    return lines


def word_record(table: pd.DataFrame, scored: Scored) -> dict:
    """The word table and the boundary terms as a JSON-ready dict."""
    end, start = boundary_terms(scored)
    words = [{"word": row.text, "start": int(row.start), "end": int(row.end), "n_tokens": int(row.n_tokens),
              "logprob": float(row.logprob), "surprisal": float(row.surprisal),
              "corrected_logprob": float(row.corrected_logprob), "corrected_surprisal": float(row.corrected_surprisal)}
             for row in table.itertuples()]
    return {"words": words, "word_lp": float(table.corrected_logprob.sum()), "log_b_end": end, "log_b_start": start,
            "boundary_logmass": [float(x) for x in scored.boundary_logmass],
            "word_initial": [bool(x) for x in scored.word_initial]}
