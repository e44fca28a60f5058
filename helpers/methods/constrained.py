"""Constrained decoding with outlines: the model must answer exactly one of a few strings
(Ide et al. decide A/B prompting this way). outlines is imported where a generator is made:
the default A/B reads the letters' logits, so nothing else needs it installed."""
from __future__ import annotations

from typing import Literal, Sequence

from ..progress import bar as progress_bar
from ..engine.interface import Request


class ChoiceGenerator:
    """Greedy decoding constrained to one of ``choices`` (e.g. "A" or "B")."""

    def __init__(self, model, tokenizer, choices: Sequence[str]):
        import outlines

        side = tokenizer.padding_side
        self.model = outlines.from_transformers(model, tokenizer)
        tokenizer.padding_side = side  # outlines switches the shared tokenizer to left padding
        # prompts arrive rendered (chat template included): pass them through as text
        self.model.type_adapter.has_chat_template = False
        self.generator = outlines.Generator(self.model, Literal[tuple(choices)])

    def __call__(self, text: str) -> str:
        return self.generator(text, max_new_tokens=4, do_sample=False)


def outlines_text(scorer, prompt: str) -> str:
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


def answers(generator: ChoiceGenerator, scorer, prompts: Sequence[str], progress: bool = True) -> list[str]:
    """The constrained answer to each prompt, in order."""
    return [generator(outlines_text(scorer, p))
            for p in progress_bar(prompts, desc="outlines", unit="prompt", leave=False, disable=not progress)]


def decoded_sample(scorer, ab_rows, per_template: int, seed: int = 0, progress: bool = False):
    """outlines' constrained answer to a seeded sample of ``per_template`` stored A/B prompts of
    each template (``ab_rows``: method 'ab' rows of one model's scores, with their ``prompt``),
    beside what the scores hold for the same prompts: ``answer_ab`` ('ab': outlines, or under
    "auto" the letters' logits where they give outlines' answer) and ``answer_ab_logit`` (the
    logits compared, a tie kept): 03's check that the two paths agree, run on both."""
    import numpy as np
    import pandas as pd

    from . import answers as letters

    picked = []
    for _, rows in ab_rows.groupby("template", sort=False):
        take = min(per_template, len(rows))
        picked.append(rows.iloc[np.sort(np.random.default_rng(seed).choice(len(rows), take, replace=False))])
    sample = pd.concat(picked) if picked else ab_rows.iloc[:0]
    generator = ChoiceGenerator(scorer.loaded.model, scorer.tokenizer, letters.AB)
    decoded = answers(generator, scorer, list(sample["prompt"]), progress)
    return sample[["model", "template", "paradigm", "pair_id"]].assign(  # "answer": the logits compared, when scored
        answer_outlines=decoded, answer_ab=sample["answer_outlines"].to_numpy(), answer_ab_logit=sample["answer"].to_numpy())
