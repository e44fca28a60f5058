"""What the item view shows of a sentence's tokens, from the score file alone: each token's
surprisal in bits (``-logprob / ln 2``, the quickstart's unit), its text and its word.

The texts come from the model's tokenizer (no weights are loaded): the sentence is tokenized
with character offsets and, when that gives exactly the stored token ids, each token's text is
its span and its word is found as the quickstart finds it (:func:`helpers.explain.words.group_tokens`;
the two sentences then lined up word by word). Otherwise each token is decoded alone and no
words are shown; without the tokenizer a token shows as its id (``#1234``).
"""
from __future__ import annotations

import math

import numpy as np

from ..explain.words import align_words, group_tokens
from ..models import ModelNotFoundError
from ..models.loading import check_loadable

LN2 = math.log(2)


def surprisal(logprobs) -> list:
    """Bits per token: ``-logprob / ln 2`` (None where the log-prob is not finite)."""
    bits = -np.asarray(logprobs, dtype=np.float64) / LN2
    return [float(b) if math.isfinite(b) else None for b in bits]


def tokenizer_for(meta: dict):
    """The fast tokenizer of a score file's model (from its registry name, folder or Hub id,
    offline when the copy is local), and None with the reason when it cannot be read."""
    from transformers import AutoTokenizer

    why = "no model name in the score file"
    for name in dict.fromkeys(n for n in (meta.get("model_name"), meta.get("model_id")) if n):
        try:
            tok = AutoTokenizer.from_pretrained(
                (checked := check_loadable(name, quant=None, revision=meta.get("revision"))).source,
                **checked.read_options)
        except (ModelNotFoundError, OSError, ValueError, TypeError) as err:
            why = f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
            continue
        if getattr(tok, "is_fast", False):
            return tok, None
        why = f"the tokenizer of {name} is not a fast tokenizer (no character offsets)"
    return None, why


def shared_spans(offsets) -> list | None:
    """Per token [k, n]: the k-th of n tokens spelling the same characters (a byte-level
    tokenizer's bytes of one Chinese character); None when every token has a span of its own."""
    runs, parts = [], []
    for k, span in enumerate(offsets):
        if k and span == offsets[k - 1]:
            runs[-1].append(k)
        else:
            runs.append([k])
    if all(len(run) == 1 for run in runs):
        return None
    for run in runs:
        parts += [[j + 1, len(run)] for j in range(len(run))]
    return parts


class SideTokens:
    """Token views of many sentences of one model, the tokenizer called once for all of them."""

    def __init__(self, tokenizer, texts: list, ids: list, logprobs: list):
        self.tokenizer, self.ids, self.logprobs = tokenizer, [[int(i) for i in x] for x in ids], logprobs
        self.texts = list(texts)
        if tokenizer is None:
            self.offsets = [None] * len(self.ids)
            return
        missing = [k for k, t in enumerate(self.texts) if not isinstance(t, str)]
        if missing:  # no sentence from the data: the tokenizer's decoding of the stored ids
            for k, text in zip(missing, tokenizer.batch_decode([self.ids[k] for k in missing])):
                self.texts[k] = text
        encoded = tokenizer(self.texts, add_special_tokens=False, return_offsets_mapping=True)
        self.offsets = [[tuple(o) for o in offsets] if list(got) == want else None
                        for got, offsets, want in zip(encoded["input_ids"], encoded["offset_mapping"], self.ids)]

    def view(self, k: int) -> dict:
        """Sentence ``k``: its text (or None), token texts ``t``, surprisals ``s``, and where the
        offsets match, the words (``words``), each token's word (``w``) and, where tokens share
        their characters, which part of them each is (``part``: :func:`shared_spans`)."""
        ids, text, offsets = self.ids[k], self.texts[k], self.offsets[k]
        out = {"text": text if isinstance(text, str) else None, "s": surprisal(self.logprobs[k])}
        if offsets is not None:
            spans, of_token = group_tokens(text, offsets)
            out.update(t=[text[a:b] for a, b in offsets], words=[text[a:b] for a, b in spans], w=of_token)
            parts = shared_spans(offsets)
            if parts:
                out["part"] = parts
        elif self.tokenizer is not None:
            out["t"] = [self.tokenizer.decode([i]) for i in ids]
        else:
            out["t"] = [f"#{i}" for i in ids]
        return out


def pair_view(good: dict, bad: dict) -> dict:
    """Both sides' token views and, when both have words, the word columns lining them up
    (``columns``: [good word or None, bad word or None, differs])."""
    out = {"good": good, "bad": bad}
    if "words" in good and "words" in bad:
        out["columns"] = [[g, b, bool(d)] for g, b, d in align_words(good["words"], bad["words"])]
    return out
