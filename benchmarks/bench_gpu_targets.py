"""The rows the GPU targets compare, each as 5 interleaved runs (medians and ranges,
benchmarks/spread.py), in the plan of benchmarks/gpu_plan.py: what scripts/gpu_check.py runs as its
benchmark step. On a random Llama 3 8B in bfloat16 (``--shape``; ``--model`` loads a real one):

  1. plain LP of ``--n`` BLiMP sentences: the default (share="auto") against the plain loop
     (length-sorted forwards, a float32 log-softmax: the floor) and lm-eval's HFLM;
  2. in-template LP (the 5 Ide et al. templates x ``--m`` sentences): the default against no reuse;
  3. plain LP in NF4 (bitsandbytes 4-bit copy, bf16 compute): the default against the NF4 loop;
  4. priming: ``--priming-pairs`` pairs x 5 prefix types of ``--prefix-tokens`` tokens, the default
     against no reuse.
Each contender is warmed up once on a quarter of its requests, then the section's contenders run
in turn ``--rounds`` times (the order reversed every other round); each line gives the median
seconds and range, requests/s and tokens/s at the median, the plan's estimate, and each ratio as the
median of the per-round ratios with its range; every score is compared with the baseline's. A
section that would start after ``--until`` (a clock time) is skipped and said so.

    python benchmarks/bench_gpu_targets.py --shape llama3-8b [--n 1600 --m 400 --priming-pairs 15]
    python benchmarks/bench_gpu_targets.py --cpu --model tiny-llama --n 40 --m 8 --priming-pairs 1 --prefix-tokens 20
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_gpu as bg  # noqa: E402  (sets the path to helpers)
import gpu_plan  # noqa: E402
import spread  # noqa: E402

import torch  # noqa: E402

from helpers.settings import Settings, scorer_arguments  # noqa: E402


def synced(fn):
    """``fn`` with the GPU synchronised after it (a timed run ends when its kernels do)."""
    def run():
        value = fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return value
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None)
    ap.add_argument("--shape", choices=sorted(bg.SHAPES), default=None)
    for key, value in gpu_plan.SIZES.items():
        ap.add_argument("--" + key.replace("_", "-"), type=int, default=value)
    ap.add_argument("--rounds", type=spread.repeats, default=gpu_plan.ROUNDS)
    ap.add_argument("--token-budget", type=int, default=32768)
    ap.add_argument("--until", type=float, default=None, help="start no section after this clock time")
    ap.add_argument("--cpu", action="store_true", help="a smoke run on the CPU (tiny model: numbers mean nothing)")
    args = ap.parse_args()
    on_gpu = torch.cuda.is_available() and not args.cpu
    if not on_gpu and not args.cpu:
        print("bench_gpu_targets needs a CUDA GPU; none is visible here (--cpu runs a smoke run)")
        return
    from bench_scoring import blimp_sentences

    from helpers.engine import CausalScorer, Request
    from helpers.models import LoadedModel, load

    started = time.time()
    print(spread.header(sys.argv))
    loaded = bg.random_llama(args.shape, "cuda" if on_gpu else "cpu") if args.shape else \
        load(args.model or "demo-en", quant=None, dtype=torch.bfloat16 if on_gpu else torch.float32)
    sizes = {k: getattr(args, k) for k in gpu_plan.SIZES}
    estimate = dict(gpu_plan.plan(sizes, args.rounds))
    device = torch.cuda.get_device_name(0) if on_gpu else "CPU"
    print(f"{loaded.name}, {next(loaded.model.parameters()).dtype}, {device}, torch {torch.__version__}; "
          f"{args.rounds} interleaved runs per contender, medians (range); built in {time.time() - started:.0f} s")
    texts = blimp_sentences(args.n)
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    plain = [Request("", t) for t in texts]
    ids = [list(e.ids) for e in CausalScorer(loaded, Settings(progress=False)).encode_many(plain)]
    settings = Settings(progress=False, token_budget=args.token_budget)

    def engine(lm, requests, **options):
        scorer = CausalScorer(lm, **scorer_arguments(options, settings))
        return lambda part=None: [s.total for s in scorer.score(requests[:part] if part else requests)]

    def loop(model):
        return lambda part=None: bg.plain_loop(model, ids[:part] if part else ids, pad, args.token_budget)

    def lm_eval(requests):
        harness = bg.lm_eval_harness(loaded.model, loaded.tokenizer, on_gpu)
        encoded = CausalScorer(loaded, Settings(progress=False)).encode_many(requests)
        reqs = [(("", ""), list(e.ids[:e.first]), list(e.ids[e.first:])) for e in encoded]
        return lambda part=None: [x[0] for x in harness._loglikelihood_tokens(reqs[:part] if part else reqs,
                                                                               disable_tqdm=True)]

    def section(key: str, requests, contenders: dict, baseline: str) -> None:
        title = next(t for t in estimate if t.startswith(gpu_plan.SECTIONS[key]))
        print(f"{title}: planned {estimate[title]:.0f} s")
        if args.until is not None and time.time() > args.until:
            print("  skipped: the time budget is spent")
            return
        began = time.time()
        match = spread.Contest()
        for name, fn in contenders.items():
            fn(max(1, len(requests) // 4))  # warm-up (kernels, allocator, compilation)
            match.add(name, synced(fn))
        bg.peak_memory_gib(reset=True)
        match.run(args.rounds)
        reference = match.values[baseline]
        for name in contenders:
            median = match.median(name)
            diff = max(abs(a - b) for a, b in zip(match.values[name], reference))
            versus = "" if name == baseline else f"  {match.against(baseline, name)} {baseline}"
            print(f"  {name:<10} {spread.describe(match.seconds[name])}  {len(requests) / median:9,.0f} req/s"
                  f"  max |diff| vs {baseline} {diff:.1e}{versus}")
        for name in contenders:
            if name not in (baseline, "default") and "default" in contenders:
                print(f"  default vs {name}: {match.against(name, 'default')}")
        memory = bg.peak_memory_gib(reset=True)
        print(f"  section: {time.time() - began:.0f} s (planned {estimate[title]:.0f} s)"
              + ("" if memory is None else f", peak {memory:.1f} GiB"))

    section("plain", plain, {"loop": loop(loaded.model), "lm-eval": lm_eval(plain),
                             "default": engine(loaded, plain)}, "loop")
    template = bg.template_requests(texts[:args.m])
    section("template", template, {"none": engine(loaded, template, share="none"),
                                   "default": engine(loaded, template)}, "none")
    if args.until is None or time.time() <= args.until:
        nf4 = LoadedModel.wrap(bg.nf4_copy(loaded.model), loaded.tokenizer, name=f"{loaded.name}-nf4")
        section("nf4", plain, {"loop": loop(nf4.model), "default": engine(nf4, plain)}, "loop")
        del nf4
        if on_gpu:
            torch.cuda.empty_cache()
    else:
        section("nf4", plain, {}, "loop")
    primed = bg.primed_requests(loaded, args.priming_pairs, args.prefix_tokens)
    section("priming", primed, {"none": engine(loaded, primed, share="none"), "default": engine(loaded, primed)},
            "none")
    print(f"# {time.time() - started:.0f} s in all; load average after: {spread.load_average()}")
    print("targets (one H100 or H200, random Llama 3 8B, bf16): plain LP default >= 1.6x the loop and >= 2x "
          "lm-eval; in-template >= 3.5x and priming >= 1.8x no reuse; NF4 default >= 1.5x the NF4 loop")


if __name__ == "__main__":
    main()
