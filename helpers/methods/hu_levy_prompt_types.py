"""Hu & Levy (2023)'s prompt types: which prompts each task has in each language (the scorer
shapes a task's requests for its kind of model: :meth:`helpers.engine.interface.Scorer.shaped`)."""
from __future__ import annotations

from dataclasses import dataclass

from .templates import HL_PROMPTS, hu_levy_prompts

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
