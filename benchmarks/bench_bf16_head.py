"""What the float32 head changes in bfloat16: decisions against float32, with the head in the model's
dtype (before) and in float32 (after), in one run.

Scores BLiMP (the first N pairs per paradigm, default 20: 1,340 pairs) with LP, in-template LP and
Yes/No (template 1 each) three times: the model in float32, in bfloat16 with its vocabulary head
rounded to bfloat16 (the engine before the float32 head), and in bfloat16 with the float32 head
(:class:`helpers.engine.projection.Projection`). Prints, per method, the decisions that differ
from float32's, the exact ties, and the largest score change. Nothing is timed (so no repeats);
printed with the machine, the load average before and after, and the commit.

    python benchmarks/bench_bf16_head.py [--model demo-en] [--limit 20] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers.data.selection import select  # noqa: E402
from helpers.engine import scorer_for  # noqa: E402
from helpers.engine.projection import rounded_head  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.runs.run import Run  # noqa: E402
from helpers.store import ScoreStore, load_files  # noqa: E402
import spread  # noqa: E402

METHODS = ["lp", "intemplate_lp", "yesno"]


def scores(model, selection, folder: Path):
    files = Run.of(scorer_for(model, Settings(progress=False, share="none"))).files(
        METHODS, selection, store=ScoreStore(folder), templates=[1])
    return load_files(files).set_index(["method", "paradigm", "pair_id"]).sort_index()


def decisions(frame) -> np.ndarray:
    """+1 where the acceptable sentence scores higher, -1 where the unacceptable one does, 0 on a tie."""
    return np.sign(frame.score_good.to_numpy() - frame.score_bad.to_numpy())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    torch.set_num_threads(args.threads)
    selection = select("blimp", args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"float32": scores(load(args.model, quant=None, dtype=torch.float32), selection, Path(tmp) / "f32")}
        bf16 = load(args.model, quant=None, dtype=torch.bfloat16)
        with rounded_head():  # the head in the model's dtype
            runs["bf16, bf16 head"] = scores(bf16, selection, Path(tmp) / "bf16-head")
        runs["bf16, float32 head"] = scores(bf16, selection, Path(tmp) / "f32-head")
    reference = runs["float32"]
    print(f"{args.model}, BLiMP {len(selection):,} pairs ({args.limit} per paradigm), template 1, share none, "
          f"{args.threads} threads")
    print(f"{'method':<15}{'run':<22}{'flips vs float32':>18}{'ties':>6}{'agree %':>9}{'max |score change|':>20}")
    for method in METHODS:
        ref = reference.loc[method]
        print(f"{method:<15}{'float32':<22}{'':>18}{int(ref.tie.sum()):>6}")
        for name in ("bf16, bf16 head", "bf16, float32 head"):
            run = runs[name].loc[method]
            flips = int((decisions(run) != decisions(ref)).sum())  # acceptable / unacceptable / tie
            change = float(np.max(np.abs(np.r_[run.score_good - ref.score_good, run.score_bad - ref.score_bad])))
            print(f"{'':<15}{name:<22}{flips:>18}{int(run.tie.sum()):>6}{100 * (1 - flips / len(ref)):>9.2f}"
                  f"{change:>20.4g}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
