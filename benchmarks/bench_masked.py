"""Masked-LM pseudo-log-likelihood: the engine's MaskedScorer against minicons' MaskedLMScorer.

Builds a random masked LM of a real model's shape (``--shape``: bert-base-cased's 12 layers x
768 and vocabulary of 28,996, roberta-base's vocabulary of 50,265, or the tests' ``tiny`` BERT),
with a tokenizer trained on BLiMP itself (WordPiece, or byte-level BPE for RoBERTa; 8,000
pieces, so sentences are about as many tokens as a real tokenizer makes of them): no
download, and speed does not depend on the weights. Scores ``--n`` BLiMP sentences (both
sentences of the first ``--n``/2 pairs of a seeded sample) with both, in one run: the engine
with its default token budget, minicons in batches of sentences (each batch's masked copies
in one padded forward, logits at every position) of the size among ``--minicons-batches``
that was fastest on a warm-up sample. Prints each one's time, the ratio and the largest
difference of sentence PLLs, for ``pll`` (timed) and ``within_word_l2r`` (a parity check on
``--l2r-n`` sentences), and each one's largest difference from a float64 reference (one masked
copy at a time) on ``--ref-n`` sentences.

    nice -n 19 python benchmarks/bench_masked.py [--shape bert-base] [--n 200]
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from helpers.settings import Settings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402


def sentences(n: int, seed: int = 0) -> list[str]:
    from helpers.data import load as load_data

    pairs = load_data("blimp").sample(n=n // 2, random_state=seed)
    return [s for g, b in zip(pairs.good, pairs.bad) for s in (g, b)]


SHAPES = {  # real models' shapes: layers, width, heads, feed-forward, vocabulary
    "bert-base": dict(architecture="bert", layers=12, width=768, heads=12, ffn=3072, vocab=28996),
    "roberta-base": dict(architecture="roberta", layers=12, width=768, heads=12, ffn=3072, vocab=50265),
}


def shaped_model(shape: str, corpus: list[str], out: Path):
    """A random masked LM of ``shape`` with a tokenizer trained on ``corpus`` (8,000 pieces)."""
    import transformers

    from helpers.models import load
    from helpers.models.tiny_masked import BERT_SPECIALS, ROBERTA_SPECIALS, bpe_tokenizer, wordpiece_tokenizer

    s = SHAPES[shape]
    bert = s["architecture"] == "bert"
    tok = wordpiece_tokenizer(8000, corpus) if bert else bpe_tokenizer(8000, corpus)
    specials = BERT_SPECIALS if bert else ROBERTA_SPECIALS
    config = (transformers.BertConfig if bert else transformers.RobertaConfig)(
        vocab_size=s["vocab"], hidden_size=s["width"], num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"], intermediate_size=s["ffn"], max_position_embeddings=514,
        pad_token_id=tok.convert_tokens_to_ids(specials[0 if bert else 1]), type_vocab_size=2 if bert else 1)
    torch.manual_seed(0)
    transformers.AutoModelForMaskedLM.from_config(config).eval().save_pretrained(out)
    tok.save_pretrained(out)
    return load(out)


def minicons_pll(scorer, texts: list[str], batch: int, variant: str) -> np.ndarray:
    out = []
    for i in range(0, len(texts), batch):
        out += scorer.sequence_score(texts[i:i + batch], reduction=lambda x: x.sum(0).item(), PLL_metric=variant)
    return np.array(out)


def float64_pll(lm, encoded) -> np.ndarray:
    """Each sequence's PLL the plain way: one masked copy at a time through the float64 model."""
    model, out = copy.deepcopy(lm.model).double(), []
    for e in encoded:
        total = 0.0
        for p in range(e.first, e.end):
            ids = list(e.ids)
            ids[p] = lm.tokenizer.mask_token_id
            total += float(torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, p], -1)[e.ids[p]])
        out.append(total)
    return np.array(out)


@torch.no_grad()  # scoring only; the decorator leaves the caller's grad mode as it was
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=[*SHAPES, "tiny"], default="bert-base")
    ap.add_argument("--layers", type=int, default=4, help="layers of the tiny shape")
    ap.add_argument("--width", type=int, default=256, help="width of the tiny shape")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--minicons-batches", default="5,20,50", help="sentences per minicons batch to try")
    ap.add_argument("--l2r-n", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each, alternated; medians compared")
    ap.add_argument("--ref-n", type=int, default=50, help="sentences checked against a float64 reference")
    args = ap.parse_args()
    from minicons.scorer import MaskedLMScorer

    from helpers.engine.interface import Request
    from helpers.engine.masked import MaskedScorer
    from helpers.models import load
    from helpers.models.tiny_masked import build

    from helpers.data import load as load_data

    texts = sentences(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        if args.shape == "tiny":
            lm = load(build("bert", Path(tmp) / "bert", layers=args.layers, width=args.width))
        else:
            blimp = load_data("blimp")
            lm = shaped_model(args.shape, [*blimp.good, *blimp.bad], Path(tmp) / args.shape)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ours = MaskedScorer(lm, Settings(progress=False))
    # minicons 0.3 calls batch_encode_plus, which transformers 5 removed: the same call under that name
    theirs = MaskedLMScorer(lm.model, device=device, tokenizer=copy.copy(lm.tokenizer))
    theirs.tokenizer.batch_encode_plus = theirs.tokenizer.__call__
    copies = sum(e.end - e.first for e in ours.encode_many([Request("", t) for t in texts]))
    c = lm.model.config
    print(f"random {c.model_type} ({args.shape}: {c.num_hidden_layers} layers x {c.hidden_size}, vocabulary "
          f"{c.vocab_size}), {device}, torch threads {torch.get_num_threads()}; {len(texts)} BLiMP sentences, "
          f"{copies} masked copies ({copies / len(texts):.1f} a sentence)")
    ours.score_texts(texts[:8])  # warm-up
    warm = {}
    for size in (int(b) for b in args.minicons_batches.split(",")):
        t = time.perf_counter()
        minicons_pll(theirs, texts[:2 * size], size, "original")
        warm[size] = (time.perf_counter() - t) / (2 * size)
    batch = min(warm, key=warm.get)
    print("minicons warm-up, seconds a sentence by batch size: "
          + ", ".join(f"{k}: {v:.4f}" for k, v in warm.items()) + f"; timed with {batch}")
    times = {"engine": [], "minicons": []}
    for _ in range(args.repeats):  # alternated, so that a busy spell slows both
        t0 = time.perf_counter()
        a = np.array([s.total for s in ours.score_texts(texts)])
        t1 = time.perf_counter()
        b = minicons_pll(theirs, texts, batch, "original")
        times["engine"].append(t1 - t0), times["minicons"].append(time.perf_counter() - t1)
    e, m = (float(np.median(times[k])) for k in ("engine", "minicons"))
    print(f"pll, median of {args.repeats}: engine {e:.2f} s ({ours.forward_calls // args.repeats} forward passes), "
          f"minicons {m:.2f} s: {m / e:.2f}x faster; max |PLL difference| {np.abs(a - b).max():.2e} nats "
          f"(runs: engine {', '.join(f'{t:.2f}' for t in times['engine'])}; "
          f"minicons {', '.join(f'{t:.2f}' for t in times['minicons'])})")
    ref = float64_pll(lm, ours.encode_many([Request("", t) for t in texts[:args.ref_n]]))
    print(f"against a float64 reference on {len(ref)} sentences: max |PLL difference| engine "
          f"{np.abs(a[:len(ref)] - ref).max():.2e}, minicons {np.abs(b[:len(ref)] - ref).max():.2e} nats")
    few = texts[:args.l2r_n]
    c = np.array([s.total for s in MaskedScorer(lm, Settings(progress=False), variant="within_word_l2r").score_texts(few)])
    d = minicons_pll(theirs, few, batch, "within_word_l2r")
    print(f"within_word_l2r on {len(few)} sentences: max |PLL difference| {np.abs(c - d).max():.2e} nats "
          f"(differs from pll on {int(np.sum(np.abs(c - a[:len(few)]) > 1e-3))} sentences)")


if __name__ == "__main__":
    main()
