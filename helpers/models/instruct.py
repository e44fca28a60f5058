"""Whether a model the registry does not list is an instruct (chat) checkpoint, decided as a
researcher would: from what marks one. A chat template alone does not decide it, since base
checkpoints ship one too (Qwen2.5's base models do); its name (``-Instruct``, ``-chat``, ``-it``,
``-sft``; ``-base``, Gemma's ``-pt``) and whether its generation stops at a chat turn's end (its
tokenizer's end-of-sequence token, or every end token of its generation configuration, is
``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``...) do. A turn's end listed beside the plain end
token marks nothing: Gemma 3's base and instruct checkpoints both list ``[<eos>, <end_of_turn>]``,
so for those only the name decides (tests/fixtures/checkpoint_configs.json: the published files'
values). The decision is said in one line, with how to override it (``instruct=true`` or ``false``)."""
from __future__ import annotations

import re

INSTRUCT_NAME = re.compile(r"(instruct|chat|assistant|(^|[-_./])(it|sft|dpo|rlhf|orpo)($|[-_./]))", re.IGNORECASE)
BASE_NAME = re.compile(r"(^|[-_./])(base|pt)($|[-_./])", re.IGNORECASE)  # "-pt": Gemma's pretrained (base) checkpoints
TURN_ENDS = {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|end_of_turn|>", "<|eom_id|>",
             "<|endofturn|>", "[/INST]", "<|assistant_end|>"}


def end_ids(ids) -> list[int]:
    """A generation configuration's ``eos_token_id`` (None, one id or a list) as a list."""
    return [] if ids is None else [int(ids)] if isinstance(ids, int) else [int(i) for i in ids]


def decide(name: str, ends: list[str], tokenizer_end: str | None, template: bool) -> tuple[bool, str]:
    """(instruct, why) from the name, the tokens its generation ends at (``ends``), the tokenizer's
    end-of-sequence token and whether it ships a chat template. A generation configuration that also
    ends at a chat turn's end beside the plain end token does not mark one: Gemma 3's base checkpoints
    list ``<end_of_turn>`` beside ``<eos>`` as their instruct twins do."""
    turn_only = bool(ends) and all(e in TURN_ENDS for e in ends)
    if INSTRUCT_NAME.search(name):
        return True, f"its name {name!r} marks an instruct checkpoint"
    if BASE_NAME.search(name):
        return False, f"its name {name!r} marks a base checkpoint"
    if tokenizer_end in TURN_ENDS:
        return True, f"its tokenizer's end of sequence is the chat turn's end ({tokenizer_end})"
    if turn_only:
        return True, f"its generation stops only at the chat turn's end ({', '.join(sorted(set(ends)))})"
    if template:
        return False, "it ships a chat template, but base checkpoints do too and nothing else marks it instruct"
    return False, "it has no chat template"


def _said(name: str, found: bool, why: str) -> tuple[bool, str]:
    other = "false" if found else "true"
    return found, (f"{name}: prompts {'in' if found else 'without'} the chat template (instruct='auto': {why}); "
                   f"pass instruct={other} if it is {'a base' if found else 'an instruct'} checkpoint")


def instruct_decision(name: str, model, tokenizer) -> tuple[bool, str]:
    """(whether it is an instruct checkpoint, the one line that says why and how to override it)."""
    ids = end_ids(getattr(getattr(model, "generation_config", None), "eos_token_id", None))
    ends = [tokenizer.convert_ids_to_tokens(i) for i in ids]
    return _said(name, *decide(name, ends, getattr(tokenizer, "eos_token", None),
                               bool(getattr(tokenizer, "chat_template", None))))


def decision_from_files(name: str, generation_config: dict, tokenizer_config: dict) -> tuple[bool, str]:
    """:func:`instruct_decision` from a checkpoint's ``generation_config.json`` and
    ``tokenizer_config.json`` as read (its ``added_tokens_decoder`` names the end ids)."""
    ids = end_ids(generation_config.get("eos_token_id"))
    names = {int(i): t["content"] for i, t in tokenizer_config.get("added_tokens_decoder", {}).items()}
    end = tokenizer_config.get("eos_token")
    end = end.get("content") if isinstance(end, dict) else end
    return _said(name, *decide(name, [names.get(i, str(i)) for i in ids], end,
                               bool(tokenizer_config.get("chat_template"))))
