"""Tiny random-weight models for tests and demos, built offline in seconds.

Four causal architectures (Llama, Qwen2, Mixtral with experts, GPT-2), each a few hundred
thousand parameters, with a byte-level BPE tokenizer trained on sentences this module
writes. Llama and Mixtral get a tokenizer with a BOS token (added by its post-processor,
as Llama 3's is); Qwen2 gets one without BOS (as Qwen2 has none); GPT-2 gets
BOS = EOS = <|endoftext|>. "-instruct" variants carry a Llama-3-style chat template.
One encoder-decoder, tiny-t5 (Flan-T5's layout: gated-GELU, untied head), gets T5's own
tokenizer (a Unigram model with <pad>, </s>, <unk> and 100 sentinels) trained on the same
sentences.
Models are saved with save_pretrained and loaded through ``helpers.models.load``.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, pre_tokenizers, trainers
from tokenizers import models as tok_models
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    GPT2Config,
    LlamaConfig,
    MixtralConfig,
    Qwen2Config,
    T5Config,
    T5Tokenizer,
)

from .. import paths
from ..files import built_once
from .tokenizer import for_transformers, train_bpe

BUILD_VERSION = "3"  # bump when the recipe changes, so cached builds are rebuilt
TINY_DIR_ENV = "HELPERS_TINY_DIR"  # tests point this at a fresh folder per session
DISTRIBUTED_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_", "ACCELERATE_", "TORCHELASTIC_")  # a rank's own
ARCHS = ("llama", "qwen2", "mixtral", "gpt2", "t5")
CAUSAL = ARCHS[:4]
NAMES = tuple(f"tiny-{arch}{suffix}" for arch, suffix in itertools.product(CAUSAL, ("", "-instruct"))) + ("tiny-t5",)
T5_EXTRA_IDS = 100  # sentinels <extra_id_0> ... <extra_id_99>, as T5 has
VOCAB_SIZE = 900

LLAMA3_CHAT_TEMPLATE = (
    "{{ bos_token if bos_token else '' }}"
    "{% for message in messages %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n{{ message['content'] | trim }}<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
CHAT_TOKENS = ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
# (BOS, EOS) of each architecture's tokenizer; BOS None: the tokenizer has none (Qwen2).
SPECIAL_TOKENS = {"gpt2": ("<|endoftext|>", "<|endoftext|>"), "qwen2": (None, "<|endoftext|>"),
                  "llama": ("<|begin_of_text|>", "<|end_of_text|>"),
                  "mixtral": ("<|begin_of_text|>", "<|end_of_text|>"), "t5": (None, "</s>")}

_NOUNS = "cat dog teacher student doctor child bird river house garden book letter song window car city".split()
_VERBS = "sees likes finds helps visits watches remembers praises admires describes".split()
_ADJS = "old young happy tall quiet bright green small famous careful".split()
_ZH = "我 你 他 她 们 的 是 不 在 有 这 那 个 本 书 猫 狗 学 生 老 师 看 见 喜 欢 吃 饭 把 被 了 很 好 大 小 中 国 人 说 话 语 法 正 确 句 子 英 下 面 可 以 接 受 吗 是 否".split()


def corpus_sentences(n: int = 3000, seed: int = 0) -> list[str]:
    """Simple English and Chinese sentences and prompt words, for tokenizer training."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.2:
            out.append("".join(rng.choice(_ZH) for _ in range(rng.randint(4, 14))) + "。")
            continue
        det1, det2 = rng.choice(["The", "A", "Every", "This", "Some"]), rng.choice(["the", "a", "these", "that"])
        noun1, noun2 = rng.choice(_NOUNS), rng.choice(_NOUNS)
        plural = rng.random() < 0.3
        verb = rng.choice(_VERBS)
        if plural:
            noun1, verb = noun1 + "s", verb[:-1] if not verb.endswith("es") else verb[:-2]
        s = f"{det1} {rng.choice(_ADJS)} {noun1} {verb} {det2} {noun2}."
        if rng.random() < 0.3:
            s = f"Is the following sentence grammatically acceptable? {s} Answer: {rng.choice(['Yes', 'No'])}"
        if rng.random() < 0.2:
            s = f"A: {s}\nB: {rng.choice(_NOUNS)}\nAnswer: {rng.choice(['A', 'B', '1', '2'])}"
        out.append(s)
    return out


def t5_tokenizer() -> T5Tokenizer:
    """T5's tokenizer (whitespace split, metaspace, a Unigram model; </s> after every text) with
    a vocabulary trained on :func:`corpus_sentences`: <pad>=0, </s>=1, <unk>=2, the pieces, then
    the sentinels from <extra_id_99> down to <extra_id_0>, as T5's vocabulary is laid out."""
    tok = Tokenizer(tok_models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")])
    trainer = trainers.UnigramTrainer(vocab_size=VOCAB_SIZE - T5_EXTRA_IDS, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(corpus_sentences(), trainer=trainer)
    pieces = [tuple(v) for v in json.loads(tok.to_str())["model"]["vocab"]]
    sentinels = [(f"<extra_id_{i}>", 0.0) for i in range(T5_EXTRA_IDS - 1, -1, -1)]
    return T5Tokenizer(vocab=pieces + sentinels, extra_ids=T5_EXTRA_IDS, model_max_length=512)


def tokenizer(arch: str, instruct: bool = False):
    """The fast tokenizer of a tiny ``arch`` model; Llama and Mixtral prepend BOS themselves."""
    if arch == "t5":
        return t5_tokenizer()
    bos, eos = SPECIAL_TOKENS[arch]
    specials = [bos, eos] if bos not in (None, eos) else [eos]
    prepend = bos if arch in ("llama", "mixtral") else None
    bpe = train_bpe(corpus_sentences(), VOCAB_SIZE, specials + CHAT_TOKENS, prepend=prepend)
    fast = for_transformers(bpe, bos=bos, eos=eos, max_length=1024 if arch == "gpt2" else 2048)
    if instruct:
        fast.chat_template = LLAMA3_CHAT_TEMPLATE
    return fast


def config(arch: str, vocab_size: int, bos_id: int | None, eos_id: int):
    """The transformers config of a tiny ``arch`` model: 2 layers, width 64."""
    if arch == "t5":
        return T5Config(vocab_size=vocab_size, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                        num_heads=4, feed_forward_proj="gated-gelu", tie_word_embeddings=False, pad_token_id=0,
                        eos_token_id=eos_id, decoder_start_token_id=0,
                        initializer_factor=0.3)  # log-probs of a few nats a token, as the others give
    common = dict(vocab_size=vocab_size, bos_token_id=bos_id, eos_token_id=eos_id, initializer_range=0.1)
    if arch == "gpt2":
        return GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=1024, **common)
    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=2048, tie_word_embeddings=False, **common)
    if arch == "llama":
        return LlamaConfig(**shape)
    if arch == "qwen2":
        return Qwen2Config(use_sliding_window=False, **shape)
    if arch == "mixtral":
        return MixtralConfig(num_local_experts=4, num_experts_per_tok=2, sliding_window=None, **shape)
    raise ValueError(f"unknown tiny architecture {arch!r}; choose from {ARCHS}")


def build(arch: str, out_dir: str | Path, instruct: bool = False, seed: int = 0) -> Path:
    """Build one tiny model with its tokenizer and save it to ``out_dir``."""
    if arch not in ARCHS:
        raise ValueError(f"unknown tiny architecture {arch!r}; choose from {ARCHS}")
    fast = tokenizer(arch, instruct)
    bos, eos = SPECIAL_TOKENS[arch]
    bpe = fast.backend_tokenizer
    model_config = config(arch, bpe.get_vocab_size(), bpe.token_to_id(bos) if bos else None, bpe.token_to_id(eos))
    torch.manual_seed(seed)
    model = (AutoModelForSeq2SeqLM if arch == "t5" else AutoModelForCausalLM).from_config(model_config)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    fast.save_pretrained(out_dir)
    stamp = {"version": BUILD_VERSION, "arch": arch, "instruct": instruct, "seed": seed,
             "parameters": sum(p.numel() for p in model.parameters())}
    (out_dir / "BUILD").write_text(json.dumps(stamp))
    return out_dir


def tiny_dir() -> Path:
    """Where tiny models are built: $HELPERS_TINY_DIR, else data/cache/tiny."""
    return Path(os.environ.get(TINY_DIR_ENV) or paths.CACHE / "tiny")


def broken(folder: Path) -> str | None:
    """What is wrong with a tiny model's folder: its BUILD marker missing, unreadable or of another
    version, or a file it needs missing or unreadable (None: it is whole)."""
    try:
        version = json.loads((folder / "BUILD").read_text()).get("version")
    except (OSError, ValueError):
        return "no readable BUILD marker"
    if version != BUILD_VERSION:
        return f"built by version {version} of the tiny models, not {BUILD_VERSION}"
    missing = [n for n in ("config.json", "tokenizer.json", "model.safetensors") if not (folder / n).is_file()]
    if missing:
        return f"its marker says built, but {', '.join(missing)} is missing"
    try:
        json.loads((folder / "config.json").read_text())["model_type"]
    except (OSError, ValueError, KeyError):
        return "its config.json is unreadable or names no model_type"
    return None


def ensure(name: str) -> Path:
    """The folder of tiny model ``name`` (e.g. "tiny-llama-instruct"), built once if missing or
    broken, whatever the number of processes asking at once (:func:`helpers.files.built_once`)."""
    if name not in NAMES:
        raise ValueError(f"{name!r} is not a tiny model; choose from {', '.join(NAMES)}")
    return built_once(tiny_dir() / name, lambda folder: _build_named(name, folder), broken, "the tiny model folder")


def _build_named(name: str, folder: Path) -> None:
    """:func:`build` of tiny model ``name`` into ``folder``; under torch.distributed (accelerate's
    ranks) in a process of its own, since transformers writes a model's configuration and weights on
    rank 0 only (transformers/distributed/mixin.py, ``should_save_on_this_rank``): built by another
    rank, the folder would hold its tokenizer and marker but no model."""
    arch, instruct = name.removeprefix("tiny-").removesuffix("-instruct"), name.endswith("-instruct")
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        code = "import sys; from helpers.models.tiny import build; build(sys.argv[1], sys.argv[2], sys.argv[3] == 'True')"
        subprocess.run([sys.executable, "-c", code, arch, str(folder), str(instruct)], check=True,
                       cwd=paths.ROOT, env={k: v for k, v in os.environ.items() if not k.startswith(DISTRIBUTED_ENV)})
        return
    build(arch, folder, instruct=instruct)


def save_scaled(model, tokenizer, out_dir: str | Path, scale: float, build: dict) -> Path:
    """Scale ``model``'s output embedding by ``scale`` (peaked log-probs: a wrong position shows in
    the numbers), save it and ``tokenizer`` to ``out_dir`` with a BUILD stamp of ``build``."""
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(scale)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "BUILD").write_text(json.dumps(build))
    return out
