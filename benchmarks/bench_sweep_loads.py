"""Model loads and wall time of a sweep as users run it, this checkout against an earlier one,
interleaved (benchmarks/spread.py: round r runs the checkouts in turn, the order reversed every
other round; each round in fresh outputs folders, the processed data shared and prepared first).

Per round and checkout: the sweep of 02 and 03 over two models and two datasets (small limits),
timed as one command; its model loads (this checkout: the "loaded <model>" lines of its executed
notebooks; a checkout before the deferred scorer loads its model in every scoring notebook, so
its loads are its scoring notebooks); the same sweep again (finished: every job skipped); and
02 run again by papermill on a finished run (before: it loads the model; now: none). Then the load
time of SmolLM2's GGUF file (dequantized) and of a model in 4-bit NF4 on this machine, medians of
five loads, for the paper estimate of a 70B model.

    git worktree add ../before c18d3f3
    OMP_NUM_THREADS=2 python benchmarks/bench_sweep_loads.py ../before . --rounds 5
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402

MODELS, DATASETS = ["demo-en", "smollm2-135m-instruct"], ["blimp", "climp"]
SWEEP = ["-m", "helpers", "sweep", "--notebooks", "02", "03", "--models", *MODELS, "--datasets", *DATASETS,
         "-p", "limit=1", "-p", "02:methods=lp,meanlp,penlp", "-p", "03:methods=yesno", "-p", "03:hu_levy_sets=none",
         "-p", "03:fewshot_ks=[]", "-p", "03:outlines_sample=0", "--templates", "1"]
LOAD = r'''
import sys, time, statistics
sys.path.insert(0, sys.argv[1])
from helpers.models import load
seconds = {}
for name, quant in (("smollm2-135m-instruct", None), ("demo-en", "4bit")):
    runs = []
    for _ in range(5):
        start = time.perf_counter(); model = load(name, quant=quant); runs.append(time.perf_counter() - start)
        count = sum(p.numel() for p in model.model.parameters()); del model
    seconds[f"{name} ({quant or 'GGUF Q4_1, dequantized'}; {count / 1e6:.0f}M parameters)"] = runs
for k, v in seconds.items():
    print(f"  load {k}: median {statistics.median(v):.2f} s (range {min(v):.2f}-{max(v):.2f}, 5 loads)")
'''


def _env(outputs: Path, processed: Path, root: Path) -> dict:
    """The environment of a checkout's commands: its own ``helpers`` first (the notebooks' kernels
    too, before an editable install of another checkout), offline, outputs and processed data given."""
    return {**os.environ, "PYTHONPATH": str(root), "HELPERS_OUTPUTS_DIR": str(outputs),
            "HELPERS_PROCESSED_DIR": str(processed), "HF_HUB_OFFLINE": "1", "TORCHDYNAMO_DISABLE": "1"}


def _timed(args: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} failed in {cwd}:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def loads(outputs: Path) -> tuple[int, int]:
    """(notebooks that loaded a model, scoring notebooks run) of a sweep's executed notebooks."""
    loaded = scoring = 0
    for path in (outputs / "notebooks").glob("0[23]_*.ipynb"):
        text = json.dumps(json.loads(path.read_text())["cells"])
        scoring += 1
        loaded += any(f"loaded {m} (" in text for m in MODELS)
    return loaded, scoring


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs=2, help="the earlier checkout, then this one")
    parser.add_argument("--rounds", type=int, default=spread.MIN_REPEATS)
    args = parser.parse_args(argv)
    before, now = (Path(c).resolve() for c in args.checkouts)
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    processed = work / "processed"
    print(spread.header(sys.argv, now))
    print(f"# checkouts: before {spread.commit(before)}, now {spread.commit(now)}")
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from helpers.data import "
                    "load_processed; [load_processed(d) for d in sys.argv[2:]]", str(now), *DATASETS],
                   env=_env(work / "prep", processed, now), check=True)
    counted: dict[str, list] = {"before": [], "now": []}
    finished: dict[str, list[float]] = {"before": [], "now": []}
    rerun: dict[str, list[float]] = {"before": [], "now": []}
    runs = {"before": 0, "now": 0}

    def contender(name: str, root: Path):
        def once() -> float:
            runs[name] += 1
            outputs = work / f"{name}-{runs[name]}"
            env = _env(outputs, processed, root)
            seconds = _timed(SWEEP, root, env)
            counted[name].append(loads(outputs) if name == "now" else (loads(outputs)[1],) * 2)
            finished[name].append(_timed(SWEEP, root, env))
            notebook = outputs / "notebooks" / "02_rerun.ipynb"
            rerun[name].append(_timed(["-m", "papermill", "--no-progress-bar", "-k", "python3", "--cwd",
                                       str(root / "notebooks"), str(root / "notebooks" / "02_readout.ipynb"),
                                       str(notebook), "-p", "model", MODELS[1], "-p", "dataset", DATASETS[0],
                                       "-p", "limit", "1", "-p", "methods", "lp,meanlp,penlp", "-p", "templates",
                                       "[1]"], root, env))
            shutil.rmtree(outputs, ignore_errors=True)
            return seconds
        return once

    seconds = spread.rounds({"before": contender("before", before), "now": contender("now", now)}, args.rounds)
    print(f"sweep of 02 and 03 over {', '.join(MODELS)} x {', '.join(DATASETS)} (limit 1), {args.rounds} rounds:")
    for name in ("before", "now"):
        loaded, scoring = counted[name][0]
        print(f"  {name}: {spread.describe(seconds[name])}; {loaded} model loads for {scoring} scoring notebooks "
              f"(the same every round: {len(set(map(tuple, counted[name]))) == 1}); the finished sweep again: "
              f"{spread.describe(finished[name])}; 02 again on its stored scores (papermill): "
              f"{spread.describe(rerun[name])}")
    print(f"  the sweep, now against before: {spread.describe_ratio(seconds['before'], seconds['now'])}; 02 again: "
          f"{spread.describe_ratio(rerun['before'], rerun['now'])}")
    subprocess.run([sys.executable, "-c", LOAD, str(now)], env=_env(work / "load", processed, now), check=True)
    print(f"# load average after: {spread.load_average()}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
