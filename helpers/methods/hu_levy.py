"""Direct probability vs metalinguistic prompts (Hu & Levy 2023) as methods.

Each task is a family whose "templates" are the prompt types: ``direct`` (log-probs of the
string itself) and the three metalinguistic prompts (MetaQuestionSimple, MetaInstruct,
MetaQuestionComplex). The score files hold, per item, what the paper compares:

- ``hl_word_prediction`` (exp. 1, P18 and News; single items): log p(true final word);
- ``hl_word_comparison`` (exp. 2, DTFit; pairs of words): log p(word) per side, the prompts
  listing both words in both orders (averaged);
- ``hl_sentence_judgment`` (exp. 3a; pairs): Direct LP per sentence, or log p(Yes) per
  sentence with log p(No) beside it (balanced accuracy from Yes > No);
- ``hl_sentence_comparison`` (exp. 3b; pairs): Direct LP per sentence, or per prompt log p of
  the sentence's number ("1"/"2"), averaged over both orders.

The two comparison tasks present the options in both orders. ``pass_context.order_average``
says how their prompts' ``correct`` is decided: "accuracy" (the default; the paper reports
the accuracies of the two orders averaged) credits each pair with the share of orders it
got right (0, 0.5 or 1; a tie is that order's error), "logprob" compares the log-probs
averaged over the orders (score_good > score_bad). The scores are the same under both;
score files record the switch as ``order_average``.

A priming context goes before the whole input. On an encoder-decoder (Flan-T5,
:mod:`helpers.engine.seq2seq`) the word tasks score the word as a sentinel span after its prefix
(the prompt, if any, in the encoder; as Hu & Levy's code does), the sentence prompts read
the prompt as source and the answer as target, and Direct sentences are the decoder's
probability after an empty source.
"""
from __future__ import annotations


import pandas as pd

from . import answers
from ..engine.interface import Request
from .base import Family, Method
from .hu_levy_prompt_types import DIRECT, prompts_for
from .prompt_text import continued, fill_before, separator, with_context


def _direct_requests(item, context: str, language: str) -> list[Request]:
    """Direct measurement of a pair: each sentence alone after the context."""
    prime = with_context(context, "", language)
    return [Request(prime, item["good"]), Request(prime, item["bad"])]


def _direct_table(scored) -> pd.DataFrame:
    """Direct measurement: the two sides' log-probs."""
    return pd.DataFrame({"lp_good": [s[0].total for s in scored], "lp_bad": [s[1].total for s in scored]})


class HLFamily(Family):
    """Shared by the four tasks: prompt types as templates."""

    task = ""
    takes = ("order_average",)
    orders = False  # whether its prompts list the options in both orders

    def templates(self, language, style, selected):
        names = [s for s in selected if isinstance(s, str)]  # template ids (ints) are Ide et al.'s
        return prompts_for(self.task, language, names or "all")

    def reads(self, template):
        """Its answer orders' average where the prompt lists the options in both orders."""
        return self.takes if self.orders and template.id != DIRECT else ()


class WordPrediction(HLFamily):
    name, task, template_set = "hl_word_prediction", "word_prediction", "hu_levy"

    def score_sides(self, sides):
        return ("item",)

    def requests(self, item, template, context, pass_context, state):
        space = separator(template.language)
        # the continued prefix where the word follows it; as the item writes it inside a prompt
        prefix, word = continued(item["prefix"], template.language), item["continuation"]
        if template.id == DIRECT:
            request = Request(with_context(context, prefix, template.language), space + word)
            return pass_context.scorer.shaped([request], "span")
        if "{full_sentence}" in template.text:  # the word ends the prompt, after its prefix
            before = template.text.replace("{full_sentence}", prefix + space)
        else:  # metaQuestionComplex: "{prefix}... What is the best next word?"
            before, _ = fill_before(template.text, prefix=item["prefix"])
        return pass_context.scorer.shaped([Request(with_context(context, before, template.language), word)], "span")

    def table(self, items, template, contexts, scored, pass_context, states):
        return pd.DataFrame({"lp": [s[0].total for s in scored], "n_tokens": [s[0].n_tokens for s in scored]})


class WordComparison(HLFamily):
    name, task, template_set, orders = "hl_word_comparison", "word_comparison", "hu_levy", True

    def score_sides(self, sides):
        return ("good", "bad")

    def requests(self, item, template, context, pass_context, state):
        lang, space = template.language, separator(template.language)
        prefix, good, bad = continued(item["prefix"], lang), item["good_continuation"], item["bad_continuation"]
        if template.id == DIRECT:
            head = with_context(context, prefix, lang)
            return pass_context.scorer.shaped([Request(head, space + good), Request(head, space + bad)], "span")
        out = []
        for w1, w2 in ((good, bad), (bad, good)):
            if "{full_sentence}" in template.text:
                head = template.text.replace("{w1}", w1).replace("{w2}", w2).replace("{full_sentence}", prefix + space)
            else:  # the prefix inside the prompt, as the item writes it
                head, _ = fill_before(template.text, prefix=item["prefix"], w1=w1, w2=w2)
            head = with_context(context, head, lang)
            out += [Request(head, good), Request(head, bad)]
        return pass_context.scorer.shaped(out, "span")

    def table(self, items, template, contexts, scored, pass_context, states):
        if template.id == DIRECT:
            return _direct_table(scored)
        return pd.DataFrame({
            "lp_good_first_good": [s[0].total for s in scored], "lp_good_first_bad": [s[1].total for s in scored],
            "lp_bad_first_good": [s[2].total for s in scored], "lp_bad_first_bad": [s[3].total for s in scored]})


class SentenceJudgment(HLFamily):
    name, task, template_set = "hl_sentence_judgment", "sentence_judgment", "hu_levy"

    def requests(self, item, template, context, pass_context, state):
        lang = template.language
        if template.id == DIRECT:
            return _direct_requests(item, context, lang)
        yes, no = answers.yes_no(lang)
        out = []
        for side in ("good", "bad"):
            head = with_context(context, fill_before(template.text, sentence=item[side])[0], lang)
            out += [Request(head, yes), Request(head, no)]
        return pass_context.scorer.shaped(out, "prompt")

    def table(self, items, template, contexts, scored, pass_context, states):
        if template.id == DIRECT:
            return _direct_table(scored)
        return pd.DataFrame({"lp_yes_good": [s[0].total for s in scored], "lp_no_good": [s[1].total for s in scored],
                             "lp_yes_bad": [s[2].total for s in scored], "lp_no_bad": [s[3].total for s in scored]})


class SentenceComparison(HLFamily):
    name, task, template_set, orders = "hl_sentence_comparison", "sentence_comparison", "hu_levy", True

    def requests(self, item, template, context, pass_context, state):
        lang = template.language
        if template.id == DIRECT:
            return _direct_requests(item, context, lang)
        out = []
        for s1, s2 in ((item["good"], item["bad"]), (item["bad"], item["good"])):
            head = with_context(context, fill_before(template.text, s1=s1, s2=s2)[0], lang)
            out += [Request(head, n) for n in answers.ONE_TWO]
        return pass_context.scorer.shaped(out, "prompt")

    def table(self, items, template, contexts, scored, pass_context, states):
        if template.id == DIRECT:
            return _direct_table(scored)
        # good first: the good sentence is "1"; bad first: it is "2"
        return pd.DataFrame({"lp_1_good_first": [s[0].total for s in scored],
                             "lp_2_good_first": [s[1].total for s in scored],
                             "lp_1_bad_first": [s[2].total for s in scored],
                             "lp_2_bad_first": [s[3].total for s in scored]})


WORD_PREDICTION, WORD_COMPARISON = WordPrediction(), WordComparison()
SENTENCE_JUDGMENT, SENTENCE_COMPARISON = SentenceJudgment(), SentenceComparison()


def _word(t, side):
    return t["lp"]


def _compared_word(t, side):
    if "lp_good" in t:
        return t[f"lp_{side}"]
    return (t[f"lp_good_first_{side}"] + t[f"lp_bad_first_{side}"]) / 2


def _judged(t, side):
    return t[f"lp_{side}"] if "lp_good" in t else t[f"lp_yes_{side}"]


def _compared_sentence(t, side):
    if "lp_good" in t:
        return t[f"lp_{side}"]
    if side == "good":
        return (t["lp_1_good_first"] + t["lp_2_bad_first"]) / 2
    return (t["lp_2_good_first"] + t["lp_1_bad_first"]) / 2


def _orders_credit(good_first: pd.Series, bad_first: pd.Series, pass_context) -> pd.Series | None:
    """The share of the two orders decided right ("accuracy"), or None: decide by the averaged
    log-probs ("logprob")."""
    if pass_context.order_average == "logprob":
        return None
    return (good_first.astype(float) + bad_first.astype(float)) / 2


def _word_orders(t, pass_context):
    if "lp_good" in t:  # Direct: one order
        return None
    return _orders_credit(t["lp_good_first_good"] > t["lp_good_first_bad"],
                          t["lp_bad_first_good"] > t["lp_bad_first_bad"], pass_context)


def _sentence_orders(t, pass_context):
    if "lp_good" in t:
        return None
    # good first: the good sentence is "1"; bad first: it is "2"
    return _orders_credit(t["lp_1_good_first"] > t["lp_2_good_first"],
                          t["lp_2_bad_first"] > t["lp_1_bad_first"], pass_context)


HU_LEVY = [
    Method("hl_word_prediction", WORD_PREDICTION, "log p(true final word) after the prefix, directly or in a prompt",
           _word, needs=("continuation",)),
    Method("hl_word_comparison", WORD_COMPARISON,
           "log p(word) after the prefix; prompts list both words, both orders averaged", _compared_word,
           decision=_word_orders, needs=("continuation",)),
    Method("hl_sentence_judgment", SENTENCE_JUDGMENT,
           "Direct: LP of each sentence; prompts: log p(Yes) for each sentence (log p(No) beside it)", _judged,
           needs=("continuation",)),
    Method("hl_sentence_comparison", SENTENCE_COMPARISON,
           "Direct: LP of each sentence; prompts: log p(the sentence's number), both orders averaged",
           _compared_sentence, decision=_sentence_orders, needs=("continuation",)),
]
# Which tasks each Hu & Levy stimulus set takes.
TASKS = {"hl_p18": ["hl_word_prediction"], "hl_news": ["hl_word_prediction"], "hl_dtfit": ["hl_word_comparison"],
         "hl_blimp": ["hl_sentence_judgment", "hl_sentence_comparison"],
         "hl_syntaxgym": ["hl_sentence_judgment", "hl_sentence_comparison"],
         "hl_mandarin": ["hl_sentence_judgment", "hl_sentence_comparison"],
         "hl_news_zh": ["hl_word_prediction"], "hl_simple_zh": ["hl_word_prediction"]}  # Appendix D: Mandarin


def default_sets(language: str) -> list[str]:
    """The stimulus sets 03 runs by default for a dataset's language (English: the paper's
    experiments; Chinese: Appendix D, Mandarin sentences and word prediction)."""
    from ..data import DATASETS

    return [s for s in TASKS if DATASETS[s].language == language]
