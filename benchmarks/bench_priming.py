"""Scoring under long priming prefixes, with prefix reuse on vs off, in one run.

Builds 800-token in-domain acceptable prefixes (Sinha et al. 2023) for the first N BLiMP
pairs of each of the first P paradigms and scores LP under them twice: with the engine's
key/value reuse (share="prefix": the prefix runs once for both sentences of the pair) and
without it (share="none": each sentence runs with its own copy of the prefix). Prints the
wall time, tokens through the model, the ratio, and whether every decision is identical.
``--lengths 200 400 800`` scores a grid instead: longer prefixes then extend the cached
shorter ones.

    python benchmarks/bench_priming.py [--model demo-en] [--paradigms 10] [--pairs 5] [--lengths 800]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import data, priming  # noqa: E402
from helpers.data.selection import DatasetSelection, first_per_paradigm  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.primed import score_primed  # noqa: E402
from helpers.results import ScoreStore, load_files  # noqa: E402
from helpers.scoring import Scorer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--paradigms", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--lengths", type=int, nargs="+", default=[800])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    blimp = data.load("blimp")
    keep = blimp.paradigm.drop_duplicates().iloc[:args.paradigms]
    targets = first_per_paradigm(blimp[blimp.paradigm.isin(keep)], args.pairs)
    selection = DatasetSelection("blimp", targets, limit=args.pairs)
    prefixes = priming.build_prefixes(targets, priming.token_counter(loaded.tokenizer), pool=blimp,
                                      prefix_types=["in_acceptable"], lengths=args.lengths,
                                      max_positions=loaded.model.config.n_positions)
    results = {}
    for share in ("none", "prefix"):
        scorer = Scorer(loaded, progress=False, share=share)
        with tempfile.TemporaryDirectory() as root:
            start = time.perf_counter()
            files = score_primed(scorer, selection, prefixes, ["lp"], store=ScoreStore(root))
            seconds = time.perf_counter() - start
            scores = load_files(files).sort_values(["paradigm", "pair_id", "target_length"])
        results[share] = (seconds, scores, scorer.tokens_run)
        print(f"share={share:<7} {seconds:7.1f} s  {scorer.tokens_run:,} tokens through the model, "
              f"{scorer.forward_calls} forward passes")
    (t_off, off, tok_off), (t_on, on, tok_on) = results["none"], results["prefix"]
    same = (off.correct.to_numpy() == on.correct.to_numpy()).mean()
    diff = max(np.abs(off.score_good.to_numpy() - on.score_good.to_numpy()).max(),
               np.abs(off.score_bad.to_numpy() - on.score_bad.to_numpy()).max())
    print(f"{len(targets)} pairs x prefixes of {args.lengths} tokens (mean actual "
          f"{prefixes.actual_length.mean():.0f}) on {args.model}, {args.threads} threads")
    print(f"prefix reuse on vs off: {t_off / t_on:.2f}x faster, {1 - tok_on / tok_off:.0%} fewer tokens; "
          f"identical decisions: {same:.4%}; max |score difference| {diff:.2e}")


if __name__ == "__main__":
    main()
