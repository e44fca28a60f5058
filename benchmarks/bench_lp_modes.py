"""Plain LP over 2,000 BLiMP sentences with each share mode of the engine against the plain
forward + log-softmax loop (bench_scoring's floor and model): requests/s, tokens run, time
against the floor's. The floor and every mode run interleaved (benchmarks/spread.py: in turn,
the order reversed every other round), ``--repeats`` times each (at least 5): each one's median
time with its range, requests/s at the median, and its time against the floor's as the median of
the per-round ratios with their range; with the machine, the load average before and after, and
the commit. Nothing is compared with lm-eval here (bench_scoring does that); this asks which
sharing pays on short sentences.

    python benchmarks/bench_lp_modes.py [--n 2000] [--repeats 5]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings, scorer_arguments  # noqa: E402
import torch  # noqa: E402

import spread  # noqa: E402
from bench_scoring import blimp_sentences, build_model, plain_loop  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402

MODES = {"none": dict(share="none"), "prefix (packed from 16)": dict(share="prefix"),
         "prefix, packed from 0": dict(share="prefix", pack_min_stem=0),
         "tree, cached": dict(share="tree", pack=True, pack_min_stem=10**6),
         "tree, packed from 16": dict(share="tree", pack_min_stem=16), "tree, packed from 0": dict(share="tree"),
         "default (auto)": dict()}


def seconds_of(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="BLiMP sentences")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    torch.set_num_threads(2)
    texts = blimp_sentences(args.n)
    model, tok = build_model()
    lm = LoadedModel.wrap(model, tok, name="bench-gpt2")
    requests = [Request("", t) for t in texts]
    plain_loop(model, tok, texts[:64])  # warm-up
    scorers, tokens = {}, {name: [] for name in MODES}
    for name, options in MODES.items():
        scorers[name] = CausalScorer(lm, **scorer_arguments(options, Settings(progress=False)))
        scorers[name].score(requests[:64])  # warm-up

    def engine(name: str):
        def run() -> float:
            before = scorers[name].tokens_run
            seconds = seconds_of(lambda: scorers[name].score(requests))
            tokens[name].append(scorers[name].tokens_run - before)
            return seconds
        return run

    times = spread.rounds({"floor": lambda: seconds_of(lambda: plain_loop(model, tok, texts)),
                           **{name: engine(name) for name in MODES}}, args.repeats)
    floor = times["floor"]
    print(f"{len(texts)} sentences, {args.repeats} interleaved runs each; req/s at the median time")
    print(f"{'floor':24s} {len(texts) / statistics.median(floor):7.1f} req/s  {spread.describe(floor)}")
    for name, options in MODES.items():
        ran = f"  (ran: {scorers[name].share_used})" if "share" not in options else ""
        print(f"{name:24s} {len(texts) / statistics.median(times[name]):7.1f} req/s  {spread.describe(times[name])}  "
              f"tokens {tokens[name][-1]:,}  {spread.describe_ratio(times[name], floor)} the floor's time{ran}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
