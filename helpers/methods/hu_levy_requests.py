"""Hu & Levy (2023)'s prompt types and request shapes: which prompts each task has in each
language, and how a task's (context, target) requests are shaped for an encoder-decoder
(a sentinel span for the word tasks, the prompt as source for the sentence prompts)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..engine.interface import Request
from ..engine.seq2seq import answer_request, span_request
from .templates import HL_PROMPTS, hu_levy_prompts


def is_seq2seq(scorer) -> bool:
    """Whether ``scorer`` is an encoder-decoder scorer."""
    return bool(getattr(scorer, "is_seq2seq", False))


def adapt(requests: list[Request], scorer, shape: Literal["span", "prompt"]) -> list:
    """A task's requests for ``scorer``: unchanged for a causal scorer; for an
    encoder-decoder, each (context, target) becomes a sentinel span after the context
    (``"span"``: Hu & Levy's word prediction and comparison), or a prompt and its answer in the
    scorer's prompt shape (``"prompt"``: Hu & Levy's metalinguistic prompts and Ide et al.'s
    Yes/No and A/B prompts; ``answer`` unless the scorer was built with ``prompts="span"``,
    Hu & Levy's own formulation)."""
    if not is_seq2seq(scorer):
        return requests
    if shape not in ("span", "prompt"):
        raise ValueError(f"shape must be 'span' or 'prompt', got {shape!r}")
    as_span = shape == "span" or scorer.prompts == "span"
    return [span_request(r.context, r.target) if as_span else answer_request(r.context, r.target) for r in requests]


DIRECT = "direct"
PROMPT_TYPES = (DIRECT, *HL_PROMPTS)


@dataclass(frozen=True)
class HLPrompt:
    """One prompt type of one task ("direct" has no text: the string is scored alone)."""

    id: str
    task: str
    language: str
    text: str = ""


def prompts_for(task: str, language: str, selected) -> list[HLPrompt]:
    """The prompt types of ``task`` in ``language`` among ``selected`` (names, or "all")."""
    table = hu_levy_prompts()
    out = []
    for name in PROMPT_TYPES:
        if selected != "all" and name not in selected:
            continue
        if name == DIRECT:
            out.append(HLPrompt(DIRECT, task, language))
        elif (task, language, name) in table:
            out.append(HLPrompt(name, task, language, table[(task, language, name)]))
        else:
            have = sorted({(t, lang) for t, lang, _ in table})
            raise KeyError(f"Hu & Levy have no {name} prompt for {task} in {language!r}; available: {have}")
    return out
