"""Tiny random masked LMs (BERT, DeBERTa-v2/v3 with relative attention and ModernBERT with local
attention windows, each with a WordPiece tokenizer; RoBERTa with a byte-level BPE one), built
offline in seconds for the masked scorer's tests and benchmark.

The output embedding is untied and scaled up (:data:`OUTPUT_SCALE`) so that the log-probs are
peaked (several nats apart): a wrong mask or position shows in the numbers. The WordPiece
vocabulary is small, so that words split into several pieces (the within-word variant bites).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

from .tiny import corpus_sentences, save_scaled
from .tokenizer import train_bpe

OUTPUT_SCALE = 4.0
MASKED_ARCHITECTURES = ("bert", "roberta", "deberta", "modernbert")
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def wordpiece_tokenizer(vocab_size: int = 400, corpus: Iterable[str] | None = None) -> PreTrainedTokenizerFast:
    """A cased WordPiece tokenizer ([CLS] text [SEP]) trained on ``corpus`` (default: the tiny
    models' sentences)."""
    normalizer, pre_tokenizer = normalizers.BertNormalizer(lowercase=False), pre_tokenizers.BertPreTokenizer()
    tok = Tokenizer(models.WordPiece(wordpiece_vocab(corpus or corpus_sentences(), vocab_size, normalizer,
                                                     pre_tokenizer), unk_token="[UNK]"))
    tok.normalizer, tok.pre_tokenizer, tok.decoder = normalizer, pre_tokenizer, decoders.WordPiece()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                   pad_token="[PAD]", mask_token="[MASK]", model_max_length=512)


def wordpiece_vocab(corpus: Iterable[str], vocab_size: int, normalizer, pre_tokenizer) -> dict[str, int]:
    """A WordPiece vocabulary built the same way every time (the ``tokenizers`` trainer breaks ties
    in a different order from run to run): the special tokens, every character of the corpus and
    its ``##`` continuation, then whole words by frequency (ties alphabetical) up to ``vocab_size``."""
    counts: dict[str, int] = {}
    for text in corpus:
        for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)):
            counts[word] = counts.get(word, 0) + 1
    chars = sorted({c for word in counts for c in word})
    tokens = BERT_SPECIALS + chars + [f"##{c}" for c in chars]
    words = [w for w in sorted(counts, key=lambda w: (-counts[w], w)) if len(w) > 1]
    tokens += words[:max(0, vocab_size - len(tokens))]
    return {t: i for i, t in enumerate(dict.fromkeys(tokens))}


def bpe_tokenizer(vocab_size: int = 900, corpus: Iterable[str] | None = None) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer (<s> text </s>, RoBERTa's special tokens) trained on ``corpus``
    (default: the tiny models' sentences)."""
    bpe = train_bpe(corpus or corpus_sentences(), vocab_size, ROBERTA_SPECIALS)
    bpe.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[(t, bpe.token_to_id(t)) for t in ("<s>", "</s>")])])
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", cls_token="<s>",
                                   sep_token="</s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                   model_max_length=512)


def _config(name: str, tok, layers: int, width: int):
    """The architecture's configuration: ``layers`` x ``width``, 4 heads, feed-forward 2 x width."""
    shape = dict(vocab_size=len(tok), hidden_size=width, intermediate_size=2 * width, num_hidden_layers=layers,
                 num_attention_heads=4, pad_token_id=tok.pad_token_id, initializer_range=0.2,
                 tie_word_embeddings=False)
    dropout = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if name == "bert":
        return transformers.BertConfig(max_position_embeddings=514, **dropout, **shape)
    if name == "roberta":
        return transformers.RobertaConfig(max_position_embeddings=514, bos_token_id=tok.bos_token_id,
                                          eos_token_id=tok.eos_token_id, type_vocab_size=1, **dropout, **shape)
    if name == "deberta":  # DeBERTa-v3's attention: relative positions (buckets), no absolute ones
        return transformers.DebertaV2Config(max_position_embeddings=512, relative_attention=True, position_buckets=32,
                                            pos_att_type=["p2c", "c2p"], position_biased_input=False,
                                            norm_rel_ebd="layer_norm", share_att_key=True, **dropout, **shape)
    # ModernBERT: rotary positions, local attention (8 tokens) in two of every three layers
    return transformers.ModernBertConfig(global_attn_every_n_layers=3, local_attention=8,
                                         cls_token_id=tok.cls_token_id, sep_token_id=tok.sep_token_id,
                                         bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, **shape)


def build(name: str, out_dir: str | Path, seed: int = 0, layers: int = 2, width: int = 64) -> Path:
    """Build the tiny masked LM ``name`` (one of :data:`MASKED_ARCHITECTURES`) into ``out_dir``, with ``layers``
    layers of ``width`` (4 heads, feed-forward twice the width)."""
    if name not in MASKED_ARCHITECTURES:
        raise ValueError(f"unknown masked architecture {name!r}; choose from {', '.join(MASKED_ARCHITECTURES)}")
    tok = bpe_tokenizer() if name == "roberta" else wordpiece_tokenizer()
    config = _config(name, tok, layers, width)
    torch.manual_seed(seed)
    model = transformers.AutoModelForMaskedLM.from_config(config).float().eval()
    return save_scaled(model, tok, out_dir, OUTPUT_SCALE,
                       {"architecture": name, "seed": seed, "layers": layers, "width": width})
