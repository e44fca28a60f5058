"""The byte-level BPE tokenizer trainer, written once for the demo and the tiny models."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast


def train_bpe(texts: Iterable[str], vocab_size: int, special_tokens: Sequence[str],
              prepend: str | None = None) -> Tokenizer:
    """A byte-level BPE (GPT-2's byte alphabet, no prefix space) trained on ``texts``.

    With ``prepend`` (one of ``special_tokens``) the post-processor puts that token before
    every text when special tokens are added, as Llama 3's tokenizer does with its BOS.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    byte_level = processors.ByteLevel(trim_offsets=False)
    if prepend is None:
        tok.post_processor = byte_level
    else:
        tok.post_processor = processors.Sequence([byte_level, processors.TemplateProcessing(
            single=f"{prepend} $A", pair=f"{prepend} $A {prepend} $B",
            special_tokens=[(prepend, tok.token_to_id(prepend))])])
    return tok


def for_transformers(tok: Tokenizer, *, bos: str | None, eos: str, max_length: int) -> PreTrainedTokenizerFast:
    """``tok`` as a transformers fast tokenizer that pads with its EOS token."""
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, pad_token=eos,
                                   model_max_length=max_length)


def load_bpe(folder: str | Path) -> Tokenizer:
    """The tokenizer saved in ``folder`` (its tokenizer.json)."""
    return Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
