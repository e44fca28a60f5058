"""Masked-LM pseudo-log-likelihood: the engine's MaskedScorer against minicons' MaskedLMScorer.

Builds a random BERT (``--layers`` x ``--width``, the tiny masked models' WordPiece tokenizer:
no download, and speed does not depend on the weights) and scores ``--n`` BLiMP sentences
(both sentences of the first ``--n``/2 pairs of a seeded sample) with both, in one run: the
engine with its default token budget, minicons in batches of ``--minicons-batch`` sentences
(each batch's masked copies in one padded forward, logits at every position). Prints each
one's time, the ratio and the largest difference of sentence PLLs, for ``pll`` (timed) and
``within_word_l2r`` (a parity check on ``--l2r-n`` sentences), and each one's largest difference
from a float64 reference (one masked copy at a time) on ``--ref-n`` sentences.

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/bench_masked.py [--n 2000]
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

import numpy as np  # noqa: E402
import torch  # noqa: E402


def sentences(n: int, seed: int = 0) -> list[str]:
    from helpers.data import load as load_data

    pairs = load_data("blimp").sample(n=n // 2, random_state=seed)
    return [s for g, b in zip(pairs.good, pairs.bad) for s in (g, b)]


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
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--minicons-batch", type=int, default=20)
    ap.add_argument("--l2r-n", type=int, default=200)
    ap.add_argument("--ref-n", type=int, default=50, help="sentences checked against a float64 reference")
    args = ap.parse_args()
    from minicons.scorer import MaskedLMScorer

    from helpers.engine.interface import Request
    from helpers.engine.masked import MaskedScorer
    from helpers.models import load
    from helpers.models.tiny_masked import build

    with tempfile.TemporaryDirectory() as tmp:
        lm = load(build("bert", Path(tmp) / "bert", layers=args.layers, width=args.width))
    texts = sentences(args.n)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ours = MaskedScorer(lm, progress=False)
    # minicons 0.3 calls batch_encode_plus, which transformers 5 removed: the same call under that name
    theirs = MaskedLMScorer(lm.model, device=device, tokenizer=copy.copy(lm.tokenizer))
    theirs.tokenizer.batch_encode_plus = theirs.tokenizer.__call__
    copies = sum(e.end - e.first for e in ours.encode_many([Request("", t) for t in texts]))
    print(f"random BERT {args.layers} layers x {args.width}, vocabulary {lm.model.config.vocab_size}, {device}, "
          f"torch threads {torch.get_num_threads()}; {len(texts)} BLiMP sentences, {copies} masked copies")
    ours.score_texts(texts[:8]), minicons_pll(theirs, texts[:8], args.minicons_batch, "original")  # warm-up
    t0 = time.perf_counter()
    a = np.array([s.total for s in ours.score_texts(texts)])
    t1 = time.perf_counter()
    b = minicons_pll(theirs, texts, args.minicons_batch, "original")
    t2 = time.perf_counter()
    print(f"pll: engine {t1 - t0:.2f} s ({ours.forward_calls} forward passes), minicons {t2 - t1:.2f} s: "
          f"{(t2 - t1) / (t1 - t0):.2f}x faster; max |PLL difference| {np.abs(a - b).max():.2e} nats")
    ref = float64_pll(lm, ours.encode_many([Request("", t) for t in texts[:args.ref_n]]))
    print(f"against a float64 reference on {len(ref)} sentences: max |PLL difference| engine "
          f"{np.abs(a[:len(ref)] - ref).max():.2e}, minicons {np.abs(b[:len(ref)] - ref).max():.2e} nats")
    few = texts[:args.l2r_n]
    c = np.array([s.total for s in MaskedScorer(lm, variant="within_word_l2r", progress=False).score_texts(few)])
    d = minicons_pll(theirs, few, args.minicons_batch, "within_word_l2r")
    print(f"within_word_l2r on {len(few)} sentences: max |PLL difference| {np.abs(c - d).max():.2e} nats "
          f"(differs from pll on {int(np.sum(np.abs(c - a[:len(few)]) > 1e-3))} sentences)")


if __name__ == "__main__":
    main()
