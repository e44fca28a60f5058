"""Which tokens of a vocabulary begin a word: the tokens whose probability mass at a position is
the probability that a word boundary comes next (the word-boundary correction of Pimentel &
Meister 2024 and Oh & Schuler 2024; :class:`helpers.engine.interface.Request`'s ``word_boundary``).

A token is word-initial when the tokenizer's own decoder puts whitespace before it: each token
is decoded after an anchor token ("a"), and the first character after the anchor's text is
whitespace. That reads every convention the same way:

- byte-level BPE (GPT-2, Llama 3, Qwen): tokens spelt "Ġword", and whitespace tokens ("Ġ",
  "Ċ" for a line break, a tab), are word-initial;
- SentencePiece (Llama 2, T5, Mistral): tokens spelt "▁word", and the bare "▁";
- WordPiece: every token that is not a "##" continuation, except punctuation the decoder
  attaches to the word before it ("." and "?": "dog." reads as one word, as whitespace splits it);
- a vocabulary of whole words (decoded with spaces between): every token.

Special tokens (BOS, EOS, padding, chat markers) and ids past the tokenizer's vocabulary (a
head padded to a multiple of 64) are never word-initial; the end of a text adds EOS itself.

The engine refuses word-boundary requests (:func:`check_marks_words`) for a tokenizer whose
decoder puts whitespace before no token (it spells spaces nowhere), and for a BPE that marks
word *ends* ("cat</w>", its model's ``end_of_word_suffix``): there a word's own tokens already
say that it ends, its token sum is its probability (Pimentel & Meister 2024), and the decoded
test above would call every token word-initial.
"""
from __future__ import annotations

import json

import numpy as np

ANCHOR = "a"  # decoded before each token, so that decoders that drop a text's leading space keep it


def word_initial_mask(tokenizer, vocab_size: int, stop_at_first: bool = False) -> np.ndarray:
    """[vocab_size] bool: the word-initial tokens of ``tokenizer`` (see the module's docstring),
    for a head of ``vocab_size`` outputs; with ``stop_at_first``, decoded in blocks up to the block
    holding the first word-initial token (the rest left False)."""
    anchor = tokenizer(ANCHOR, add_special_tokens=False)["input_ids"][:1]
    base = len(tokenizer.decode(anchor, clean_up_tokenization_spaces=False))
    n = min(len(tokenizer), vocab_size)
    mask = np.zeros(vocab_size, dtype=bool)
    special = {i for i in tokenizer.all_special_ids if i < vocab_size}
    block = 2048 if stop_at_first else max(n, 1)
    for start in range(0, n, block):
        ids = range(start, min(start + block, n))
        texts = tokenizer.batch_decode([anchor + [i] for i in ids], clean_up_tokenization_spaces=False)
        mask[start:start + len(ids)] = [t[base:base + 1].isspace() and i not in special for i, t in zip(ids, texts)]
        if stop_at_first and mask.any():
            break
    return mask


def end_of_word_suffix(tokenizer) -> str | None:
    """The suffix a BPE tokenizer marks word ends with ("</w>"), or None."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    return json.loads(backend.to_str()).get("model", {}).get("end_of_word_suffix") or None


def marks_words(tokenizer, vocab_size: int) -> bool:
    """Whether ``tokenizer`` marks word beginnings (:func:`check_marks_words`), decoded only as far as
    its first word-initial token."""
    return not end_of_word_suffix(tokenizer) and bool(word_initial_mask(tokenizer, vocab_size, True).any())


def check_marks_words(tokenizer, mask: np.ndarray, name: str) -> None:
    """A clear error when ``tokenizer`` (with word-initial ``mask``) does not mark word beginnings
    (``name``: the model)."""
    suffix = end_of_word_suffix(tokenizer)
    if suffix:
        raise ValueError(f"{name}'s tokenizer marks word ends ({suffix!r}), not beginnings: a word's own tokens "
                         "say that it ends, so its token sum is its probability already; use plain token sums (lp)")
    if not mask.any():
        raise ValueError(f"{name}'s tokenizer marks no word beginnings (its decoder puts whitespace before no "
                         "token), so the probability that a word ends cannot be read from its next token: "
                         "corrected word surprisal needs a tokenizer that marks word beginnings (byte-level BPE's "
                         "'Ġ', SentencePiece's '▁', WordPiece's unmarked word starts); use plain token sums (lp)")
