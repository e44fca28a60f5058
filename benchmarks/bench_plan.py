"""How the engine's plan (``CausalScorer.plan``: helpers.engine.plan.build_tree under the share mode) scales
with the number of requests.

Encodes the first N BLiMP pairs inside in-template LP template 1 (every request shares the
template prefix, as in a full 02_readout run; ``--method lp``: the sentences alone, plain LP) with
the demo model's tokenizer, and times the scorer's plan (the default ``share="auto"``: each
candidate's plan and batches of a sample, then the chosen mode's plan) for growing N: at each N
``--repeats`` runs (at least 5; benchmarks/spread.py, one contender, so nothing to interleave).
Prints the median time with its range, the time per request at the median and its ratio to the
smallest N's (the median of the per-round ratios, with their range): near 1 means the plan grows
linearly; a quadratic plan shows a ratio near N / N_smallest (the full 67,000-pair run is 134,000
requests under one template).

``--tokens`` instead counts, for the 02 and 03 method sets over the whole of BLiMP (every
family and template pass the runner makes), the tokens each share mode would run
(Executor.planned_tokens: the rows it forms, shared parts repeated per row included) against
the tree's minimum (distinct proper token prefixes of the pass: every shared prefix run
once, no sequence's last token fed).
Nothing is run through the model. Either way: the machine, the load average before and after,
and the commit.

    python benchmarks/bench_plan.py [--model demo-en] [--method intemplate_lp | lp] [--sizes 2000 8000 32000 134000]
        [--repeats 5]
    python benchmarks/bench_plan.py --tokens [--pairs 67000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings  # noqa: E402

from helpers import data  # noqa: E402
from helpers import methods as registry  # noqa: E402
from helpers.engine.plan import build_tree  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.engine import CausalScorer  # noqa: E402
from helpers.methods import PassContext  # noqa: E402
import spread  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--method", choices=["intemplate_lp", "lp"], default="intemplate_lp",
                    help="whose requests are planned (its first template)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000, 134000])
    ap.add_argument("--tokens", action="store_true", help="tokens per share mode against the tree's minimum")
    ap.add_argument("--pairs", type=int, default=None, help="first N BLiMP pairs (default all) for --tokens")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="runs at each size (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    scorer = CausalScorer(load(args.model), Settings(progress=False))
    if args.tokens:
        token_report(scorer, args.pairs)
    else:
        plan_times(scorer, args.sizes, args.repeats, args.model, args.method)
    print(f"# load average after: {spread.load_average()}")


def plan_times(scorer: CausalScorer, sizes: list[int], repeats: int, model: str, method: str) -> None:
    """The plan's time at each of ``sizes``, ``repeats`` runs each, against the smallest size's."""
    family = registry.get(method).family
    runtime = PassContext(scorer, "en", Settings(instruct=False))
    template = family.templates("en", "base", [1])[0]
    items = data.load("blimp").to_dict("records")
    requests = pass_requests(family, template, items, runtime)
    encoded = scorer.encode_many(requests[:max(sizes)])
    what = "in-template LP template 1" if template is not None else "plain LP"
    print(f"{model}; {what}; {len(encoded):,} requests encoded; share={scorer.share!r}; {repeats} runs at each N")
    base = None
    for n in sorted(sizes):
        part = encoded[:n]

        def plan() -> float:
            start = time.perf_counter()
            scorer.plan(part, with_context=family.with_context)
            return time.perf_counter() - start

        seconds = spread.rounds({"plan": plan}, repeats)["plan"]
        per = [t / n for t in seconds]
        base = base or per
        print(f"N={n:>7,}: {spread.describe(seconds)}, {1e6 * statistics.median(per):6.1f} us/request, "
              f"{spread.describe_ratio(per, base)} the per-request time at N={min(sizes):,} "
              f"(a quadratic plan: {n / min(sizes):.0f}x)")


def pass_requests(family, template, items: list[dict], runtime) -> list:
    """The requests of one family and template pass over ``items`` with no context, in order."""
    _, per_item = family.pass_requests(items, template, [""] * len(items), runtime)
    return [r for requests in per_item for r in requests]


def trie_minimum(encoded) -> int:
    """Tokens a perfect plan runs: the distinct proper prefixes of the sequences (each
    shared prefix once; a sequence's last token is predicted, never fed)."""
    return len({hash(e.ids[:i]) for e in encoded for i in range(1, len(e.ids))})  # hashes: bounded memory


def token_report(scorer: CausalScorer, pairs: int | None) -> None:
    frame = data.load("blimp")
    frame = frame if pairs is None else frame.head(pairs)
    items = frame.to_dict("records")
    runtime = PassContext(scorer, "en", Settings(instruct=False))
    modes = ("none", "context", "prefix", "tree")
    print(f"{len(items):,} BLiMP pairs; tokens each share mode would run / the tree's minimum "
          f"(distinct prefixes), per family and template pass")
    print(f"{'set':<4}{'pass':<22}{'requests':>10}{'minimum':>13}" + "".join(f"{m:>18}" for m in modes))
    for label, names in (("02", registry.READOUT_METHODS), ("03", registry.PROMPT_METHODS)):
        sums = dict.fromkeys(("minimum",) + modes, 0)
        families = {}
        for name in names:
            families.setdefault(registry.get(name).family, name)
        for family in families:
            for template in family.templates("en", "base", [1, 2, 3, 4, 5]):
                requests = pass_requests(family, template, items, runtime)
                encoded = scorer.encode_many(requests)
                need_from = [1 if family.with_context else e.first for e in encoded]
                counts = {"minimum": trie_minimum(encoded)}
                for mode in modes:
                    counts[mode] = scorer.executor.planned_tokens(
                        build_tree(encoded, need_from, share=mode, block=scorer.executor.block))
                for k, v in counts.items():
                    sums[k] += v
                name = family.name if template is None else f"{family.name} {template.id}"
                print(f"{label:<4}{name:<22}{len(encoded):>10,}{counts['minimum']:>13,}"
                      + "".join(f"{counts[m]:>12,} {counts[m] / counts['minimum']:4.2f}x" for m in modes))
        print(f"{label:<4}{'all passes':<22}{'':>10}{sums['minimum']:>13,}"
              + "".join(f"{sums[m]:>12,} {sums[m] / sums['minimum']:4.2f}x" for m in modes))


if __name__ == "__main__":
    main()
