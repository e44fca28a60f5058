"""Masked-LM pseudo-log-likelihood: the engine's MaskedScorer against minicons' MaskedLMScorer.

Builds a random masked LM of a real model's shape (``--shape``: bert-base-cased's 12 layers x
768 and vocabulary of 28,996, roberta-base's vocabulary of 50,265, or the tests' ``tiny`` BERT),
with a tokenizer trained on BLiMP itself (WordPiece, or byte-level BPE for RoBERTa; 8,000
pieces, so sentences are about as many tokens as a real tokenizer makes of them): no
download, and speed does not depend on the weights. Scores ``--n`` BLiMP sentences (both
sentences of the first ``--n``/2 pairs of a seeded sample) with both, in one run: the engine
with its default token budget, minicons in batches of sentences (each batch's masked copies
in one padded forward, logits at every position) of the size among ``--minicons-batches``
with the lowest median time a sentence on a warm-up sample (one batch of each size, the sizes
interleaved). Timed with benchmarks/spread.py: the two run interleaved (engine, minicons, then
the other way round), ``--repeats`` times each (at least 5). Prints each one's median time with
its range, the engine's speed-up as the median of the per-round ratios with their range, and
the largest difference of sentence PLLs, for ``pll`` (timed) and ``within_word_l2r`` (a parity
check on ``--l2r-n`` sentences), and each one's largest difference from a float64 reference (one
masked copy at a time) on ``--ref-n`` sentences; with the machine, the load average before and
after, and the commit.

    nice -n 19 python benchmarks/bench_masked.py [--shape bert-base] [--n 200] [--repeats 5]
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings  # noqa: E402

import spread  # noqa: E402

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
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    ap.add_argument("--ref-n", type=int, default=50, help="sentences checked against a float64 reference")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
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

    def warm_up(size: int):
        def run() -> float:
            t, sample = time.perf_counter(), texts[:size]
            minicons_pll(theirs, sample, size, "original")
            return (time.perf_counter() - t) / len(sample)
        return run

    warm = spread.rounds({int(b): warm_up(int(b)) for b in args.minicons_batches.split(",")}, args.repeats)
    batch = min(warm, key=lambda k: np.median(warm[k]))
    print(f"minicons warm-up, seconds a sentence by batch size (median and range of {args.repeats} interleaved "
          "runs): " + ", ".join(f"{k}: {np.median(v):.4f} ({min(v):.4f}-{max(v):.4f})" for k, v in warm.items())
          + f"; timed with {batch}")
    found, calls = {}, []

    def engine() -> float:
        before, t = ours.forward_calls, time.perf_counter()
        found["engine"] = np.array([s.total for s in ours.score_texts(texts)])
        seconds = time.perf_counter() - t
        calls.append(ours.forward_calls - before)
        return seconds

    def minicons() -> float:
        t = time.perf_counter()
        found["minicons"] = minicons_pll(theirs, texts, batch, "original")
        return time.perf_counter() - t

    times = spread.rounds({"engine": engine, "minicons": minicons}, args.repeats)
    a, b = found["engine"], found["minicons"]
    print(f"pll, {args.repeats} interleaved runs each: engine {spread.describe(times['engine'])}, "
          f"{int(np.median(calls))} forward passes a run; minicons {spread.describe(times['minicons'])}; engine "
          f"{spread.describe_ratio(times['minicons'], times['engine'])} faster (per-round ratios: median, range); "
          f"max |PLL difference| {np.abs(a - b).max():.2e} nats")
    ref = float64_pll(lm, ours.encode_many([Request("", t) for t in texts[:args.ref_n]]))
    print(f"against a float64 reference on {len(ref)} sentences: max |PLL difference| engine "
          f"{np.abs(a[:len(ref)] - ref).max():.2e}, minicons {np.abs(b[:len(ref)] - ref).max():.2e} nats")
    few = texts[:args.l2r_n]
    c = np.array([s.total for s in MaskedScorer(lm, Settings(progress=False), variant="within_word_l2r").score_texts(few)])
    d = minicons_pll(theirs, few, batch, "within_word_l2r")
    print(f"within_word_l2r on {len(few)} sentences: max |PLL difference| {np.abs(c - d).max():.2e} nats "
          f"(differs from pll on {int(np.sum(np.abs(c - a[:len(few)]) > 1e-3))} sentences)")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
