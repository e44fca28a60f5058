"""Prompt text exactly as the model reads it: templates rendered for base or chat models,
and a priming context placed before a method's whole input.

Base models get ``system + separator + user`` (a space for English, nothing for Chinese;
the user template ends in "\\nAnswer: "). Instruct models get the tokenizer's own chat
template with a system and a user message and the generation prompt; a chat template
without a system role gets the system text in front of the user message.

Few-shot examples (``shots``: (filled slots, answer) per example) come before the item:
for base models as solved turns ``user + answer`` separated by a blank line (the user text
ends in "Answer: ", so each example reads "...\\nAnswer: Yes"), for chat models as
alternating user and assistant messages after the system message. In-template readouts
get their examples from :func:`template_examples`.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from .templates import Template

EXAMPLE_SEPARATOR = "\n\n"  # between few-shot examples, and between the last one and the item


def separator(language: str) -> str:
    """What joins two texts: a space in English (and Russian), nothing in Chinese or Japanese."""
    return "" if language in ("zh", "ja") else " "


def continued(prefix: str, language: str) -> str:
    """A prefix as its continuation follows it, after the language's separator: without trailing
    whitespace where that is a space (one space between them, never two: a stimulus that ends in
    a space, as Hu & Levy's News item 36 "... rent -- ", would otherwise put a bare-space token
    into the continuation's score). Only where the continuation follows the prefix: a prompt that
    writes ``{prefix}`` before other text (metaQuestionComplex's "{prefix}... What") takes the
    prefix as the item writes it."""
    return prefix.rstrip() if separator(language) else prefix


def with_context(context: str, text: str, language: str = "en") -> str:
    """``context`` before ``text`` (joined by the language's separator unless the context
    already ends in whitespace); ``text`` unchanged when there is no context."""
    if not context:
        return text
    if context[-1].isspace():
        return context + text
    return context + separator(language) + text


def template_examples(template: Template, sentences: Sequence[str]) -> str:
    """The few-shot block of an in-template readout: each example sentence in ``template``,
    each followed by a blank line (empty without examples)."""
    return "".join(template.fill(sentence=s) + EXAMPLE_SEPARATOR for s in sentences)


def render(template: Template, tokenizer, instruct: bool, context: str = "",
           shots: Sequence[tuple[Mapping[str, str], str]] = (), **slots) -> str:
    """The exact prompt text for a base or an instruct model, with an optional priming
    ``context`` and few-shot examples ``shots`` ((slots, answer) each). The context goes before
    the whole prompt for base models and at the start of the first user message for chat
    models (the chat template's own header stays first); without shots the prompt is the
    zero-shot one."""
    turns = [(template.fill(**shot), answer) for shot, answer in shots]
    user = template.fill(**slots)
    if not instruct:
        solved = "".join(question + answer + EXAMPLE_SEPARATOR for question, answer in turns)
        return with_context(context, template.system + separator(template.language) + solved + user,
                            template.language)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("an instruct prompt needs a tokenizer with a chat template; "
                         "use the base-model templates (style 'base') for this model")
    dialogue = [m for question, answer in turns
                for m in ({"role": "user", "content": question}, {"role": "assistant", "content": answer})]
    dialogue.append({"role": "user", "content": user})
    dialogue[0] = {"role": "user", "content": with_context(context, dialogue[0]["content"], template.language)}
    messages = [{"role": "system", "content": template.system}] + dialogue
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        if template.system and template.system in text:
            return text
    except Exception:  # noqa: BLE001 - chat templates signal "no system role" by raising
        pass
    dialogue[0] = {"role": "user", "content": template.system + "\n\n" + dialogue[0]["content"]}
    return tokenizer.apply_chat_template(dialogue, tokenize=False, add_generation_prompt=True)


def fill_before(template: str, slot: str = "continuation", **slots) -> tuple[str, str]:
    """Fill every named slot of a Hu & Levy prompt but ``slot``; (text before it, text after)."""
    filled = template
    for key, value in slots.items():
        filled = filled.replace("{" + key + "}", value)
    before, _, after = filled.partition("{" + slot + "}")
    return before, after
