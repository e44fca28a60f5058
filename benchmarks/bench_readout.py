"""A method set with shared-context reuse on vs off, in one run.

Scores the first N BLiMP pairs (default 2,000) with every readout method of 02_readout
(5 templates each where templated), or with Yes/No over its 5 prompt templates
(``--methods yesno``), with the engine's key/value reuse (share="prefix": template prefixes
and the common prefix of a pair's sentences run once) and without it (share="none"), each run
with a fresh scorer into an empty store, the two interleaved (benchmarks/spread.py: in turn, the
order reversed every other round), ``--repeats`` times each (at least 5). Prints the median wall
time of each with its range, the speed-up of reuse as the median of the per-round ratios with
their range, and whether every decision is identical; with the machine, the load average before
and after, and the commit.

    python benchmarks/bench_readout.py [--model demo-en] [--pairs 2000] [--threads 2] [--methods readouts|yesno]
        [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
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
import spread  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--methods", choices=["readouts", "yesno"], default="readouts")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    tok = loaded.tokenizer
    pairs = DatasetSelection("blimp", data.load("blimp").head(args.pairs).reset_index(drop=True))
    names = methods.READOUT_METHODS if args.methods == "readouts" else ["yesno"]
    unigram_for(tok, "en")  # builds the cached unigram table, so corpus tokenization is not timed
    results = {}  # each share mode's last run: (scores, files, tokens, forward passes)

    def contender(share: str):
        def run() -> float:
            scorer = CausalScorer(loaded, Settings(progress=False, share=share))
            with tempfile.TemporaryDirectory() as root:
                start = time.perf_counter()
                files = Run.of(scorer).files(names, pairs, store=ScoreStore(root))
                seconds = time.perf_counter() - start
                scores = load_files(files).sort_values(["method", "template", "paradigm", "pair_id"])
            results[share] = (scores, len(files), scorer.tokens_run, scorer.forward_calls)
            return seconds
        return run

    times = spread.rounds({share: contender(share) for share in ("none", "prefix")}, args.repeats)
    for share, (_, files, tokens, calls) in results.items():
        print(f"share={share:<7} {spread.describe(times[share])}  {files} score files, {tokens:,} tokens through "
              f"the model, {calls} forward passes a run")
    (off, _, tok_off, _), (on, _, tok_on, _) = results["none"], results["prefix"]
    same = (off.correct.to_numpy() == on.correct.to_numpy()).mean()
    diff = max(np.abs(off.score_good.to_numpy() - on.score_good.to_numpy()).max(),
               np.abs(off.score_bad.to_numpy() - on.score_bad.to_numpy()).max())
    print(f"{len(pairs)} pairs x {len(names)} methods ({', '.join(names)}; templated ones x5) on {args.model}, "
          f"{args.threads} threads, {args.repeats} interleaved runs each")
    print(f"reuse on vs off: {spread.describe_ratio(times['none'], times['prefix'])} faster (median and range of "
          f"the per-round ratios), {1 - tok_on / tok_off:.0%} fewer tokens; identical decisions: {same:.4%}; "
          f"max |score difference| {diff:.2e}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
