"""Word-level LP: each sentence alone (after the priming context, if any), its words' corrected
log-probabilities read from the same engine pass (:mod:`.word_boundary`; Pimentel & Meister
2024, Oh & Schuler 2024).

The words are the runs of tokens from one word-initial token to the next (the words whitespace
separates: "dog." is one word). ``word_lp`` sums their corrected log-probs; the inner word
boundaries cancel, so it equals the sentence's LP plus the log-probability that a word boundary
or the end follows its last token (log B(end)), minus the one that a word began where the
sentence begins after a context (log B(start); 0 for a sentence alone, which begins the text):

    word_lp = LP + log B(end) - log B(start)

A causal LM whose tokenizer marks word beginnings only (the scorer feature "token_mass"; a
tokenizer that marks none is refused with the reason).

Basis columns per side: the plain sums as in :mod:`.readouts` (``tgt_sum_*``, ``n_tokens_*``,
``token_lp_*``, ``token_ids_*``), the corrected log-prob of each word (``word_logprobs_*``, an
array), their number (``n_words_*``) and sum (``word_lp_*``), and the two boundary terms
(``end_logmass_*``: log B(end); ``start_logmass_*``: log B(start), 0 where no correction applies).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine.interface import Request
from .base import Family, Method
from .prompt_text import with_context
from .word_boundary import corrected_words, edge_logmass


class SentenceWords(Family):
    """Each sentence alone, scored with its word-boundary masses."""

    name = "words"

    def requests(self, item, template, context, pass_context, state):
        prime = with_context(context, "", pass_context.language)
        return [Request(prime, item[side], word_boundary=True) for side in pass_context.sides]

    def table(self, items, template, contexts, scored, pass_context, states):
        table = {}
        for k, side in enumerate(pass_context.sides):
            chunk = [s[k] for s in scored]
            words = [corrected_words(s) for s in chunk]
            edges = [edge_logmass(s) for s in chunk]
            table[f"tgt_sum_{side}"] = [s.total for s in chunk]
            table[f"n_tokens_{side}"] = [s.n_tokens for s in chunk]
            table[f"token_lp_{side}"] = [s.logprobs.astype(np.float64) for s in chunk]
            table[f"token_ids_{side}"] = [np.asarray(s.token_ids, dtype=np.int64) for s in chunk]
            table[f"word_logprobs_{side}"] = words
            table[f"n_words_{side}"] = [len(w) for w in words]
            table[f"word_lp_{side}"] = [float(w.sum()) for w in words]
            table[f"end_logmass_{side}"] = [float(e[-1]) for e in edges]
            table[f"start_logmass_{side}"] = [float(e[0]) for e in edges]
        return pd.DataFrame(table)


WORDS = SentenceWords()
WORD_READOUTS = [
    Method("word_lp", WORDS, "sum over words of corrected word log-probs (Pimentel & Meister 2024): LP + log "
           "B(end) - log B(start), B the mass of word-initial tokens (and EOS after the sentence)",
           lambda t, s: t[f"word_lp_{s}"],
           options={"words": "runs of tokens from one word-initial token to the next",
                    "correction": "bow: + log B(end) - log B(start); B = mass of word-initial tokens (and eos after "
                                  "the text); B = 1 at the text start"},
           needs=("token_mass",)),
]
