"""Prompt text exactly as the model reads it: templates rendered for base or chat models,
and a priming context placed before a method's whole input.

Base models get ``system + separator + user`` (a space for English, nothing for Chinese;
the user template ends in "\\nAnswer: "). Instruct models get the tokenizer's own chat
template with a system and a user message and the generation prompt; a chat template
without a system role gets the system text in front of the user message.
"""
from __future__ import annotations

from .templates import Template


def separator(language: str) -> str:
    """What joins two texts: a space in English, nothing in Chinese."""
    return "" if language == "zh" else " "


def with_context(context: str, text: str, language: str = "en") -> str:
    """``context`` before ``text`` (joined by the language's separator unless the context
    already ends in whitespace); ``text`` unchanged when there is no context."""
    if not context:
        return text
    if context[-1].isspace():
        return context + text
    return context + separator(language) + text


def render(template: Template, tokenizer, instruct: bool, context: str = "", **slots) -> str:
    """The exact prompt text for a base or an instruct model, with an optional priming
    ``context``: before the whole prompt for base models, at the start of the user message
    for chat models (the chat template's own header stays first)."""
    user = template.fill(**slots)
    if not instruct:
        return with_context(context, template.system + separator(template.language) + user, template.language)
    user = with_context(context, user, template.language)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("an instruct prompt needs a tokenizer with a chat template; "
                         "use the base-model templates (style 'base') for this model")
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        if template.system and template.system in text:
            return text
    except Exception:  # noqa: BLE001 - chat templates signal "no system role" by raising
        pass
    merged = [{"role": "user", "content": template.system + "\n\n" + user}]
    return tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)


def fill_before(template: str, slot: str = "continuation", **slots) -> tuple[str, str]:
    """Fill every named slot of a Hu & Levy prompt but ``slot``; (text before it, text after)."""
    filled = template
    for key, value in slots.items():
        filled = filled.replace("{" + key + "}", value)
    before, _, after = filled.partition("{" + slot + "}")
    return before, after
