"""Whether a model the registry does not list is an instruct (chat) checkpoint, decided as a
researcher would: from what marks one. A chat template alone does not decide it, since base
checkpoints ship one too (Qwen2.5's base models do); its name (``-Instruct``, ``-chat``, ``-it``,
``-sft``; ``-base``, Gemma's ``-pt``) and whether its generation stops at a chat turn's end token (its
generation configuration's or tokenizer's end-of-sequence token is ``<|im_end|>``,
``<|eot_id|>``, ``<end_of_turn>``...) do. The decision is said in one line, with how to override
it (``instruct=true`` or ``false``)."""
from __future__ import annotations

import re

INSTRUCT_NAME = re.compile(r"(instruct|chat|assistant|(^|[-_./])(it|sft|dpo|rlhf|orpo)($|[-_./]))", re.IGNORECASE)
BASE_NAME = re.compile(r"(^|[-_./])(base|pt)($|[-_./])", re.IGNORECASE)  # "-pt": Gemma's pretrained (base) checkpoints
TURN_ENDS = {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|end_of_turn|>", "<|eom_id|>",
             "<|endofturn|>", "[/INST]", "<|assistant_end|>"}


def turn_end_tokens(model, tokenizer) -> list[str]:
    """The end-of-sequence tokens of its generation configuration and tokenizer that end a chat turn."""
    ids = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = [] if ids is None else [ids] if isinstance(ids, int) else list(ids)
    names = [tokenizer.convert_ids_to_tokens(int(i)) for i in ids] + [getattr(tokenizer, "eos_token", None)]
    return sorted({n for n in names if n in TURN_ENDS})


def instruct_decision(name: str, model, tokenizer) -> tuple[bool, str]:
    """(whether it is an instruct checkpoint, the one line that says why and how to override it)."""
    template = bool(getattr(tokenizer, "chat_template", None))
    if INSTRUCT_NAME.search(name):
        found, why = True, f"its name {name!r} marks an instruct checkpoint"
    elif BASE_NAME.search(name):
        found, why = False, f"its name {name!r} marks a base checkpoint"
    elif ends := turn_end_tokens(model, tokenizer):
        found, why = True, f"its generation stops at the chat turn's end ({', '.join(ends)})"
    elif template:
        found, why = False, "it ships a chat template, but base checkpoints do too and nothing else marks it instruct"
    else:
        found, why = False, "it has no chat template"
    other = "false" if found else "true"
    return found, (f"{name}: prompts {'in' if found else 'without'} the chat template (instruct='auto': {why}); "
                   f"pass instruct={other} if it is {'a base' if found else 'an instruct'} checkpoint")
