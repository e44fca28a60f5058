"""Train the small offline demo language models (demo-en, demo-zh) from the mirror's corpora.

    python -m helpers train-demo --language en --out data/models/demo-en
    python -m helpers train-demo --language zh --out data/models/demo-zh --layers 3 --width 192

Reproducible from the seed: the corpus order, the tokenizer, the initial weights and the
batch order all derive from it. Benchmark sentences (BLiMP, CLiMP, ...) are removed from
the training text sentence by sentence, and the WikiText-103 test split is never read.
Sequences mix 256 and 1,024 tokens so that all 1,024 positions are trained.

Long documents (``--document-chars``: consecutive corpus documents joined to about that many
characters) and template lists (``--template-lists``, :mod:`helpers.zoo.template_lists`) make
demo-en-icl, a continuation of demo-en that follows the structure of its context; ``--init-share``
mixes the starting model's weights back in at the end (:mod:`helpers.zoo.stage_end`). Dialect
documents and sentence lists (``--dialect-share``, ``--sentence-lists``, ``--lists-only``;
:mod:`helpers.zoo.dialects`) were tried first and did not get there (see that module).

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
from . import dialects, template_lists
from .stage_end import heldout_loss, mix_with_start
from .training_streams import START, batch_spans, join_consecutive, marked_stream, masked_stream, token_stream
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
    init_share: float = 0.0  # with init_from: share of its weights mixed back into the trained ones (WiSE-FT)
    document_chars: int = 0  # > 0: consecutive documents of a corpus joined to about this many characters
    dialect_share: float = 0.0  # share of (joined) documents rewritten in a consistent dialect
    sentence_lists: int = 0  # documents added that list corpus sentences holding a rule's words (dialects.sentence_lists)
    lists_only: bool = False  # train on the sentence lists alone (the corpus documents only supply their sentences)
    template_lists: int = 0  # documents added that list sentences of one template each (template_lists.template_lists)
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
    if recipe.init_share and not (recipe.init_from and 0 < recipe.init_share < 1):
        raise ValueError(f"--init-share {recipe.init_share} mixes the starting model back in: it needs --init-from "
                         "and a share between 0 and 1")
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
    order = list(range(len(docs)))
    random.Random(recipe.seed).shuffle(order)  # the same order as shuffling the documents themselves
    n_held = max(1, int(len(docs) * recipe.heldout_share))
    heldout = [docs[i] for i in order[:n_held]]
    if recipe.document_chars:  # the same held-out documents; the rest joined in corpus order, then shuffled
        held = set(order[:n_held])
        docs = join_consecutive([d for i, d in enumerate(docs) if i not in held], recipe.document_chars)
        random.Random(recipe.seed).shuffle(docs)
    else:
        docs = [docs[i] for i in order[n_held:]]
    spans, dialect_names, standard = [[] for _ in docs], [""] * len(docs), docs
    if recipe.dialect_share and not recipe.lists_only:
        docs, spans, dialect_names = dialects.dialect_documents(docs, recipe.dialect_share, recipe.seed)
        manifest["dialects"] = dialects.dialect_counts(dialect_names)
    if recipe.sentence_lists:  # drawn from the training documents' sentences, before any rewriting
        sentences = [x for d in standard for x in split_sentences(d) if 4 <= len(x.split()) <= 25]
        texts, list_spans, list_names = dialects.sentence_lists(sentences, recipe.sentence_lists,
                                                                recipe.document_chars or 4000, recipe.dialect_share,
                                                                recipe.seed)
        manifest["sentence_list_dialects"] = dialects.dialect_counts(list_names)
        docs, spans = (texts, list_spans) if recipe.lists_only else (docs + texts, spans + list_spans)
        order = list(range(len(docs)))
        random.Random(recipe.seed + 1).shuffle(order)
        docs, spans = [docs[i] for i in order], [spans[i] for i in order]
    no_loss = [[] for _ in docs]  # per document, character spans that carry no loss
    if recipe.template_lists:
        texts, list_spans, list_names = template_lists.template_lists(recipe.template_lists,
                                                                      recipe.document_chars or 4000, recipe.seed, banned)
        manifest["template_list_deviations"] = template_lists.deviation_counts(list_names)
        docs, spans, no_loss = docs + texts, spans + [[] for _ in texts], no_loss + list_spans
        order = list(range(len(docs)))
        random.Random(recipe.seed + 2).shuffle(order)
        docs, spans, no_loss = [docs[i] for i in order], [spans[i] for i in order], [no_loss[i] for i in order]
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
    masked = 0  # dialect tokens without loss (a form's first occurrence in its row)
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
        if recipe.dialect_share:
            epoch_stream, forms, occurrences = marked_stream(tokenizer, [docs[i] for i in order], [spans[i] for i in order])
        elif recipe.template_lists:
            epoch_stream, trained = masked_stream(tokenizer, [docs[i] for i in order], [no_loss[i] for i in order])
        else:
            epoch_stream = stream if epoch == 0 else token_stream(tokenizer, [docs[i] for i in order])
        for pos, rows, length in batch_spans(len(epoch_stream), recipe):
            if step >= total_steps:
                break
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total_steps, recipe)
            cut = slice(pos, pos + rows * length)
            ids = torch.from_numpy(epoch_stream[cut].reshape(rows, length).astype(np.int64))
            labels = ids
            if recipe.dialect_share:
                first = dialects.first_occurrence_mask(forms[cut].reshape(rows, length), occurrences[cut].reshape(rows, length))
                labels = ids.masked_fill(torch.from_numpy(first), -100)
                masked += int(first.sum())
            elif recipe.template_lists:
                untrained = ~trained[cut].reshape(rows, length)
                labels = ids.masked_fill(torch.from_numpy(untrained), -100)
                masked += int(untrained.sum())
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=recipe.autocast_bf16):
                loss = model(input_ids=ids, labels=labels).loss
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
    if recipe.init_share:
        mix_with_start(model, recipe.init_from, recipe.init_share)
    held_loss = heldout_loss(model, held_stream, recipe.long_len)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    record = {"recipe": asdict(recipe), "parameters": n_params, "training_tokens": int(len(stream)),
              "heldout_tokens": int(len(held_stream)), "heldout_loss": held_loss, "steps": total_steps,
              "training_documents": len(docs), **({"dialect_tokens_without_loss": masked} if recipe.dialect_share else {}),
              **({"list_tokens_without_loss": masked} if recipe.template_lists else {}),
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
    for key in ("sample_accuracy", "lp_accuracy", "card_notes", "precision", "priming"):
        record.pop(key, None)
    return earlier + [record]
