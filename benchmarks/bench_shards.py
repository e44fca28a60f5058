"""What sharding a dataset run costs: tokens and batches of the whole run against its K
shard jobs together.

A shard job plans the whole run and runs only the batches its pairs need (and those caching
what they read), so that its scores equal the unsharded run's bit for bit. A batch at the edge
of a shard serves both neighbours, and parts shared across blocks serve every shard: this
counts that overhead for LP over BLiMP (the 02 readout pass) with the demo model's tokenizer
and the default CausalScorer. Nothing is run through the model and nothing is timed (so no
repeats); printed with the machine, the load average before and after, and the commit.

    python benchmarks/bench_shards.py [--limit 1000] [--shards 2 4 8 16] [--share tree]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings  # noqa: E402

import spread  # noqa: E402

from helpers.data.selection import select  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402


def batch_tokens(executor, roots) -> dict[tuple, int]:
    """Tokens of every batch the whole run forms, by batch key."""
    from helpers.engine.rows import batch_key as _key

    sizes: dict[tuple, int] = {}

    def visit(nodes):
        for _, batches, children in executor._schedule(nodes):
            for batch in batches:
                sizes[_key(batch)] = sum(u.length for u in batch)
            if children:
                visit(children)

    visit(roots)
    return sizes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="demo-en")
    p.add_argument("--limit", type=int, default=1000, help="pairs per paradigm (1000: all of BLiMP)")
    p.add_argument("--shards", type=int, nargs="+", default=[2, 4, 8, 16])
    p.add_argument("--share", default="tree", choices=["none", "context", "prefix", "tree"])
    args = p.parse_args(argv)
    print(spread.header(sys.argv if argv is None else [sys.argv[0], *argv], HERE.parent), flush=True)
    selection = select("blimp", args.limit)
    scorer = CausalScorer(load(args.model), Settings(progress=False, share=args.share))
    requests = [Request("", item[side]) for item in selection.items() for side in ("good", "bad")]
    encoded = scorer.encode_many(requests)
    roots = scorer.plan(encoded)
    executor = scorer.executor
    sizes = batch_tokens(executor, roots)
    whole = sum(sizes.values())
    print(f"{len(selection)} pairs ({len(requests)} requests), share={args.share}, blocks of {executor.block} "
          f"requests: the whole run is {len(sizes)} batches, {whole:,} tokens")
    print("| shards | batches, all jobs | tokens, all jobs | tokens vs one job |")
    print("|---|---|---|---|")
    for count in args.shards:
        batches = tokens = 0
        for index in range(1, count + 1):
            positions = selection.for_shards(index, count).shard.positions()
            needed = executor._needed_batches(roots, {2 * int(q) + k for q in positions for k in (0, 1)})
            batches += len(needed)
            tokens += sum(sizes[key] for key in needed)
        print(f"| {count} | {batches:,} | {tokens:,} | {tokens / whole:.3f}x |", flush=True)
    print(f"# load average after: {spread.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
