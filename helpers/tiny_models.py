"""Tiny random-weight models for tests and demos, built offline in seconds.

Four architectures (Llama, Qwen2, Mixtral with experts, GPT-2), each a few hundred
thousand parameters, with a byte-level BPE tokenizer trained here on sentences this
module writes. Llama and Mixtral get a tokenizer with a BOS token (added by its
post-processor, as Llama 3's is); Qwen2 gets one without BOS (as Qwen2 has none);
GPT-2 gets BOS = EOS = <|endoftext|>. "-instruct" variants carry a Llama-3-style
chat template. Models are saved with save_pretrained and loaded through
``helpers.models.load`` like any other.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

from .paths import CACHE

BUILD_VERSION = "3"  # bump when the recipe changes, so cached builds are rebuilt
TINY_DIR_ENV = "HELPERS_TINY_DIR"  # tests point this at a fresh folder per session
ARCHS = ("llama", "qwen2", "mixtral", "gpt2")

LLAMA3_CHAT_TEMPLATE = (
    "{{ bos_token if bos_token else '' }}"
    "{% for message in messages %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n{{ message['content'] | trim }}<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
CHAT_TOKENS = ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]

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


def _train_tokenizer(with_bos: bool, gpt2_style: bool = False, vocab_size: int = 900):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if gpt2_style:
        specials = ["<|endoftext|>"]
        bos, eos = "<|endoftext|>", "<|endoftext|>"
    elif with_bos:
        specials = ["<|begin_of_text|>", "<|end_of_text|>"]
        bos, eos = "<|begin_of_text|>", "<|end_of_text|>"
    else:
        specials = ["<|endoftext|>"]
        bos, eos = None, "<|endoftext|>"
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials + CHAT_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus_sentences(), trainer=trainer)
    if with_bos and not gpt2_style:
        # Like Llama 3: the post-processor prepends BOS when special tokens are added.
        bos_id = tok.token_to_id(bos)
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, bos_id)]),
        ])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok, bos, eos


def _config(arch: str, vocab_size: int, bos_id, eos_id):
    from transformers import GPT2Config, LlamaConfig, MixtralConfig, Qwen2Config

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


def build(arch: str, out_dir: Path, instruct: bool = False, seed: int = 0) -> Path:
    """Build one tiny model with its tokenizer and save it to ``out_dir``."""
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    tok, bos, eos = _train_tokenizer(with_bos=arch in ("llama", "mixtral"), gpt2_style=arch == "gpt2")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, pad_token=eos,
                                   model_max_length=1024 if arch == "gpt2" else 2048)
    if instruct:
        fast.chat_template = LLAMA3_CHAT_TEMPLATE
    config = _config(arch, tok.get_vocab_size(), tok.token_to_id(bos) if bos else None, tok.token_to_id(eos))
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    fast.save_pretrained(out_dir)
    (out_dir / "BUILD").write_text(json.dumps({"version": BUILD_VERSION, "arch": arch, "instruct": instruct,
                                               "seed": seed, "parameters": sum(p.numel() for p in model.parameters())}))
    return out_dir


def ensure(name: str) -> Path:
    """The folder of tiny model ``name`` (e.g. "tiny-llama-instruct"), built once if missing."""
    arch = name.removeprefix("tiny-").removesuffix("-instruct")
    if not name.startswith("tiny-") or arch not in ARCHS:
        raise ValueError(f"{name!r} is not a tiny model; choose from "
                         + ", ".join(f"tiny-{a}{s}" for a, s in itertools.product(ARCHS, ("", "-instruct"))))
    tiny_dir = Path(os.environ.get(TINY_DIR_ENV) or CACHE / "tiny")
    target = tiny_dir / name
    stamp = target / "BUILD"
    if stamp.is_file() and json.loads(stamp.read_text()).get("version") == BUILD_VERSION:
        return target
    tiny_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=tiny_dir))
    build(arch, tmp, instruct=name.endswith("-instruct"))
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    try:
        os.replace(tmp, target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return target
