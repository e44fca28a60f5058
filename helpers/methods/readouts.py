"""Probability readouts (Ide et al. 2024, sections 3.1-3.2; Lau et al. 2017).

Sentence readouts score each sentence alone after the document-start token; in-template
readouts score it inside one of the 5 "single" templates of its language, over the whole
input (template tokens counted, the variant Ide et al. report) and over the target only;
comparative LP scores the "compar" template with the target in slot A and the other
sentence in slot B. The basis tables hold, per pair and side (good/bad): the sum and count
of target token log-probs (``tgt_sum_*``, ``n_tokens_*``), of the template tokens before
the target (``ctx_sum_*``, ``ctx_n_*``), the token log-probs and ids themselves, and the
unigram log-prob sum (``uni_sum_*``) where a method needs it.
"""
from __future__ import annotations

import pandas as pd

from ..measures import length_penalty as _penalty
from .base import Basis, Method

SENTENCE, SINGLE, COMPAR = Basis("sentence"), Basis("single", "single"), Basis("compar", "compar")


def _lp(t, side):
    return t[f"tgt_sum_{side}"]


def _meanlp(t, side):
    return t[f"tgt_sum_{side}"] / t[f"n_tokens_{side}"]


def _penlp(t, side):
    return t[f"tgt_sum_{side}"] / _penalty(t[f"n_tokens_{side}"])


def _whole_sum(t, side):
    return t[f"ctx_sum_{side}"] + t[f"tgt_sum_{side}"]


def _whole_n(t, side):
    return t[f"ctx_n_{side}"] + t[f"n_tokens_{side}"]


def _slor(t, side):
    return (t[f"tgt_sum_{side}"] - t[f"uni_sum_{side}"]) / t[f"n_tokens_{side}"]


def _bf_uniform(t, side):
    return t[f"tgt_sum_{side}"] + t[f"n_tokens_{side}"] * t["log_vocab"]


def _bf_unigram(t, side):
    return t[f"tgt_sum_{side}"] - t[f"uni_sum_{side}"]


READOUTS = [
    Method("lp", "sentence readout", SENTENCE, "sum of token log-probs of the sentence alone", _lp),
    Method("meanlp", "sentence readout", SENTENCE, "LP / number of tokens", _meanlp),
    Method("penlp", "sentence readout", SENTENCE, "LP / ((5 + len) / 6) ** 0.8", _penlp),
    Method("slor", "sentence readout", SENTENCE, "mean over tokens of log p - log p_unigram", _slor,
           needs_unigram=True),
    Method("bf_uniform", "sentence readout", SENTENCE, "LP + len * log|V| (Bayes factor vs uniform)", _bf_uniform),
    Method("bf_unigram", "sentence readout", SENTENCE, "LP - sum of unigram log-probs (Bayes factor vs unigram)",
           _bf_unigram, needs_unigram=True),
    Method("intemplate_lp", "in-template readout", SINGLE, "LP of the whole templated input",
           _whole_sum, target_score=_lp),
    Method("intemplate_meanlp", "in-template readout", SINGLE, "whole-input LP / whole-input tokens",
           lambda t, s: _whole_sum(t, s) / _whole_n(t, s), target_score=_meanlp),
    Method("intemplate_penlp", "in-template readout", SINGLE, "whole-input LP / ((5 + whole len) / 6) ** 0.8",
           lambda t, s: _whole_sum(t, s) / _penalty(_whole_n(t, s)), target_score=_penlp),
    Method("comparative_lp", "in-template readout", COMPAR,
           "LP of the comparative template with the target in slot A, the other sentence in slot B", _whole_sum),
]

