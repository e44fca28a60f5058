"""How the engine's plan (helpers.engine.plan.build_tree) scales with the number of requests.

Encodes the first N BLiMP pairs inside in-template LP template 1 (every request shares the
template prefix, as in a full 02_readout run) with the demo model's tokenizer, and times
build_tree for growing N. Prints the time per request at each N and its ratio to the
smallest N: near 1 means the plan grows linearly; a quadratic plan shows a ratio near
N / N_smallest (the full 67,000-pair run is 134,000 requests under one template).

    python benchmarks/bench_plan.py [--model demo-en] [--sizes 2000 8000 32000 134000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import data  # noqa: E402
from helpers import methods as registry  # noqa: E402
from helpers.engine.plan import build_tree  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.scoring import Scorer  # noqa: E402
from helpers.methods import Runtime  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000, 134000])
    args = ap.parse_args()
    scorer = Scorer(load(args.model), progress=False)
    family = registry.get("intemplate_lp").family
    runtime = Runtime(scorer, "en", instruct=False)
    template = family.templates("en", "base", [1])[0]
    items = data.load("blimp").to_dict("records")
    requests = [r for item in items for r in family.requests(item, template, "", runtime, None)]
    encoded = scorer.encode_many(requests[:max(args.sizes)])
    print(f"{args.model}; in-template LP template 1; {len(encoded):,} requests encoded")
    base = None
    for n in sorted(args.sizes):
        part = encoded[:n]
        start = time.perf_counter()
        build_tree(part, [1] * n, share=scorer.share, min_shared=scorer.min_shared)
        per = (time.perf_counter() - start) / n
        base = base or per
        print(f"N={n:>7,}: {per * n:7.2f} s, {1e6 * per:6.1f} us/request, {per / base:5.2f}x the per-request "
              f"time at N={min(args.sizes):,} (a quadratic plan: {n / min(args.sizes):.0f}x)")


if __name__ == "__main__":
    main()
