"""Prompt-based judgments (Ide et al. 2024, §3.3): Yes/No probability and A/B prompting.

Prompts come from the template files (system message + user template). Base models get
``system + separator + user`` (a space for English, nothing for Chinese; the user template
ends in "\\nAnswer: "). Instruct models get the tokenizer's own chat template with a system
and a user message and the generation prompt; a chat template without a system role gets
the system text in front of the user message. The engine tokenizes the rendered text
without adding special tokens and adds the document-start token only when the text does
not already begin with it, so it is never doubled.

Answers are read at the position after the prompt's own tokens (``separate=True``): the
position where constrained decoding (outlines) generates, so the logit path and the
outlines path see the same input.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .scoring import Request, Scorer
from .templates import Template

YES_NO = {"en": ("Yes", "No"), "zh": ("是", "否")}
AB = ("A", "B")


def render(template: Template, tokenizer, instruct: bool, **slots) -> str:
    """The exact prompt text for a base or an instruct model."""
    user = template.fill(**slots)
    if not instruct:
        sep = "" if template.language == "zh" else " "
        return template.system + sep + user
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("an instruct prompt needs a tokenizer with a chat template; "
                         "use the base-model templates (style 'base') for this model")
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        if template.system and template.system in text:
            return text
    except Exception:  # noqa: BLE001 - templates signal "no system role" by raising
        pass
    merged = [{"role": "user", "content": template.system + "\n\n" + user}]
    return tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)


def yes_probability(lp_yes: np.ndarray, lp_no: np.ndarray) -> np.ndarray:
    """P(Yes) / (P(Yes) + P(No)) from log-probs (Ide et al. eq. 4), computed stably."""
    return 1.0 / (1.0 + np.exp(np.asarray(lp_no) - np.asarray(lp_yes)))


def released_ratio(logit_yes: np.ndarray, logit_no: np.ndarray) -> np.ndarray:
    """logit(Yes) / (logit(Yes) + logit(No)) of the RAW logits, as Ide et al.'s released code."""
    yes, no = np.asarray(logit_yes, float), np.asarray(logit_no, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return yes / (yes + no)


def sentence_lengths(tokenizer, sentences) -> list[int]:
    """Token count of each sentence on its own (for length-bias analyses)."""
    return [len(ids) for ids in tokenizer(list(sentences), add_special_tokens=False)["input_ids"]]


def yesno_table(scorer: Scorer, pairs: pd.DataFrame, template: Template, instruct: bool) -> pd.DataFrame:
    """Per pair and side: the prompt, log-probs and raw logits of Yes and No, and the token forms."""
    yes, no = YES_NO[template.language]
    n = len(pairs)
    prompts = [render(template, scorer.tokenizer, instruct, sentence=s) for s in list(pairs.good) + list(pairs.bad)]
    readouts = scorer.next_token(prompts, [yes, no], separate=True, desc=f"yes/no {template.id}")
    table = {}
    for side, chunk, texts in (("good", readouts[:n], prompts[:n]), ("bad", readouts[n:], prompts[n:])):
        table[f"prompt_{side}"] = texts
        table[f"lp_yes_{side}"] = [r.logprobs[yes] for r in chunk]
        table[f"lp_no_{side}"] = [r.logprobs[no] for r in chunk]
        table[f"logit_yes_{side}"] = [r.logits[yes] for r in chunk]
        table[f"logit_no_{side}"] = [r.logits[no] for r in chunk]
    table["n_tokens_good"] = sentence_lengths(scorer.tokenizer, pairs.good)
    table["n_tokens_bad"] = sentence_lengths(scorer.tokenizer, pairs.bad)
    table["form_yes"] = ["".join(readouts[0].forms[yes])] * n
    table["form_no"] = ["".join(readouts[0].forms[no])] * n
    return pd.DataFrame(table)


def good_slots(n: int, seed: int) -> np.ndarray:
    """Which slot ("A"/"B") holds the acceptable sentence, drawn per pair with ``seed``."""
    return np.where(np.random.default_rng(seed).random(n) < 0.5, "A", "B")


def ab_table(scorer: Scorer, pairs: pd.DataFrame, template: Template, instruct: bool, seed: int = 42,
             outlines_model=None) -> pd.DataFrame:
    """Per pair: the slot of the good sentence, the prompt, log-probs of "A" and "B" (fast
    path) and, when an outlines model is given, its constrained greedy answer."""
    slots = good_slots(len(pairs), seed)
    prompts = []
    for slot, good, bad in zip(slots, pairs.good, pairs.bad):
        a, b = (good, bad) if slot == "A" else (bad, good)
        prompts.append(render(template, scorer.tokenizer, instruct, sentence_a=a, sentence_b=b))
    readouts = scorer.next_token(prompts, list(AB), separate=True, desc=f"A/B {template.id}")
    lp_a = np.array([r.logprobs["A"] for r in readouts])
    lp_b = np.array([r.logprobs["B"] for r in readouts])
    answer = np.where(lp_a > lp_b, "A", np.where(lp_b > lp_a, "B", "tie"))
    out = pd.DataFrame({"good_slot": slots, "prompt": prompts, "lp_a": lp_a, "lp_b": lp_b, "answer": answer,
                        "form_a": "".join(readouts[0].forms["A"]), "form_b": "".join(readouts[0].forms["B"]),
                        "n_tokens_good": sentence_lengths(scorer.tokenizer, pairs.good),
                        "n_tokens_bad": sentence_lengths(scorer.tokenizer, pairs.bad)})
    if outlines_model is not None:
        out["answer_outlines"] = outlines_answers(outlines_model, scorer, prompts)
    return out


class OutlinesAB:
    """Greedy decoding constrained to exactly "A" or "B" with outlines (the paper's way)."""

    def __init__(self, model, tokenizer):
        from typing import Literal

        import outlines

        side = tokenizer.padding_side
        self.model = outlines.from_transformers(model, tokenizer)
        tokenizer.padding_side = side  # outlines switches the shared tokenizer to left padding
        # our prompts are rendered already (chat template included): pass them through as text
        self.model.type_adapter.has_chat_template = False
        self.generator = outlines.Generator(self.model, Literal["A", "B"])
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> str:
        return self.generator(text, max_new_tokens=4, do_sample=False)


def outlines_text(scorer: Scorer, prompt: str) -> str:
    """The prompt as outlines should receive it so that its token ids equal the engine's
    (outlines lets the tokenizer add its special tokens; the engine adds one start token)."""
    want = list(scorer.encode(Request(prompt, "A", separate=True)).ids[:-1])
    tok = scorer.tokenizer
    start = tok.convert_ids_to_tokens(scorer.start_id) if scorer.start_id is not None else ""
    for text in (prompt, start + prompt, prompt.removeprefix(start) if start else prompt):
        if list(tok(text)["input_ids"]) == want:
            return text
    raise ValueError("cannot give outlines the same token ids as the engine for this prompt "
                     f"(start token {start!r}); compare tokenizer(prompt) with the engine's encode()")


def outlines_answers(generator: OutlinesAB, scorer: Scorer, prompts: Sequence[str]) -> list[str]:
    from tqdm.auto import tqdm

    return [generator(outlines_text(scorer, p)) for p in tqdm(prompts, desc="outlines", leave=False,
                                                               disable=not scorer.progress)]


def balanced_accuracy(labels: Sequence[bool], predictions: Sequence[bool]) -> float:
    """Mean of the recall on acceptable and on unacceptable items."""
    y, p = np.asarray(labels, bool), np.asarray(predictions, bool)
    if y.all() or not y.any():
        raise ValueError("balanced accuracy needs both acceptable and unacceptable items")
    return float(((p & y).sum() / y.sum() + (~p & ~y).sum() / (~y).sum()) / 2)

