"""Prompt-based methods (Ide et al. 2024, section 3.3): Yes/No probability and A/B prompting.

Answers are read at the position after the prompt's own tokens (``separate=True``): the
position where constrained decoding (outlines) generates, so the logit path and the
outlines path see the same input. Prompts are rendered by :mod:`helpers.methods.prompt_text`; a
priming context goes before the prompt (base models) or opens the first user message (chat).
Few-shot Yes/No (``pass_context.fewshot``) puts k solved question-answer turns before the item
(:mod:`helpers.methods.fewshot`): "...Answer: Yes" lines for base models, user and assistant
messages for chat models. On an encoder-decoder the prompt is the encoder's source and the
answer is read from the decoder's start (the scorer's prompt shape, recorded as ``prompt_shape``,
as Hu & Levy's metalinguistic prompts run on Flan-T5); method ``ab`` needs constrained decoding,
which only causal scorers offer, and is not applicable there (``ab_logit`` decides the same prompts).
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from . import answers, fewshot
from ..engine.interface import Request
from .base import Family, Method
from .prompt_text import render
from .templates import ide_templates


def _sentence_lengths(tokenizer, sentences) -> list[int]:
    """Token count of each sentence on its own (for length-bias analyses)."""
    return [len(ids) for ids in tokenizer(list(sentences), add_special_tokens=False)["input_ids"]]


class PromptFamily(Family):
    """Shared by Yes/No and A/B: templates by language and style, the prompt's configuration."""

    def templates(self, language, style, selected):
        return [t for t in ide_templates(self.template_set, language, style) if t.id in selected]

    def template_config(self, template, pass_context):
        config = {"template_id": template.id, "template_text": template.user, "system": template.system,
                  "prompt_style": template.style}
        shape = pass_context.scorer.record()["prompt_shape"]
        if shape is not None:  # seq2seq: the prompt is the source, or holds a sentinel
            config["prompt_shape"] = shape
        return config


class YesNo(PromptFamily):
    """Each sentence in a Yes/No prompt; the log-probs and raw logits of Yes and No."""

    name, template_set, takes = "yesno", "yn", ("fewshot",)

    def prepare(self, items, template, contexts, pass_context):
        """Each item's prompt per side (after its few-shot examples, if any), rendered once."""
        tok = pass_context.scorer.tokenizer
        yes, no = answers.yes_no(template.language)
        shots = ([[({"sentence": s}, yes if ok else no) for s, ok in ex]
                  for ex in fewshot.judged_examples(items, pass_context.fewshot)]
                 if pass_context.fewshot.k else [()] * len(items))
        return [{side: render(template, tok, pass_context.instruct, c, shots=sh, sentence=item[side])
                 for side in pass_context.sides} for item, c, sh in zip(items, contexts, shots)]

    def requests(self, item, template, context, pass_context, state):
        yes, no = answers.yes_no(template.language)
        return pass_context.scorer.shaped([Request(state[side], answer, separate=True)
                                      for side in pass_context.sides for answer in (yes, no)], "prompt")

    def table(self, items, template, contexts, scored, pass_context, states):
        table = {}
        for k, side in enumerate(pass_context.sides):
            table[f"prompt_{side}"] = [state[side] for state in states]
            table[f"lp_yes_{side}"] = [s[2 * k].total for s in scored]
            table[f"lp_no_{side}"] = [s[2 * k + 1].total for s in scored]
            table[f"logit_yes_{side}"] = [float(s[2 * k].logits[0]) for s in scored]
            table[f"logit_no_{side}"] = [float(s[2 * k + 1].logits[0]) for s in scored]
        for side in pass_context.sides:
            table[f"n_tokens_{side}"] = _sentence_lengths(pass_context.scorer.tokenizer, [i[side] for i in items])
        first = scored[0]
        table["form_yes"] = ["".join(first[0].tokens)] * len(items)
        table["form_no"] = ["".join(first[1].tokens)] * len(items)
        return pd.DataFrame(table)


def good_slots(n: int, seed: int) -> np.ndarray:
    """Which slot ("A"/"B") holds the acceptable sentence, drawn per pair with ``seed``."""
    return np.where(np.random.default_rng(seed).random(n) < 0.5, "A", "B")


# ab_orders -> the orders each pair is prompted in: the seeded slot (Ide et al.), or the acceptable
# sentence first ("forward", as A) and last ("reversed", as B), with the seeded one (Scheinberg et al.
# 2025's three orders, which grammar prompting reports averaged)
AB_ORDERS = {"seeded": ("seeded",), "both": ("forward", "reversed"), "three": ("forward", "reversed", "seeded")}


def order_slots(order: str, n: int, seed: int) -> np.ndarray:
    """The acceptable sentence's slot in each of ``n`` pairs under ``order``."""
    return np.full(n, "A") if order == "forward" else np.full(n, "B") if order == "reversed" else good_slots(n, seed)


class AB(PromptFamily):
    """Both sentences as A and B: log-probs of "A" and "B" at the answer position and, with
    outlines, the constrained answer. Each pair is prompted in the orders ``ab_orders`` asks
    (:data:`AB_ORDERS`: by default the acceptable sentence's slot drawn per pair with ``ab_seed``);
    under several, each order's columns carry its name and a method's decision is the share of the
    orders it got right (a tie is that order's error; ``order_ties`` counts them)."""

    name, template_set, takes = "ab", "ab", ("ab_seed", "use_outlines", "ab_orders")

    def pass_context_for(self, methods, pass_context):
        """Whether this pass decodes with outlines, settled once (recorded as ``outlines``): asked
        (True), or under "auto" where the letters' logits would not give outlines' answer
        (:meth:`helpers.engine.interface.Scorer.decode`, ``where="auto"``); never on a scorer without
        constrained decoding (method 'ab' then needs one-token letters)."""
        can_decode = "outlines" in pass_context.scorer.features
        decode = pass_context.use_outlines is True or (pass_context.use_outlines == "auto" and can_decode
                                                  and pass_context.scorer.decode([], answers.AB, where="auto") is not None)
        return pass_context.but(use_outlines=decode and can_decode)

    def prepare(self, items, template, contexts, pass_context):
        """Each pair's (slot of the acceptable sentence, prompt) in each order, the prompts rendered once."""
        if pass_context.sides != ("good", "bad"):
            raise ValueError("A/B prompting compares the two sentences of a pair; this dataset has single sentences")
        slots = [order_slots(order, len(items), pass_context.ab_seed) for order in AB_ORDERS[pass_context.ab_orders]]
        return [[(slot[i], self._prompt(item, template, c, pass_context, slot[i])) for slot in slots]
                for i, (item, c) in enumerate(zip(items, contexts))]

    def _prompt(self, item, template, context, pass_context, slot) -> str:
        a, b = (item["good"], item["bad"]) if slot == "A" else (item["bad"], item["good"])
        return render(template, pass_context.scorer.tokenizer, pass_context.instruct, context, sentence_a=a, sentence_b=b)

    def requests(self, item, template, context, pass_context, state):
        return pass_context.scorer.shaped([Request(prompt, letter, separate=True) for _, prompt in state
                                      for letter in answers.AB], "prompt")

    def table(self, items, template, contexts, scored, pass_context, states):
        orders = AB_ORDERS[pass_context.ab_orders]
        tok = pass_context.scorer.tokenizer
        lengths = {"n_tokens_good": _sentence_lengths(tok, [i["good"] for i in items]),
                   "n_tokens_bad": _sentence_lengths(tok, [i["bad"] for i in items])}
        parts = [self._order_table([s[k] for s in states], [s[2 * k:2 * k + 2] for s in scored], pass_context)
                 for k in range(len(orders))]
        if len(orders) == 1:  # one order: its columns unnamed (the seeded slot), in every earlier file's order
            last = [c for c in ("answer_outlines", "ab_path") if c in parts[0]]
            return pd.concat([parts[0].drop(columns=last), pd.DataFrame(lengths), parts[0][last]], axis=1)
        named = [part.rename(columns={c: f"{c}_{order}" for c in part.columns if c not in ("form_a", "form_b",
                                                                                          "ab_path")})
                 for order, part in zip(orders, parts)]
        out = pd.concat([named[0][["form_a", "form_b", "ab_path"]], pd.DataFrame(lengths),
                         *[part.drop(columns=["form_a", "form_b", "ab_path"]) for part in named]], axis=1)
        ties = sum((out[f"lp_a_{o}"] == out[f"lp_b_{o}"]).astype(int) for o in orders)
        return out.assign(order_ties=ties)

    @staticmethod
    def _order_table(states, scored, pass_context) -> pd.DataFrame:
        """One order's columns: the slot, prompt, letters' log-probs, answer, the letters' forms,
        the constrained answer (outlines, or the letters' logits where each letter is one token) and
        what decided it."""
        slots, prompts = [s for s, _ in states], [p for _, p in states]
        lp_a = np.array([s[0].total for s in scored])
        lp_b = np.array([s[1].total for s in scored])
        out = pd.DataFrame({
            "good_slot": slots, "prompt": prompts, "lp_a": lp_a, "lp_b": lp_b,
            "answer": np.where(lp_a > lp_b, "A", np.where(lp_b > lp_a, "B", "tie")),
            "form_a": "".join(scored[0][0].tokens), "form_b": "".join(scored[0][1].tokens)})
        if pass_context.use_outlines:
            out["answer_outlines"] = pass_context.scorer.decode(prompts, answers.AB)
        elif all(len(s[0].logprobs) == len(s[1].logprobs) == 1 for s in scored):
            out["answer_outlines"] = greedy_letters(lp_a, lp_b, [scored[0][k].token_ids[0] for k in (0, 1)])
        out["ab_path"] = "outlines" if pass_context.use_outlines else "letter logits"  # what decided 'ab' (03, 04 show it)
        return out


def greedy_letters(lp_a: np.ndarray, lp_b: np.ndarray, ids: list[int]) -> np.ndarray:
    """The answer of greedy decoding constrained to one of two one-token letters: the letter whose token
    has the higher logit (log-prob: the same order), an exact tie going to the lower token id, as an
    argmax over the vocabulary picks the first maximum. What outlines decodes, without a decode."""
    first_wins_tie = "A" if ids[0] < ids[1] else "B"
    return np.where(lp_a > lp_b, "A", np.where(lp_b > lp_a, "B", first_wins_tie))


YESNO_FAMILY, AB_FAMILY = YesNo(), AB()


def _yes_probability(t: pd.DataFrame, side: str) -> pd.Series:
    """P(Yes) / (P(Yes) + P(No)) from log-probs (Ide et al. eq. 4), computed stably."""
    return 1.0 / (1.0 + np.exp(t[f"lp_no_{side}"] - t[f"lp_yes_{side}"]))


def _released(t: pd.DataFrame, side: str) -> pd.Series:
    """logit(Yes) / (logit(Yes) + logit(No)) of the RAW logits, as Ide et al.'s released code."""
    yes, no = t[f"logit_yes_{side}"].astype(float), t[f"logit_no_{side}"].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return yes / (yes + no)


def _orders(t: pd.DataFrame) -> list[str]:
    """The column suffixes of a table's A/B orders: [""] for one order (unnamed columns)."""
    return [""] if "lp_a" in t else [c.removeprefix("lp_a") for c in t.columns if c.startswith("lp_a_")]


def _slot_is(t: pd.DataFrame, side: str, order: str = "") -> pd.Series:
    """Whether this side's sentence is in slot A (in ``order``)."""
    good_is_a = t[f"good_slot{order}"] == "A"
    return good_is_a if side == "good" else ~good_is_a


def _letter_logprob(t: pd.DataFrame, side: str, order: str) -> pd.Series:
    return t[f"lp_a{order}"].where(_slot_is(t, side, order), t[f"lp_b{order}"])


def _answered(t: pd.DataFrame, side: str, order: str) -> pd.Series:
    if f"answer_outlines{order}" not in t:
        raise ValueError("the 'ab' method decides by constrained decoding, and this model's letters are not one "
                         "token each: run it with use_outlines=True or 'auto' (or choose 'ab_logit', the logit "
                         "comparison)")
    letter = np.where(_slot_is(t, side, order), "A", "B")  # the slot of this side's sentence
    return pd.Series((t[f"answer_outlines{order}"].to_numpy() == letter).astype(float), index=t.index)


def _ab_logit(t: pd.DataFrame, side: str) -> pd.Series:
    """Log-prob of the letter of the slot holding this side's sentence (its mean over the orders)."""
    return sum(_letter_logprob(t, side, o) for o in _orders(t)) / len(_orders(t))


def _ab_outlines(t: pd.DataFrame, side: str) -> pd.Series:
    """1 where greedy constrained decoding (outlines, or the letters' logits when each is one token)
    answered the slot of this side's sentence, else 0 (the share of the orders where it did)."""
    return sum(_answered(t, side, o) for o in _orders(t)) / len(_orders(t))


def _orders_credit(side_score):
    """A method's decision over several A/B orders: the share of orders where the acceptable
    sentence's score is the higher (a tie: that order's error); None for one order (good > bad)."""
    def credit(t: pd.DataFrame, pass_context) -> pd.Series | None:
        orders = _orders(t)
        if orders == [""]:
            return None
        return sum((side_score(t, "good", o) > side_score(t, "bad", o)).astype(float) for o in orders) / len(orders)
    return credit


AB_SIDE_SCORES = {"ab": _answered, "ab_logit": _letter_logprob}  # each A/B method's score of a side in one order


def order_outcomes(t: pd.DataFrame, method: str) -> pd.DataFrame:
    """Each row of an A/B method's file once per order it was prompted in (its rows repeated):
    ``order`` ("seeded" for a file of one order), ``correct`` (the acceptable sentence's score the
    higher in that order) and ``tie``; the mean of ``correct`` over a pair's orders is its decision."""
    side_score = AB_SIDE_SCORES[method]
    parts = []
    for order in _orders(t):
        good, bad = side_score(t, "good", order).to_numpy(float), side_score(t, "bad", order).to_numpy(float)
        parts.append(t.assign(order=order.removeprefix("_") or "seeded", correct=good > bad, tie=good == bad))
    return pd.concat(parts, ignore_index=True)


PROMPTS = [
    Method("yesno", YESNO_FAMILY, "P(Yes) / (P(Yes) + P(No)) at the answer position (softmax probabilities)",
           _yes_probability, needs=("continuation",)),
    Method("yesno_released", YESNO_FAMILY,
           "logit(Yes) / (logit(Yes) + logit(No)) of the RAW logits, as Ide et al.'s released code computes it",
           _released, needs=("continuation",)),
    Method("ab", AB_FAMILY, "A/B prompting decided by greedy decoding constrained to 'A' or 'B', as Ide et al. "
           "(one-token letters: their logits' argmax; else outlines); the letters' log-probs are stored beside it",
           _ab_outlines, decision=_orders_credit(_answered), needs=("continuation", "outlines")),
    Method("ab_logit", AB_FAMILY, "A/B prompting decided by the log-probs of 'A' and 'B' at the answer position",
           _ab_logit, decision=_orders_credit(_letter_logprob), needs=("continuation",)),
]
