"""The engine's default on the three workloads of bench_scoring (Yes/No, in-template LP, plain LP;
the benchmark GPT-2) at two or more checkouts of the project, run in turns so that a slow spell
of the machine falls on each alike: whether a change of the code, not of the machine, moved a
figure. Each checkout is run in a fresh process with its own ``helpers`` (a ``git worktree`` of
an older commit; the old scorer API of before 2026-11-24 is read as well).

    git worktree add ../old 64f2eef
    OMP_NUM_THREADS=2 python benchmarks/bench_commits.py ../old . --rounds 2
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

RUN = r'''
import sys, time
root = sys.argv[1]
sys.path[:0] = [root, root + "/benchmarks"]
import torch
torch.set_num_threads(2)
from bench_scoring import build_model, blimp_sentences
from helpers.models import LoadedModel
try:
    from helpers.engine import CausalScorer, Request
    from helpers.settings import Settings
    from helpers.methods.answers import yes_no
    from helpers.methods.prompt_text import render
    from helpers.methods.templates import ide_templates
    make = lambda lm: CausalScorer(lm, Settings(progress=False))
except ImportError:  # the scorer API before 2026-11-24
    from helpers.scoring import Request, Scorer
    from helpers.answers import yes_no
    from helpers.prompt_text import render
    from helpers.templates import ide_templates
    make = lambda lm: Scorer(lm, progress=False)
model, tok = build_model()
lm = LoadedModel.wrap(model, tok, name="bench-gpt2")
texts = blimp_sentences(200)
yes, no = yes_no("en")
work = {"Yes/No": [Request(render(t, tok, instruct=False, sentence=s), a, separate=True)
                   for t in ide_templates("yn") for s in texts for a in (yes, no)],
        "in-template LP": [Request(t.split()[0], s + t.split()[1]) for t in ide_templates("single") for s in texts],
        "plain LP": [Request("", s) for s in blimp_sentences(1000)]}
scorer = make(lm)
for name, requests in work.items():
    scorer.score(requests)  # warm-up
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        scorer.score(requests)
        best = min(best, time.perf_counter() - t0)
    print(f"{name}\t{len(requests)}\t{best:.3f}")
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+", help="checkouts of the project (the first is the baseline)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    seconds: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for root in (args.roots if r % 2 == 0 else args.roots[::-1]):
            out = subprocess.run([sys.executable, "-c", RUN, str(Path(root).resolve())], env=env, text=True,
                                 capture_output=True, check=True).stdout
            for line in out.strip().splitlines():
                name, n, t = line.split("\t")
                seconds.setdefault((root, name), []).append(float(t))
                print(f"round {r + 1} {root}: {name} ({n} requests) {float(t):.3f} s", flush=True)
    base = args.roots[0]
    print("\nfastest over the rounds, and against the first checkout:")
    for (root, name), ts in seconds.items():
        print(f"  {root:<16} {name:<16} {min(ts):7.3f} s  {min(seconds[(base, name)]) / min(ts):5.2f}x")


if __name__ == "__main__":
    main()
