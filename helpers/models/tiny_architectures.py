"""Tiny random models of many Hugging Face architectures, for the engine's conformance matrix.

Each entry of :data:`ARCHITECTURES` is a transformers configuration class and the settings
that make a two-layer, width-64 model of that family, with the family's own quirks switched
on and made to bite: sliding windows of :data:`WINDOW` tokens (shorter than the test texts),
attention and final-logit soft-capping low enough to change the numbers, logit scales, and
output weights scaled up so that the logits are peaked (a wrong transform or mask shows in
the log-probs, not in the fifth decimal). :func:`build` saves one with the tiny models'
byte-level BPE tokenizer (T5 gets its Unigram one) where ``helpers.models.load`` reads it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch
import transformers
from tokenizers import processors

from .tiny import corpus_sentences, save_scaled, t5_tokenizer
from .tokenizer import for_transformers, train_bpe

WINDOW = 8  # sliding-window length of the tiny models that have one
OUTPUT_SCALE = 4.0  # output-embedding weights times this: logits of several nats' spread
BOS, EOS = "<s>", "</s>"


@dataclass(frozen=True)
class Architecture:
    """A transformers configuration class, its settings, and how the model is scored."""

    config_class: str
    settings: dict = field(default_factory=dict)
    kind: str = "causal"  # or "seq2seq"
    quirk: str = ""  # what the engine must get right for this family


_SHAPE = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=512)
_TWO_KINDS = ["sliding_attention", "full_attention"]

ARCHITECTURES: dict[str, Architecture] = {
    "llama": Architecture("LlamaConfig", dict(_SHAPE)),
    "qwen2": Architecture("Qwen2Config", dict(_SHAPE, use_sliding_window=False)),
    "qwen2_moe": Architecture("Qwen2MoeConfig", dict(_SHAPE, num_experts=4, num_experts_per_tok=2,
                                                     moe_intermediate_size=32, shared_expert_intermediate_size=64),
                              quirk="mixture of experts with a shared expert (Qwen2-57B-A14B)"),
    "mixtral": Architecture("MixtralConfig", dict(_SHAPE, num_local_experts=4, num_experts_per_tok=2,
                                                  sliding_window=WINDOW),
                            quirk="mixture of experts; sliding window on every layer"),
    "mistral": Architecture("MistralConfig", dict(_SHAPE, head_dim=16, sliding_window=WINDOW),
                            quirk="sliding window on every layer"),
    "qwen3": Architecture("Qwen3Config", dict(_SHAPE, head_dim=16, use_sliding_window=True, sliding_window=WINDOW,
                                              layer_types=_TWO_KINDS),
                          quirk="sliding and full layers (a mask per layer kind)"),
    "gemma2": Architecture("Gemma2Config", dict(_SHAPE, head_dim=16, query_pre_attn_scalar=16, sliding_window=WINDOW,
                                                layer_types=_TWO_KINDS, attn_logit_softcapping=3.0,
                                                final_logit_softcapping=4.0),
                           quirk="final-logit and attention soft-capping; sliding and full layers"),
    "gemma3": Architecture("Gemma3TextConfig", dict(_SHAPE, head_dim=16, query_pre_attn_scalar=16,
                                                    sliding_window=WINDOW, layer_types=_TWO_KINDS,
                                                    final_logit_softcapping=4.0),
                           quirk="final-logit soft-capping; sliding and full layers with their own RoPE"),
    "cohere": Architecture("CohereConfig", dict(_SHAPE, logit_scale=0.25), quirk="logit scale"),
    "granite": Architecture("GraniteConfig", dict(_SHAPE, logits_scaling=0.5, embedding_multiplier=2.0,
                                                  residual_multiplier=0.5, attention_multiplier=0.125),
                            quirk="logits divided by logits_scaling; embedding, residual, attention multipliers"),
    "olmo2": Architecture("Olmo2Config", dict(_SHAPE), quirk="norms after attention and MLP; q/k norms"),
    "phi3": Architecture("Phi3Config", dict(_SHAPE, sliding_window=WINDOW, pad_token_id=0),
                         quirk="fused qkv; sliding window on every layer"),
    "stablelm": Architecture("StableLmConfig", dict(_SHAPE, partial_rotary_factor=0.25),
                             quirk="partial rotary embedding; layer norm"),
    "gpt_neox": Architecture("GPTNeoXConfig", dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                                   num_attention_heads=4, max_position_embeddings=512,
                                                   rotary_pct=0.25), quirk="parallel residual; partial rotary"),
    "gpt2": Architecture("GPT2Config", dict(n_embd=64, n_layer=2, n_head=4, n_positions=512),
                         quirk="learned positions; tied output embedding"),
    "opt": Architecture("OPTConfig", dict(hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
                                          max_position_embeddings=512, word_embed_proj_dim=64),
                        quirk="learned positions offset by two"),
    "falcon": Architecture("FalconConfig", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                new_decoder_architecture=True, num_kv_heads=2, parallel_attn=True),
                           quirk="parallel attention; grouped keys and values"),
    "t5": Architecture("T5Config", dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
                                        feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                                        decoder_start_token_id=0, initializer_factor=0.3), "seq2seq",
                       quirk="encoder-decoder; relative position buckets (Flan-T5's layout)"),
    "bart": Architecture("BartConfig", dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                                            max_position_embeddings=512), "seq2seq",
                         quirk="encoder-decoder; learned positions"),
}


def _tokenizer(kind: str, name: str):
    if name == "t5":
        return t5_tokenizer()
    bpe = train_bpe(corpus_sentences(), 900, [BOS, EOS], prepend=None if kind == "seq2seq" else BOS)
    if kind == "seq2seq":  # BART's: <s> text </s>
        bpe.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), processors.TemplateProcessing(
            single=f"{BOS} $A {EOS}", special_tokens=[(t, bpe.token_to_id(t)) for t in (BOS, EOS)])])
    return for_transformers(bpe, bos=BOS, eos=EOS, max_length=512)


def build(name: str, out_dir: str | Path, seed: int = 0) -> Path:
    """Build the tiny ``name`` model (a key of :data:`ARCHITECTURES`) into ``out_dir``."""
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {name!r}; choose from {', '.join(ARCHITECTURES)}")
    arch = ARCHITECTURES[name]
    tok = _tokenizer(arch.kind, name)
    ids = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
           "pad_token_id": tok.pad_token_id, "vocab_size": len(tok)}
    if arch.kind == "seq2seq" and name == "bart":
        ids["decoder_start_token_id"] = tok.eos_token_id
    config = getattr(transformers, arch.config_class)(**{**ids, "initializer_range": 0.2, **arch.settings})
    torch.manual_seed(seed)
    auto = transformers.AutoModelForSeq2SeqLM if arch.kind == "seq2seq" else transformers.AutoModelForCausalLM
    model = auto.from_config(config).float().eval()
    return save_scaled(model, tok, out_dir, OUTPUT_SCALE, {"architecture": name, "seed": seed, "quirk": arch.quirk})
