"""How the engine's time and memory grow with the number of requests (2k, 8k, 32k).

bench_scoring's model (random 14M GPT-2, 2 threads) and workloads at growing sizes, one
run each, in one process (sizes in increasing order):

  1. plain LP over the first N BLiMP sentences: the plain forward + log-softmax loop (the
     floor), lm-eval HFLM.loglikelihood with an empty context, and the engine's default;
  2. in-template LP (5 templates x N/5 sentences = N requests): the engine's default.

For each: seconds, microseconds per request and its ratio to the smallest N (near 1: time
grows linearly), the engine's tokens run and its time running rows per token (flat: the
tokens per request vary with what the first N sentences share), the time to encode and plan
the run (tokenizer and CausalScorer.plan, the part that must stay linear), and the process's peak resident memory after
the run (it only grows; the largest run's peak is what that run costs at most).

    python benchmarks/bench_scaling.py [--sizes 2000 8000 32000]
"""
from __future__ import annotations

import argparse
import os
import resource
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

from bench_scoring import blimp_sentences, build_model, max_diff, plain_loop  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402
from helpers.methods.templates import ide_templates  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


class Growth:
    """Printed rows with the time per request against the first size's."""

    def __init__(self):
        self.base: dict[str, float] = {}

    def row(self, name: str, n: int, seconds: float, extra: str = "") -> None:
        per = seconds / n
        self.base.setdefault(name, per)
        print(f"  {name:<34}{seconds:8.1f} s {1e6 * per:8.0f} us/request ({per / self.base[name]:4.2f}x at the "
              f"smallest size){extra}", flush=True)


def per_token(scorer: CausalScorer) -> str:
    """The time running rows per token run and the head's time per request: what must stay
    flat as the run grows (the tokens per request vary with how much the sentences share)."""
    seconds = scorer.seconds
    return (f"rows {1e6 * seconds['rows'] / scorer.tokens_run:.0f} us/token, "
            f"head {seconds['head']:.1f} s")


def timed_once(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
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
          f"{args.threads} threads, torch {torch.__version__}; one run each; sizes {sizes}")
    plain_loop(model, tok, texts_all[:64])  # warm-up
    growth = Growth()
    for n in sizes:
        texts = texts_all[:n]
        print(f"N = {n:,}", flush=True)
        floor, t = timed_once(lambda: plain_loop(model, tok, texts))
        growth.row("plain LP: floor loop", n, t)
        t_floor = t
        reqs = [Instance("loglikelihood", {}, ("", s), i) for i, s in enumerate(texts)]
        lme, t = timed_once(lambda: [x[0] for x in hflm.loglikelihood(reqs, disable_tqdm=True)])
        growth.row("plain LP: lm-eval HFLM", n, t)
        t_lme = t
        scorer = CausalScorer(lm, Settings(progress=False))
        plain = [Request("", s) for s in texts]
        _, t_plan = timed_once(lambda: scorer.plan(scorer.encode_many(plain), with_context=True))
        scored, t = timed_once(lambda: scorer.score(plain))
        growth.row("plain LP: engine (default)", n, t,
                   f"; {scorer.tokens_run:,} tokens; {per_token(scorer)}; encode + plan {t_plan:.1f} s; "
                   f"{t_floor / t:.2f}x the floor, "
                   f"{t_lme / t:.2f}x lm-eval; max |diff| to lm-eval {max_diff([s.total for s in scored], lme):.1e}; "
                   f"peak RSS {peak_mib():,.0f} MiB")
        requests = [Request(before, s + after) for before, after in templates for s in texts[:n // len(templates)]]
        scorer = CausalScorer(lm, Settings(progress=False))
        _, t_plan = timed_once(lambda: scorer.plan(scorer.encode_many(requests), with_context=True))
        _, t = timed_once(lambda: scorer.score(requests))
        growth.row("in-template LP: engine (default)", len(requests), t,
                   f"; {scorer.tokens_run:,} tokens; {per_token(scorer)}; encode + plan {t_plan:.1f} s; "
                   f"peak RSS {peak_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
