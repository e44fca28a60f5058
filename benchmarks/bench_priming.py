"""Scoring under long priming prefixes, with prefix reuse on vs off, in one run.

Builds 800-token in-domain acceptable prefixes (Sinha et al. 2023) for the first N BLiMP
pairs of each of the first P paradigms and scores LP under them four times: without reuse
(share="none": each sentence runs with its own copy of the prefix), with key/value reuse
level by level (share="prefix", pack=False: the prefix runs once, its cache is copied to
both sentences' rows), with packed reuse (share="prefix": prefix and both sentences in one
row under a tree attention mask), with the tree (share="tree": every common prefix of the run
shared, packed) and with the default (share="auto": the mode the cost model, from the model's
shape and the shipped costs of its device class, predicts fastest; the row names the mode it ran). Prints the date, machine, versions and
load average, each mode's wall time as the median (range) of ``--repeats`` runs (at least 5) taken
in turn (benchmarks/spread.py), tokens through the model, time per token, the ratios against no reuse
(medians of the per-round ratios, with their range) and whether every decision is identical.
``--lengths 200 400 800`` scores a grid instead: longer prefixes then extend the cached
shorter ones.

    python benchmarks/bench_priming.py [--model demo-en] [--paradigms 10] [--pairs 5] [--lengths 800] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from helpers.settings import Settings, scorer_arguments  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import data  # noqa: E402
from helpers.data import priming  # noqa: E402
from helpers.data.selection import DatasetSelection, first_per_paradigm  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.runs.primed import primed_input  # noqa: E402
from helpers.runs.run import Run  # noqa: E402
from helpers.store import ScoreStore, load_files  # noqa: E402
from helpers.engine import CausalScorer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--paradigms", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--lengths", type=int, nargs="+", default=[800])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each mode")
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
    modes = {"no reuse": dict(share="none"), "reuse, cached levels": dict(share="prefix", pack=False),
             "reuse, packed": dict(share="prefix"), "reuse, tree": dict(share="tree"), "default (auto)": dict()}
    print(spread.header(sys.argv), flush=True)
    print(f"# python {platform.python_version()}, torch {torch.__version__}, "
          f"transformers {__import__('transformers').__version__}")
    coefficients = CausalScorer(loaded, Settings(progress=False))._auto.coefficients  # the shape x the device class
    print(f"# auto's coefficients (shipped, nothing timed): {coefficients}")
    used, splits, results = {}, {m: [] for m in modes}, {}

    def contender(mode: str):
        def run() -> float:  # a fresh scorer and store each run, as a user's run starts
            scorer = CausalScorer(loaded, **scorer_arguments(modes[mode], Settings(progress=False)))
            with tempfile.TemporaryDirectory() as root:
                start = time.perf_counter()
                files = Run.of(scorer).files(["lp"], *primed_input(selection, prefixes), store=ScoreStore(root))
                seconds = time.perf_counter() - start
                scores = load_files(files).sort_values(["paradigm", "pair_id", "target_length"])
            used[mode] = scorer.share_used
            splits[mode].append({**scorer.seconds, "outside the engine": seconds - sum(scorer.seconds.values())})
            results[mode] = (scores, scorer.tokens_run, scorer.forward_calls)
            return seconds
        return run

    times = spread.rounds({mode: contender(mode) for mode in modes}, args.repeats)
    for mode, (_, tokens, calls) in results.items():
        ran = f"  (ran: {used[mode]})" if used[mode] != options_share(modes[mode]) else ""
        seconds = statistics.median(times[mode])
        print(f"{mode:<21} {spread.describe(times[mode])}  {tokens:>9,} tokens  {calls:>5} forward "
              f"passes  {1e6 * seconds / tokens:6.1f} µs per token (median){ran}")
        print(f"{'':<21} medians: " + ", ".join(f"{part} {statistics.median(s[part] for s in splits[mode]):.2f} s"
                                              for part in splits[mode][0]))
    print(f"{len(targets)} pairs x prefixes of {args.lengths} tokens (mean actual "
          f"{prefixes.actual_length.mean():.0f}) on {args.model}, {args.threads} threads, {args.repeats} interleaved "
          f"runs of each mode; load average after {spread.load_average()}")
    fastest = min((m for m in modes if m != "default (auto)"), key=lambda m: statistics.median(times[m]))
    print(f'share="auto" ran {used["default (auto)"]!r}; the fastest mode by median time: {fastest!r} (the default at '
          f'{spread.describe_ratio(times[fastest], times["default (auto)"])} its speed)')
    off, tok_off, _ = results["no reuse"]
    for mode in list(modes)[1:]:
        on, tok_on, _ = results[mode]
        same = (off.correct.to_numpy() == on.correct.to_numpy()).mean()
        diff = max(np.abs(off.score_good.to_numpy() - on.score_good.to_numpy()).max(),
                   np.abs(off.score_bad.to_numpy() - on.score_bad.to_numpy()).max())
        print(f"{mode} vs no reuse: {spread.describe_ratio(times['no reuse'], times[mode])} faster, "
              f"{1 - tok_on / tok_off:.0%} fewer tokens (the tokens bound it at {tok_off / tok_on:.2f}x); "
              f"identical decisions: {same:.4%}; max |score difference| {diff:.2e}")


def options_share(options: dict) -> str:
    return options.get("share", "auto")


if __name__ == "__main__":
    main()
