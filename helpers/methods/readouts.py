"""Probability readouts (Ide et al. 2024, sections 3.1-3.2; Lau et al. 2017).

Sentence readouts score each sentence alone after the document-start token; in-template
readouts score it inside one of the 5 "single" templates of its language, over the whole
input (template tokens counted, the variant Ide et al. report) and over the target only, and
the target's pointwise mutual information with the template (its LP inside minus its LP alone);
comparative LP scores the "compar" template with the target in slot A and the other
sentence in slot B. A priming ``context`` goes before the whole input; its own tokens are
never counted. Few-shot in-template readouts (``pass_context.fewshot``) put k acceptable
sentences, each in the same template, before the item (:mod:`helpers.methods.fewshot`); like a
priming context, the examples' tokens are never counted.

Basis columns per side: the sum and count of target token log-probs (``tgt_sum_*``,
``n_tokens_*``) and of the template tokens before the target (``ctx_sum_*``, ``ctx_n_*``), the
token log-probs and ids themselves, the unigram log-prob sum (``uni_sum_*``), and the sentence's
characters and UTF-8 bytes (``n_chars_*``, ``n_bytes_*``; sentence readouts).
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import fewshot, measures
from ..data.unigram_corpus import resolve_unigram_corpus
from ..engine.interface import Request
from .base import Family, Method
from .measures import UnigramTable, unigram_table
from .prompt_text import template_examples, with_context
from .templates import ide_templates


def _template_sums(scored, prime: str) -> tuple[float, int]:
    """Sum and count of the context log-probs after the priming text (all of them without one)."""
    lps = scored.context_logprobs
    if prime:
        keep = np.asarray([end > len(prime) for _, end in scored.context_offsets], dtype=bool)
        lps = lps[keep]
    return float(np.sum(lps, dtype=np.float64)), len(lps)


def unigram_for(tokenizer, language: str, corpus: str | Path | None = None) -> tuple[UnigramTable, str]:
    """The unigram table of ``tokenizer`` over ``corpus`` (None: the mirror's corpora of
    ``language``; a text file; a Hugging Face dataset name, streamed), and the source the score
    files record: "<kind>:<name>:<file>:<bytes>"."""
    found = resolve_unigram_corpus(corpus, language)
    return unigram_table(tokenizer, [found.path]), found.source


class SentenceReadouts(Family):
    """Each sentence alone (after the priming context, if any)."""

    name = "sentence"
    takes = ("unigram_corpus",)

    def pass_context_for(self, methods, pass_context):
        """With a unigram table (counted once per run and corpus) when a method needs one."""
        if not any(m.needs_unigram for m in methods):
            return pass_context
        key = ("unigram", str(pass_context.unigram_corpus))
        if key not in pass_context.cache:
            pass_context.cache[key] = unigram_for(pass_context.scorer.tokenizer, pass_context.language,
                                                  pass_context.unigram_corpus)
        unigram, source = pass_context.cache[key]
        return replace(pass_context, unigram=unigram, unigram_source=source)

    def requests(self, item, template, context, pass_context, state):
        prime = with_context(context, "", pass_context.language)
        return [Request(prime, item[side]) for side in pass_context.sides]

    def table(self, items, template, contexts, scored, pass_context, states):
        table = {}
        for k, side in enumerate(pass_context.sides):
            chunk = [s[k] for s in scored]
            table[f"tgt_sum_{side}"] = [s.total for s in chunk]
            table[f"n_tokens_{side}"] = [s.n_tokens for s in chunk]
            table[f"token_lp_{side}"] = [s.logprobs.astype(np.float64) for s in chunk]
            table[f"token_ids_{side}"] = [np.asarray(s.token_ids, dtype=np.int64) for s in chunk]
            units = [measures.text_units(str(item[side])) for item in items]
            table[f"n_chars_{side}"] = [chars for chars, _ in units]
            table[f"n_bytes_{side}"] = [n for _, n in units]
            if pass_context.unigram is not None:
                table[f"uni_sum_{side}"] = [float(pass_context.unigram(s.token_ids).sum()) for s in chunk]
        out = pd.DataFrame(table)
        out["log_vocab"] = math.log(len(pass_context.scorer.tokenizer))
        return out


class TemplateReadouts(Family):
    """The sentence inside an Ide et al. template; ``comparative`` puts the other sentence in slot B."""

    with_context = True

    def __init__(self, template_set: str):
        self.template_set = self.name = template_set
        # examples before each item: acceptable sentences in the same template
        self.takes = ("fewshot",) if template_set == "single" else ()

    def templates(self, language, style, selected):
        return [t for t in ide_templates(self.template_set, language, "base") if t.id in selected]

    def _input(self, template, target: str, other: str) -> tuple[str, str]:
        before, after = template.split("sentence")
        if self.template_set == "compar":
            if after.count("{other_sentence}") != 1:
                raise ValueError(f"comparative template {template.key} needs {{other_sentence}} after {{sentence}}")
            after = after.replace("{other_sentence}", other)
        return before, target + after

    def _other(self, item, side: str, pass_context) -> str:
        """The sentence in slot B of a comparative template: the pair's other sentence."""
        if self.template_set != "compar":
            return ""
        if pass_context.sides != ("good", "bad"):
            raise ValueError("comparative LP compares the two sentences of a pair; this dataset has single sentences")
        return item["bad" if side == "good" else "good"]

    def prepare(self, items, template, contexts, pass_context):
        """Each item's few-shot block ("" without examples)."""
        if not pass_context.fewshot.k:
            return [""] * len(items)
        return [template_examples(template, shots) for shots in fewshot.acceptable_examples(items, pass_context.fewshot)]

    def requests(self, item, template, context, pass_context, state):
        out = []
        for side in pass_context.sides:
            before, rest = self._input(template, item[side], self._other(item, side, pass_context))
            out.append(Request(with_context(context, state + before, pass_context.language), rest))
        if self.template_set == "single":  # each sentence alone too, under the same priming context (PMI)
            out += [Request(with_context(context, "", pass_context.language), item[side]) for side in pass_context.sides]
        return out

    def table(self, items, template, contexts, scored, pass_context, states):
        table = {}
        for k, side in enumerate(pass_context.sides):
            chunk = [s[k] for s in scored]
            # uncounted: the priming context and the examples (all of the text before the item's template)
            sums = [_template_sums(s, with_context(c, block, pass_context.language) if c or block else "")
                    for s, c, block in zip(chunk, contexts, states)]
            table[f"tgt_sum_{side}"] = [s.total for s in chunk]
            table[f"n_tokens_{side}"] = [s.n_tokens for s in chunk]
            table[f"token_lp_{side}"] = [s.logprobs.astype(np.float64) for s in chunk]
            table[f"token_ids_{side}"] = [np.asarray(s.token_ids, dtype=np.int64) for s in chunk]
            table[f"ctx_sum_{side}"] = [total for total, _ in sums]
            table[f"ctx_n_{side}"] = [n for _, n in sums]
            table[f"input_{side}"] = [block + "".join(self._input(template, item[side],
                                                                  self._other(item, side, pass_context)))
                                      for item, block in zip(items, states)]
            if self.template_set == "single":  # the sentence alone: the target's LP without the template
                table[f"alone_sum_{side}"] = [s[len(pass_context.sides) + k].total for s in scored]
        out = pd.DataFrame(table)
        out["log_vocab"] = math.log(len(pass_context.scorer.tokenizer))
        return out


SENTENCE, SINGLE, COMPAR = SentenceReadouts(), TemplateReadouts("single"), TemplateReadouts("compar")


def _lp(t, side):
    return t[f"tgt_sum_{side}"]


def _meanlp(t, side):
    return measures.mean_lp(t[f"tgt_sum_{side}"], t[f"n_tokens_{side}"])


def _penlp(t, side, penlp_alpha):
    return measures.pen_lp(t[f"tgt_sum_{side}"], t[f"n_tokens_{side}"], penlp_alpha)


def _whole_sum(t, side):
    return t[f"ctx_sum_{side}"] + t[f"tgt_sum_{side}"]


def _whole_n(t, side):
    return t[f"ctx_n_{side}"] + t[f"n_tokens_{side}"]


READOUTS = [
    Method("lp", SENTENCE, "sum of token log-probs of the sentence alone", _lp),
    Method("meanlp", SENTENCE, "LP / number of tokens", _meanlp),
    Method("penlp", SENTENCE, "LP / ((5 + len) / 6) ** alpha (penlp_alpha: 0.8, Ide et al.'s)", _penlp,
           takes=("penlp_alpha",)),
    Method("slln_lp", SENTENCE, f"LP / len ** {measures.SLLN_ALPHA} (SLLN-LP, Liu et al. 2024's sub-linear length norm)",
           lambda t, s: measures.slln_lp(t[f"tgt_sum_{s}"], t[f"n_tokens_{s}"])),
    Method("lp_per_char", SENTENCE, "LP / characters of the sentence (lm-eval's acc_norm, lighteval's char norm)",
           lambda t, s: measures.per_unit(t[f"tgt_sum_{s}"], t[f"n_chars_{s}"])),
    Method("lp_per_byte", SENTENCE, "LP / UTF-8 bytes of the sentence (lm-eval's byte-normalised accuracy)",
           lambda t, s: measures.per_unit(t[f"tgt_sum_{s}"], t[f"n_bytes_{s}"])),
    Method("slor", SENTENCE, "mean over tokens of log p - log p_unigram",
           lambda t, s: measures.slor(t[f"tgt_sum_{s}"], t[f"uni_sum_{s}"], t[f"n_tokens_{s}"]), needs_unigram=True),
    Method("bf_uniform", SENTENCE, "LP + len * log|V| (Bayes factor vs uniform)",
           lambda t, s: measures.bf_uniform(t[f"tgt_sum_{s}"], t[f"n_tokens_{s}"], t["log_vocab"])),
    Method("bf_unigram", SENTENCE, "LP - sum of unigram log-probs (Bayes factor vs unigram)",
           lambda t, s: measures.bf_unigram(t[f"tgt_sum_{s}"], t[f"uni_sum_{s}"]), needs_unigram=True),
    Method("intemplate_lp", SINGLE, "LP of the whole templated input", _whole_sum, target_score=_lp,
           needs=("continuation",)),
    Method("intemplate_meanlp", SINGLE, "whole-input LP / whole-input tokens",
           lambda t, s: measures.mean_lp(_whole_sum(t, s), _whole_n(t, s)), target_score=_meanlp, needs=("continuation",)),
    Method("intemplate_penlp", SINGLE, "whole-input LP / ((5 + whole len) / 6) ** alpha (penlp_alpha: 0.8)",
           lambda t, s, penlp_alpha: measures.pen_lp(_whole_sum(t, s), _whole_n(t, s), penlp_alpha),
           target_score=_penlp, needs=("continuation",), takes=("penlp_alpha",)),
    Method("intemplate_pmi", SINGLE, "PMI-normalised LP (lighteval's): the LP of the sentence and the template's "
           "rest after the template's opening, minus the sentence's LP alone",
           lambda t, s: measures.pmi(t[f"tgt_sum_{s}"], t[f"alone_sum_{s}"]),
           needs=("continuation",)),
    Method("comparative_lp", COMPAR,
           "LP of the comparative template with the target in slot A, the other sentence in slot B", _whole_sum,
           needs=("continuation",)),
]
