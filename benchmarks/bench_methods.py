"""The whole 02 + 03 method set through the runner, with reuse on and off.

Runs the methods through a run (``helpers.runs.run.Run.files``, what notebooks 02 and 03 call) for every readout and
prompting method and all their templates on the first ``--limit`` BLiMP pairs per paradigm
(30: 2,010 pairs) with demo-en, once per share mode, each into an empty score store, and
prints wall time, tokens fed to the model and forward calls, with the ratios to no reuse, and
the largest difference of any score column against the no-reuse run (the released Yes/No
ratio of raw logits apart: it is ill-conditioned), then where the time went: tokenizing,
planning, running rows through the model (what sharing prefixes cuts), the head (vocabulary
log-softmax at the positions read: fewer where a shared position serves several requests,
as a prompt does for its answer options) and the rest. "ab" (A/B
decided by outlines' constrained decoding, a generation loop outside this engine) is left
out; "ab_logit" (the same prompts read by the engine) is in. One run each: run it on a
quiet machine.

    python benchmarks/bench_methods.py [--limit 30] [--model demo-en]
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
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

MODES = {"no reuse (share=none)": dict(share="none"),
         "pair prefixes (share=prefix, packing from 16)": dict(share="prefix", pack_min_stem=16),
         "default: trie per block (share=tree, packing from 0)": dict()}


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=30, help="BLiMP pairs per paradigm")
    ap.add_argument("--model", default="demo-en")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    selection = select("blimp", limit=args.limit)
    methods = [m for m in registry.READOUT_METHODS + registry.PROMPT_METHODS if m != "ab"]
    print(f"{args.model}, {len(selection.frame):,} BLiMP pairs, {len(methods)} methods ({', '.join(methods)}), "
          f"all templates; {args.threads} threads, one run each")
    base = None
    for name, options in MODES.items():
        scorer = CausalScorer(loaded, **scorer_arguments(options, Settings(progress=False)))
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            files = Run.of(scorer).files(methods, selection, store=ScoreStore(folder), use_outlines=False)
            seconds = time.perf_counter() - start
            scores = score_columns(files)
        row = dict(seconds=seconds, tokens=scorer.tokens_run, calls=scorer.forward_calls, stages=scorer.seconds)
        base = base or (row, scores)
        print(f"  {name:<46} {seconds:7.1f} s ({base[0]['seconds'] / seconds:4.2f}x faster)  "
              f"{row['tokens']:>10,} tokens ({row['tokens'] / base[0]['tokens']:.2f}x)  "
              f"{row['calls']:>6,} forward calls  {len(files)} files  max |diff| {max_difference(scores, base[1]):.1e} "
              f"({ILL_CONDITIONED}: {max_difference(scores, base[1], ratio=True):.1e})")
        stages, before = row["stages"], base[0]["stages"]
        other = seconds - sum(stages.values())
        print(f"    of which: tokenizing {stages['encode']:.1f} s, planning {stages['plan']:.1f} s, "
              f"rows {stages['rows']:.1f} s ({stages['rows'] / before['rows']:.2f}x no reuse's, for "
              f"{row['tokens'] / base[0]['tokens']:.2f}x tokens), head {stages['head']:.1f} s "
              f"({stages['head'] / before['head']:.2f}x), methods and files {other:.1f} s")


if __name__ == "__main__":
    main()
