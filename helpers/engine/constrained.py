"""Constrained decoding with outlines, inside the causal scorer: the model must answer exactly one
of a few strings (Ide et al. decide A/B prompting this way), continuing the prompt exactly as
the engine encodes it. outlines is imported where a generator is made: the default A/B reads the
letters' logits, so nothing else needs it installed. :meth:`helpers.engine.causal.CausalScorer.decode`
is the one way in."""
from __future__ import annotations

from typing import Literal, Sequence

from ..progress import bar as progress_bar
from .interface import Request


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


def logits_decode_as_outlines(scorer, choices: Sequence[str]) -> bool:
    """Whether the choices' logits give outlines' answer: each choice, as the engine scores it
    after a prompt, is one token, and it is the only token outlines' automaton takes for the whole
    answer (a token whose text, as outlines spells tokens, is the choice; :func:`outlines_tokens_for`).
    GPT-2's and Tekken's byte-level vocabularies pass for "A" and "B"; a SentencePiece tokenizer with a
    dummy prefix does not: the engine scores "▁A" where outlines decodes "A" or the byte "<0x41>"
    (Mixtral's tokenizer.model.v1)."""
    scored = {}
    for choice in choices:
        encoded = scorer.encode(Request("Answer: ", choice, separate=True))
        scored[choice] = set(encoded.ids[encoded.first:])
        if len(encoded.ids) - encoded.first != 1:
            return False
    allowed = outlines_tokens_for(scorer.tokenizer, choices)
    return all(allowed[choice] == scored[choice] for choice in choices)


def outlines_tokens_for(tokenizer, texts) -> dict[str, set[int]]:
    """Per text, the ids of the vocabulary's tokens that outlines' automaton reads as exactly that
    text (outlines' own spelling of a token, ``TransformerTokenizer.convert_token_to_string``); a
    token it reads as empty text is listed under "" (it could precede any answer)."""
    from outlines.models.transformers import TransformerTokenizer

    spell = TransformerTokenizer(tokenizer).convert_token_to_string
    wanted = set(texts) | {""}
    out: dict[str, set[int]] = {text: set() for text in wanted}
    for token, token_id in tokenizer.get_vocab().items():
        text = spell(token)
        if text in wanted and token_id not in tokenizer.all_special_ids:
            out[text].add(token_id)
    if out[""]:  # an empty token would let outlines reach a letter by a path of several tokens
        return {text: set() for text in texts}
    return {text: out[text] for text in texts}


class Decoding:
    """A causal scorer's constrained decoding: a generator per choice set, built once, and
    whether the choices' logits already give outlines' answer, found once."""

    def __init__(self, scorer):
        self.scorer, self.generators, self.as_logits = scorer, {}, {}

    def __call__(self, prompts: Sequence[str], choices: Sequence[str], where: str = "always") -> list[str] | None:
        choices = tuple(choices)
        if where not in ("always", "auto"):
            raise ValueError(f"where must be 'always' or 'auto', got {where!r}")
        if where == "auto":
            if choices not in self.as_logits:
                self.as_logits[choices] = logits_decode_as_outlines(self.scorer, choices)
            if self.as_logits[choices]:
                return None
        if not prompts:  # nothing to decode: no generator built
            return []
        if choices not in self.generators:
            self.generators[choices] = ChoiceGenerator(self.scorer.loaded.model, self.scorer.tokenizer, choices)
        return answers(self.generators[choices], self.scorer, list(prompts), self.scorer.settings.progress)
