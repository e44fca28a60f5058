"""The engine's default on the three workloads of bench_scoring (Yes/No, in-template LP, plain LP;
the benchmark GPT-2, or a random model of a real model's shape, ``--shape``) at two or more
checkouts of the project, interleaved (round r runs the checkouts in turn, the order reversed
every other round; each round a fresh process per checkout, warmed up once, timed once), at least
five rounds: whether a change of the code, not of the machine, moved a figure. Each checkout runs
its own ``helpers`` (a ``git worktree`` of an older commit; the old scorer API of before
2026-11-24 is read as well). Reported (benchmarks/spread.py): each checkout's median time and
range, and its speed-up against the first checkout as the median of the per-round ratios with
their range; the machine, the load average before and after, and each checkout's commit.

    git worktree add ../old 938802e
    OMP_NUM_THREADS=2 python benchmarks/bench_commits.py ../old . --rounds 5 [--shape gemma3-270m] [--share none] [--n 1000]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402

RUN = r'''
import sys, time
root, shape, share, only, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(","), int(sys.argv[5])
sys.path[:0] = [root, root + "/benchmarks"]
import torch
torch.set_num_threads(2)
import bench_scoring
from bench_scoring import build_model, blimp_sentences
from helpers.models import LoadedModel
try:
    from helpers.engine import CausalScorer, Request
    from helpers.settings import Settings
    from helpers.methods.answers import yes_no
    from helpers.methods.prompt_text import render
    from helpers.methods.templates import ide_templates
    make = lambda lm: CausalScorer(lm, Settings(progress=False, **({} if share == "auto" else {"share": share})))
except ImportError:  # the scorer API before 2026-11-24
    from helpers.scoring import Request, Scorer
    from helpers.answers import yes_no
    from helpers.prompt_text import render
    from helpers.templates import ide_templates
    make = lambda lm: Scorer(lm, progress=False, **({} if share == "auto" else {"share": share}))
model, tok = build_model()
if shape != "gpt2":
    model = bench_scoring.build_shape(shape, tok)
lm = LoadedModel.wrap(model, tok, name=f"bench-{shape}")
texts = blimp_sentences(200)
yes, no = yes_no("en")
work = {"Yes/No": lambda: [Request(render(t, tok, instruct=False, sentence=s), a, separate=True)
                           for t in ide_templates("yn") for s in texts for a in (yes, no)],
        "in-template LP": lambda: [Request(t.split()[0], s + t.split()[1]) for t in ide_templates("single")
                                   for s in texts],
        "plain LP": lambda: [Request("", s) for s in blimp_sentences(n)]}
scorer = make(lm)
for name in only:
    requests = work[name]()
    scorer.score(requests)  # warm-up
    t0 = time.perf_counter()
    scorer.score(requests)
    print(f"{name}\t{len(requests)}\t{time.perf_counter() - t0:.4f}")
'''
WORKLOADS = ("Yes/No", "in-template LP", "plain LP")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+", help="checkouts of the project (the first is the baseline)")
    ap.add_argument("--rounds", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved rounds (at least 5)")
    ap.add_argument("--shape", default="gpt2", help="gpt2 (the benchmark model) or a bench_scoring --shape")
    ap.add_argument("--share", default="auto", help="the engine's share mode (default: each checkout's default)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="of: " + ", ".join(WORKLOADS))
    ap.add_argument("--n", type=int, default=1000, help="BLiMP sentences for plain LP")
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    print(spread.header(sys.argv))
    for root in args.roots:
        print(f"# {root}: commit {spread.commit(root)}")

    def contender(root: str):
        def run() -> dict[str, float]:
            out = subprocess.run([sys.executable, "-c", RUN, str(Path(root).resolve()), args.shape, args.share,
                                  args.workloads, str(args.n)], env=env, text=True, capture_output=True, check=True).stdout
            return {line.split("\t")[0]: float(line.split("\t")[2]) for line in out.strip().splitlines()}
        return run

    found: dict[str, list[dict[str, float]]] = {root: [] for root in args.roots}
    times = spread.rounds({root: (lambda run=contender(root), root=root: found[root].append(run()) or 0.0)
                           for root in args.roots}, args.rounds)
    assert all(len(v) == args.rounds for v in times.values())
    base = args.roots[0]
    print(f"# load average after: {spread.load_average()}\n")
    print(f"{'checkout':<14} {'workload':<16} {'median time (range, runs)':<32} against {base}")
    for name in args.workloads.split(","):
        for root in args.roots:
            mine = [r[name] for r in found[root]]
            theirs = [r[name] for r in found[base]]
            print(f"{root:<14} {name:<16} {spread.describe(mine):<32} {spread.describe_ratio(theirs, mine)}")


if __name__ == "__main__":
    main()
