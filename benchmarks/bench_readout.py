"""A method set with shared-context reuse on vs off, in one run.

Scores the first N BLiMP pairs (default 2,000) with every readout method of 02_readout
(5 templates each where templated), or with Yes/No over its 5 prompt templates
(``--methods yesno``), twice: with the engine's key/value reuse (share="prefix": template prefixes
and the common prefix of a pair's sentences run once) and without it (share="none"). Prints
the wall time of each, the ratio, and whether every decision is identical.

    python benchmarks/bench_readout.py [--model demo-en] [--pairs 2000] [--threads 2] [--methods readouts|yesno]
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
from helpers.settings import Settings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import data, methods  # noqa: E402
from helpers.data.selection import DatasetSelection  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.methods.readouts import unigram_for  # noqa: E402
from helpers.runs.run import Run  # noqa: E402
from helpers.store import ScoreStore, load_files  # noqa: E402
from helpers.engine import CausalScorer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--methods", choices=["readouts", "yesno"], default="readouts")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    tok = loaded.tokenizer
    pairs = DatasetSelection("blimp", data.load("blimp").head(args.pairs).reset_index(drop=True))
    names = methods.READOUT_METHODS if args.methods == "readouts" else ["yesno"]
    unigram_for(tok, "en")  # builds the cached unigram table, so corpus tokenization is not timed
    results = {}
    for share in ("none", "prefix"):
        scorer = CausalScorer(loaded, Settings(progress=False, share=share))
        with tempfile.TemporaryDirectory() as root:
            start = time.perf_counter()
            files = Run.of(scorer).files(names, pairs, store=ScoreStore(root))
            seconds = time.perf_counter() - start
            scores = load_files(files).sort_values(["method", "template", "paradigm", "pair_id"])
        results[share] = (seconds, scores, scorer.tokens_run)
        print(f"share={share:<7} {seconds:7.1f} s  {len(files)} score files, {scorer.tokens_run:,} tokens through the model, "
              f"{scorer.forward_calls} forward passes")
    (t_off, off, tok_off), (t_on, on, tok_on) = results["none"], results["prefix"]
    same = (off.correct.to_numpy() == on.correct.to_numpy()).mean()
    diff = max(np.abs(off.score_good.to_numpy() - on.score_good.to_numpy()).max(),
               np.abs(off.score_bad.to_numpy() - on.score_bad.to_numpy()).max())
    print(f"{len(pairs)} pairs x {len(names)} methods ({', '.join(names)}; templated ones x5) on {args.model}, "
          f"{args.threads} threads")
    print(f"reuse on vs off: {t_off / t_on:.2f}x faster, {1 - tok_on / tok_off:.0%} fewer tokens; "
          f"identical decisions: {same:.4%}; max |score difference| {diff:.2e}")


if __name__ == "__main__":
    main()
