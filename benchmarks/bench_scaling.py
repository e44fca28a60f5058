"""How the engine's time and memory grow with the number of requests (2k, 8k, 32k).

bench_scoring's model (random 14M GPT-2, 2 threads) and workloads at growing sizes, in one
process (sizes in increasing order); at each size the four below run interleaved
(benchmarks/spread.py: in turn, the order reversed every other round), ``--repeats`` times each
(at least 5), the engine with a fresh scorer each run:

  1. plain LP over the first N BLiMP sentences: the plain forward + log-softmax loop (the
     floor), lm-eval HFLM.loglikelihood with an empty context, and the engine's default;
  2. in-template LP (5 templates x N/5 sentences = N requests): the engine's default.

For each: the median seconds with their range, microseconds per request at the median and its
ratio to the smallest N's (near 1: time grows linearly), the engine's tokens run and its median
time running rows per token (flat: the tokens per request vary with what the first N sentences
share), the median time to encode and plan the run (tokenizer and CausalScorer.plan, the part
that must stay linear), the engine's speed against the floor and lm-eval as the median of the
per-round ratios with their range; after each size's runs, the process's peak resident memory
(it only grows; the largest size's peak is what its runs cost at most). With the machine, the
load average before and after, and the commit.

    python benchmarks/bench_scaling.py [--sizes 2000 8000 32000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings  # noqa: E402

import torch  # noqa: E402

import spread  # noqa: E402
from bench_scoring import blimp_sentences, build_model, max_diff, plain_loop  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402
from helpers.methods.templates import ide_templates  # noqa: E402

FLOOR, LM_EVAL, PLAIN, TEMPLATE = ("plain LP: floor loop", "plain LP: lm-eval HFLM", "plain LP: engine (default)",
                                   "in-template LP: engine (default)")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


class Growth:
    """Printed rows with the median time per request against the first size's."""

    def __init__(self):
        self.base: dict[str, float] = {}

    def row(self, name: str, n: int, seconds: list[float], extra: str = "") -> None:
        per = statistics.median(seconds) / n
        self.base.setdefault(name, per)
        print(f"  {name:<34}{spread.describe(seconds):<34}{1e6 * per:8.0f} us/request ({per / self.base[name]:4.2f}x "
              f"at the smallest size){extra}", flush=True)


def per_token(runs: list[dict]) -> str:
    """The median time running rows per token run and the head's median time: what must stay
    flat as the run grows (the tokens per request vary with how much the sentences share)."""
    rows = statistics.median(r["rows"] / r["tokens"] for r in runs)
    return (f"{runs[-1]['tokens']:,} tokens; rows {1e6 * rows:.0f} us/token, "
            f"head {statistics.median(r['head'] for r in runs):.1f} s; "
            f"encode + plan {statistics.median(r['plan'] for r in runs):.1f} s")


def timed_once(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    torch.set_num_threads(args.threads)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    sizes = sorted(args.sizes)
    texts_all = blimp_sentences(max(sizes))
    model, tok = build_model()
    lm = LoadedModel.wrap(model, tok, name="bench-gpt2")
    hflm = HFLM(pretrained=model, tokenizer=tok, batch_size=64, device="cpu")
    templates = [t.split() for t in ide_templates("single")]
    print(f"model: GPT-2 6x384, {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters; "
          f"{args.threads} threads, torch {torch.__version__}; {args.repeats} interleaved runs each at each size; "
          f"sizes {sizes}")
    plain_loop(model, tok, texts_all[:64])  # warm-up
    growth = Growth()
    for n in sizes:
        texts = texts_all[:n]
        print(f"N = {n:,}", flush=True)
        plain = [Request("", s) for s in texts]
        reqs = [Instance("loglikelihood", {}, ("", s), i) for i, s in enumerate(texts)]
        requests = [Request(before, s + after) for before, after in templates for s in texts[:n // len(templates)]]
        found: dict[str, list[float]] = {}  # each contender's scores, from its last run
        engine_runs: dict[str, list[dict]] = {PLAIN: [], TEMPLATE: []}

        def scores(name: str, fn):
            def run() -> float:
                found[name], seconds = timed_once(fn)
                return seconds
            return run

        def engine(name: str, these: list):
            def run() -> float:
                scorer = CausalScorer(lm, Settings(progress=False))
                _, t_plan = timed_once(lambda: scorer.plan(scorer.encode_many(these), with_context=True))
                scored, seconds = timed_once(lambda: scorer.score(these))
                found[name] = [s.total for s in scored]
                engine_runs[name].append({**scorer.seconds, "plan": t_plan, "tokens": scorer.tokens_run})
                return seconds
            return run

        times = spread.rounds({
            FLOOR: scores(FLOOR, lambda: plain_loop(model, tok, texts)),
            LM_EVAL: scores(LM_EVAL, lambda: [x[0] for x in hflm.loglikelihood(reqs, disable_tqdm=True)]),
            PLAIN: engine(PLAIN, plain), TEMPLATE: engine(TEMPLATE, requests)}, args.repeats)
        growth.row(FLOOR, n, times[FLOOR])
        growth.row(LM_EVAL, n, times[LM_EVAL])
        growth.row(PLAIN, n, times[PLAIN],
                   f"; {per_token(engine_runs[PLAIN])}; {spread.describe_ratio(times[FLOOR], times[PLAIN])} the "
                   f"floor, {spread.describe_ratio(times[LM_EVAL], times[PLAIN])} lm-eval; max |diff| to lm-eval "
                   f"{max_diff(found[PLAIN], found[LM_EVAL]):.1e}")
        growth.row(TEMPLATE, len(requests), times[TEMPLATE], f"; {per_token(engine_runs[TEMPLATE])}")
        print(f"  peak RSS after the runs at N = {n:,}: {peak_mib():,.0f} MiB", flush=True)
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
