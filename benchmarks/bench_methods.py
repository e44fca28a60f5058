"""The whole 02 + 03 method set through the runner, with reuse on and off.

Runs the methods through a run (``helpers.runs.run.Run.files``, what notebooks 02 and 03 call) for every readout and
prompting method and all their templates on the first ``--limit`` BLiMP pairs per paradigm
(30: 2,010 pairs) with demo-en, with each share mode, each run with a fresh scorer into an empty
score store; the modes run interleaved (benchmarks/spread.py: in turn, the order reversed every
other round), ``--repeats`` times each (at least 5). Prints each mode's median wall time with
its range and its speed-up against no reuse (the median of the per-round ratios, with their
range), tokens fed to the model and forward calls a run, with the ratio to no reuse, and the
largest difference of any score column against the no-reuse run (the released Yes/No ratio of
raw logits apart: it is ill-conditioned), then where the time went (medians over the runs): tokenizing,
planning, running rows through the model (what sharing prefixes cuts), the head (vocabulary
log-softmax at the positions read: fewer where a shared position serves several requests,
as a prompt does for its answer options) and the rest. "ab" (A/B
decided by outlines' constrained decoding, a generation loop outside this engine) is left
out; "ab_logit" (the same prompts read by the engine) is in. With the machine, the load
average before and after, and the commit.

    python benchmarks/bench_methods.py [--limit 30] [--model demo-en] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings, scorer_arguments  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from helpers import methods as registry  # noqa: E402
from helpers.data.selection import select  # noqa: E402
from helpers.models import load  # noqa: E402
from helpers.store import ScoreStore  # noqa: E402
from helpers.runs.run import Run  # noqa: E402
from helpers.engine import CausalScorer  # noqa: E402
import spread  # noqa: E402

MODES = {"no reuse (share=none)": dict(share="none"),
         "pair prefixes (share=prefix, packing from 16)": dict(share="prefix", pack_min_stem=16),
         "default (share=auto)": dict()}


def score_columns(files: list[Path]) -> dict[str, pd.DataFrame]:
    """Each score file's numeric columns, by file name."""
    return {f.name: pd.read_parquet(f).select_dtypes("number") for f in files}


# logit(Yes) / (logit(Yes) + logit(No)) of raw logits: a ratio that explodes where the two
# logits nearly cancel, so float32 rounding shows there in the third decimal; compared apart
ILL_CONDITIONED = "yesno_released"


def max_difference(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame], ratio: bool = False) -> float:
    """Largest absolute difference of a score column between two runs' files (``ratio``: only
    the ill-conditioned released Yes/No ratio's files; else all the others)."""
    if sorted(a) != sorted(b):
        raise RuntimeError(f"the runs wrote different files: {sorted(set(a) ^ set(b))}")
    keys = [k for k in a if k.startswith(ILL_CONDITIONED) == ratio]
    return max((float(np.nanmax(np.abs(a[k].to_numpy(float) - b[k].to_numpy(float)), initial=0.0)) for k in keys),
               default=0.0)


def one_run(loaded, methods: list[str], selection, options: dict) -> dict:
    """One run with a fresh scorer into an empty score store: its seconds, tokens, forward calls,
    where the time went, and its files' score columns."""
    scorer = CausalScorer(loaded, **scorer_arguments(options, Settings(progress=False)))
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        files = Run.of(scorer).files(methods, selection, store=ScoreStore(folder), use_outlines=False)
        seconds = time.perf_counter() - start
        scores = score_columns(files)
    return dict(seconds=seconds, tokens=scorer.tokens_run, calls=scorer.forward_calls, stages=dict(scorer.seconds),
                scores=scores)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=30, help="BLiMP pairs per paradigm")
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    selection = select("blimp", limit=args.limit)
    methods = [m for m in registry.READOUT_METHODS + registry.PROMPT_METHODS if m != "ab"]
    print(f"{args.model}, {len(selection.frame):,} BLiMP pairs, {len(methods)} methods ({', '.join(methods)}), "
          f"all templates; {args.threads} threads, {args.repeats} interleaved runs each")
    runs: dict[str, list[dict]] = {name: [] for name in MODES}
    scores: dict[str, dict[str, pd.DataFrame]] = {}  # each mode's last run's

    def contender(name: str):
        def run() -> float:
            row = one_run(loaded, methods, selection, MODES[name])
            scores[name] = row.pop("scores")
            runs[name].append(row)
            return row["seconds"]
        return run

    seconds = spread.rounds({name: contender(name) for name in MODES}, args.repeats)
    first = next(iter(MODES))

    def median(name: str, value) -> float:
        return float(np.median([value(row) for row in runs[name]]))

    for name in MODES:
        tokens, before = runs[name][-1]["tokens"], runs[first][-1]["tokens"]
        print(f"  {name:<46} {spread.describe(seconds[name])}, {spread.describe_ratio(seconds[first], seconds[name])} "
              f"faster;  {tokens:>10,} tokens ({tokens / before:.2f}x)  {runs[name][-1]['calls']:>6,} forward calls  "
              f"{len(scores[name])} files  max |diff| {max_difference(scores[name], scores[first]):.1e} "
              f"({ILL_CONDITIONED}: {max_difference(scores[name], scores[first], ratio=True):.1e})")
        stage = {k: median(name, lambda r, k=k: r["stages"][k]) for k in ("encode", "plan", "rows", "head")}
        base = {k: median(first, lambda r, k=k: r["stages"][k]) for k in ("rows", "head")}
        other = median(name, lambda r: r["seconds"] - sum(r["stages"].values()))
        print(f"    of which (medians): tokenizing {stage['encode']:.1f} s, planning {stage['plan']:.1f} s, "
              f"rows {stage['rows']:.1f} s ({stage['rows'] / base['rows']:.2f}x no reuse's, for "
              f"{tokens / before:.2f}x tokens), head {stage['head']:.1f} s "
              f"({stage['head'] / base['head']:.2f}x), methods and files {other:.1f} s")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
