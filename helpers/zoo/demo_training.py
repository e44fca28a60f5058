"""Train the small offline demo language models (demo-en, demo-zh) from the mirror's corpora.

    python -m helpers train-demo --language en --out data/models/demo-en
    python -m helpers train-demo --language zh --out data/models/demo-zh --layers 3 --width 192

Reproducible from the seed: the corpus order, the tokenizer, the initial weights and the
batch order all derive from it. Benchmark sentences (BLiMP, CLiMP, ...) are removed from
the training text sentence by sentence, and the WikiText-103 test split is never read.
Sequences mix 256 and 1,024 tokens so that all 1,024 positions are trained.

Training can continue from a saved demo model (``--init-from``): the tokenizer and weights are
loaded, the held-out split is the same (it derives from the seed), and the documents are read
in the order the next epoch of a single longer run would use. The record keeps every stage.
"""
from __future__ import annotations

import json
import math
import platform
import random
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from ..data import blimp
from ..data import climp
from ..data import corpora
from ..files import write_text
from ..models.tokenizer import for_transformers, load_bpe, train_bpe

START = "<|endoftext|>"  # document start (and end), as GPT-2's
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


@dataclass
class Recipe:
    language: str = "en"
    seed: int = 0
    vocab_size: int = 8192
    layers: int = 4
    width: int = 256
    heads: int = 4
    positions: int = 1024
    short_len: int = 256
    short_batch: int = 32
    long_len: int = 1024
    long_batch: int = 8
    long_every: int = 4  # every 4th batch is 8 x 1,024 tokens
    epochs: float = 1.0
    peak_lr: float = 2e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 200
    weight_decay: float = 0.1
    dropout: float = 0.0
    heldout_share: float = 0.005
    threads: int = 2
    autocast_bf16: bool = False  # bfloat16 matmuls, float32 weights (about 1.9x faster on AVX512-BF16 CPUs)
    init_from: str = ""  # continue from this saved demo model
    corpora: list[str] = field(default_factory=list)


def split_sentences(text: str) -> list[str]:
    """``text`` cut after every sentence-final mark (Latin and Chinese)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def benchmark_sentences(language: str) -> set[str]:
    """Every benchmark sentence of ``language`` that the demo model must not train on."""
    frames = [blimp.load()] if language == "en" else [climp.load(add_period=False), climp.load(add_period=True)]
    out: set[str] = set()
    for df in frames:
        out.update(df["good"].tolist())
        out.update(df["bad"].tolist())
    return {" ".join(s.split()) for s in out}


def training_documents(language: str, banned: set[str]) -> tuple[list[str], dict]:
    """The cleaned documents and a manifest: corpora, files, licenses, counts, removed sentences."""
    docs, manifest = [], {"corpora": [], "removed_benchmark_sentences": 0}
    for corpus in (corpora.ENGLISH if language == "en" else corpora.CHINESE):
        n_docs = n_chars = 0
        for doc in corpora.documents(corpus.name):
            sentences = split_sentences(doc)
            kept = [s for s in sentences if " ".join(s.split()) not in banned]
            manifest["removed_benchmark_sentences"] += len(sentences) - len(kept)
            if kept:
                text = (" " if language == "en" else "").join(kept)
                docs.append(text)
                n_docs, n_chars = n_docs + 1, n_chars + len(text)
        manifest["corpora"].append({"name": corpus.name, "path": corpus.path, "license": corpus.license,
                                    "documents": n_docs, "characters": n_chars})
    return docs, manifest


def train_tokenizer(docs: list[str], vocab_size: int):
    """A byte-level BPE of ``vocab_size`` tokens trained on ``docs``, START its only special token."""
    return _wrap(train_bpe(docs, vocab_size, [START]))


def saved_tokenizer(folder: str | Path):
    """The tokenizer of a saved demo model, wrapped exactly as a freshly trained one (so a
    continued stage saves the same tokenizer files)."""
    return _wrap(load_bpe(folder))


def _wrap(tok):
    return for_transformers(tok, bos=START, eos=START, max_length=1024)


def token_stream(tokenizer, docs: list[str]) -> np.ndarray:
    """The token ids of ``docs`` in order, each document preceded by START."""
    start = tokenizer.convert_tokens_to_ids(START)
    parts = []
    for i in range(0, len(docs), 2000):
        for ids in tokenizer(docs[i:i + 2000], add_special_tokens=False)["input_ids"]:
            parts.append(np.asarray([start] + ids, dtype=np.int32))
    return np.concatenate(parts)


def batches(stream: np.ndarray, recipe: Recipe):
    """(batch, length) arrays over the stream in order; every long_every-th batch is long."""
    pos, k = 0, 0
    while True:
        long = (k % recipe.long_every) == recipe.long_every - 1
        rows, length = (recipe.long_batch, recipe.long_len) if long else (recipe.short_batch, recipe.short_len)
        need = rows * length
        if pos + need > len(stream):
            return
        yield stream[pos:pos + need].reshape(rows, length)
        pos, k = pos + need, k + 1


def lr_at(step: int, total: int, recipe: Recipe) -> float:
    """Linear warm-up, then cosine decay to ``min_lr_ratio`` of the peak."""
    if step < recipe.warmup_steps:
        return recipe.peak_lr * (step + 1) / recipe.warmup_steps
    progress = min(1.0, (step - recipe.warmup_steps) / max(1, total - recipe.warmup_steps))
    floor = recipe.min_lr_ratio
    return recipe.peak_lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def train(out_dir: str | Path, recipe: Recipe, log=print) -> dict:
    """Train and save a demo model; returns the training record written to training.json. Runs
    on ``recipe.threads`` threads, the process's own count restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(recipe.threads)
    try:
        return _train(out_dir, recipe, log)
    finally:
        torch.set_num_threads(before)


def _train(out_dir: str | Path, recipe: Recipe, log) -> dict:
    t0 = time.time()
    torch.manual_seed(recipe.seed)
    banned = benchmark_sentences(recipe.language)
    docs, manifest = training_documents(recipe.language, banned)
    recipe.corpora = [c["name"] for c in manifest["corpora"]]
    random.Random(recipe.seed).shuffle(docs)
    n_held = max(1, int(len(docs) * recipe.heldout_share))
    heldout, docs = docs[:n_held], docs[n_held:]
    previous = _previous_stages(recipe)
    tokenizer = saved_tokenizer(recipe.init_from) if recipe.init_from else train_tokenizer(docs, recipe.vocab_size)
    stream, held_stream = token_stream(tokenizer, docs), token_stream(tokenizer, heldout)
    log(f"{len(docs)} documents, {len(stream):,} training tokens, {len(held_stream):,} held out; "
        f"{manifest['removed_benchmark_sentences']} benchmark sentences removed; {time.time() - t0:.0f}s")
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=recipe.positions, n_embd=recipe.width,
                        n_layer=recipe.layers, n_head=recipe.heads, resid_pdrop=recipe.dropout,
                        embd_pdrop=recipe.dropout, attn_pdrop=recipe.dropout,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = (GPT2LMHeadModel.from_pretrained(recipe.init_from, dtype=torch.float32) if recipe.init_from
             else GPT2LMHeadModel(config))
    shape = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head")
    if [getattr(model.config, k) for k in shape] != [getattr(config, k) for k in shape]:
        raise ValueError(f"--init-from {recipe.init_from} has {[getattr(model.config, k) for k in shape]} "
                         f"for {shape}, the recipe asks for {[getattr(config, k) for k in shape]}; "
                         "pass the saved model's sizes")
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=recipe.peak_lr, betas=(0.9, 0.95))
    tokens_per_batch = recipe.short_batch * recipe.short_len
    total_steps = int(recipe.epochs * len(stream) / tokens_per_batch)
    log(f"model: {n_params / 1e6:.2f}M parameters; {total_steps} steps of {tokens_per_batch} tokens")
    rng = np.random.default_rng(recipe.seed)
    curve, window, step = [], [], 0
    epoch = math.ceil(sum(stage["recipe"]["epochs"] for stage in previous))  # epochs already seen
    for _ in range(1, epoch):
        rng.permutation(len(docs))  # the orders earlier stages used
    model.train()
    while step < total_steps:
        # each epoch sees the documents in a new order
        order = rng.permutation(len(docs)) if epoch else np.arange(len(docs))
        epoch_stream = stream if epoch == 0 else token_stream(tokenizer, [docs[i] for i in order])
        for batch in batches(epoch_stream, recipe):
            if step >= total_steps:
                break
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total_steps, recipe)
            ids = torch.from_numpy(batch.astype(np.int64))
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=recipe.autocast_bf16):
                loss = model(input_ids=ids, labels=ids).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            window.append(loss.item())
            step += 1
            if step % 100 == 0 or step == total_steps:
                curve.append({"step": step, "tokens": step * tokens_per_batch, "loss": round(float(np.mean(window)), 4),
                              "minutes": round((time.time() - t0) / 60, 1)})
                window = []
                log(f"step {step}/{total_steps} loss {curve[-1]['loss']:.3f} ({curve[-1]['minutes']} min)")
        epoch += 1
    model.eval()
    held_loss = heldout_loss(model, held_stream, recipe.long_len)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    record = {"recipe": asdict(recipe), "parameters": n_params, "training_tokens": int(len(stream)),
              "heldout_tokens": int(len(held_stream)), "heldout_loss": held_loss, "steps": total_steps,
              "loss_curve": curve, "wall_minutes": round((time.time() - t0) / 60, 1),
              "machine": f"{platform.processor() or platform.machine()}, {recipe.threads} CPU thread(s), torch {torch.__version__}",
              **manifest, "previous_stages": previous}
    write_text(out / "training.json", json.dumps(record, indent=1, ensure_ascii=False))
    log(f"saved to {out}; held-out loss {held_loss:.3f}; {record['wall_minutes']} min")
    return record


def _previous_stages(recipe: Recipe) -> list[dict]:
    """The training records of the stages before this one (empty when training from scratch)."""
    if not recipe.init_from:
        return []
    record = json.loads((Path(recipe.init_from) / "training.json").read_text())
    if record["recipe"]["seed"] != recipe.seed or record["recipe"]["language"] != recipe.language:
        raise ValueError(f"--init-from {recipe.init_from} was trained with seed {record['recipe']['seed']} "
                         f"and language {record['recipe']['language']}; continue it with the same ones")
    earlier = record.pop("previous_stages", [])
    for key in ("sample_accuracy", "lp_accuracy", "card_notes"):
        record.pop(key, None)
    return earlier + [record]


def heldout_loss(model, stream: np.ndarray, length: int) -> float:
    """Mean next-token loss over ``stream`` cut into rows of ``length`` tokens."""
    n = len(stream) // length
    if n == 0:
        return float("nan")
    ids = torch.from_numpy(stream[:n * length].reshape(n, length).astype(np.int64))
    losses = []
    with torch.no_grad():
        for i in range(0, n, 8):
            losses.append(model(input_ids=ids[i:i + 8], labels=ids[i:i + 8]).loss.item())
    return round(float(np.mean(losses)), 4)
