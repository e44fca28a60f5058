"""Model loads and wall time of a sweep as users run it, this checkout against an earlier one,
interleaved (benchmarks/spread.py: round r runs the checkouts in turn, the order reversed every
other round; each round in fresh outputs folders, each checkout's processed data prepared first
by its own code).

Per round and checkout: the sweep of 02, 03, 06 and 07 over two models and two datasets (BLiMP
and SyntaxGym, small limits; 06's SyntaxGym region test off, as c18d3f3's 06 stopped there at a
missing import; 07 in 3 distance bins, as its 10 leave SyntaxGym's 23 pairs 2 a bin, too few
for a correlation), timed as one command (before: two, since c18d3f3 planned 07 over datasets it
cannot read; this checkout reads blimp as 07's blimp_hu2025 in the one command; the jobs are the
same); its model loads (this checkout: the "loaded <model>" lines of its executed notebooks; a
checkout before the deferred scorer loads its model in every scoring notebook, so its loads are
its scoring notebooks); the same sweep again (finished: every job skipped); and 02 run again by
papermill on a finished run (before: it loads the model; now: none, counted). Then the load time
of SmolLM2's GGUF file (dequantized) and of a model in 4-bit NF4 on this machine, medians of five
loads, for the paper estimate of a 70B model.

    git worktree add ../before c18d3f3 && ln -s $PWD/data/cache ../before/data/cache
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

MODELS, DATASETS = ["demo-en", "smollm2-135m-instruct"], ["blimp", "syntaxgym"]
PREPARED = [*DATASETS, "blimp_hu2025"]  # 07 reads BLiMP as Hu et al.'s variant
NOTEBOOKS = ["02", "03", "06", "07"]
PARAMETERS = ["limit=1", "02:methods=lp,meanlp,penlp", "03:methods=yesno", "03:hu_levy_sets=none", "03:fewshot_ks=[]",
              "03:outlines_sample=0", "06:lengths=[0,100]", "06:phenomenon_sentences=0", "06:parser=none",
              "06:syntaxgym_regions=False", "07:extra_methods=none", "07:metrics=lp,meanlp", "07:bins=3"]


def sweeps(name: str) -> list[list[str]]:
    """The sweep's commands: this checkout's one; before, 02, 03 and 06 then 07 over the datasets it reads."""
    def command(notebooks, datasets):
        given = [p for p in PARAMETERS if ":" not in p.split("=")[0] or p.split(":")[0] in notebooks]
        return ["-m", "helpers", "sweep", "--notebooks", *notebooks, "--models", *MODELS, "--datasets", *datasets,
                *[a for p in given for a in ("-p", p)], "--templates", "1"]
    if name == "now":
        return [command(NOTEBOOKS, DATASETS)]
    return [command(NOTEBOOKS[:3], DATASETS), command(NOTEBOOKS[3:], ["blimp_hu2025", "syntaxgym"])]
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


def loaded(notebook: Path) -> bool:
    """Whether an executed notebook loaded a model (the deferred scorer's "loaded <model> (" line)."""
    text = json.dumps(json.loads(notebook.read_text())["cells"])
    return any(f"loaded {m} (" in text for m in MODELS)


def loads(outputs: Path) -> tuple[int, int]:
    """(notebooks that loaded a model, scoring notebooks run) of a sweep's executed notebooks."""
    run = sorted((outputs / "notebooks").glob("0[2367]_*.ipynb"))
    return sum(map(loaded, run)), len(run)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs=2, help="the earlier checkout, then this one")
    parser.add_argument("--rounds", type=int, default=spread.MIN_REPEATS)
    args = parser.parse_args(argv)
    before, now = (Path(c).resolve() for c in args.checkouts)
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    print(spread.header(sys.argv, now))
    print(f"# checkouts: before {spread.commit(before)}, now {spread.commit(now)}")
    for name, root in (("before", before), ("now", now)):  # each checkout's tables, by its own readers
        subprocess.run([sys.executable, "-c", "import sys; from helpers.data import load_processed; "
                        "[load_processed(d) for d in sys.argv[1:]]", *PREPARED],
                       env=_env(work / "prep", work / f"processed-{name}", root), cwd=root, check=True)
    counted: dict[str, list] = {"before": [], "now": []}
    finished: dict[str, list[float]] = {"before": [], "now": []}
    rerun: dict[str, list[float]] = {"before": [], "now": []}
    rerun_loads: dict[str, list[int]] = {"before": [], "now": []}
    runs = {"before": 0, "now": 0}

    def contender(name: str, root: Path):
        def once() -> float:
            runs[name] += 1
            outputs = work / f"{name}-{runs[name]}"
            env = _env(outputs, work / f"processed-{name}", root)
            seconds = sum(_timed(command, root, env) for command in sweeps(name))
            counted[name].append(loads(outputs) if name == "now" else (loads(outputs)[1],) * 2)
            finished[name].append(sum(_timed(command, root, env) for command in sweeps(name)))
            notebook = outputs / "notebooks" / "02_rerun.ipynb"
            rerun[name].append(_timed(["-m", "papermill", "--no-progress-bar", "-k", "python3", "--cwd",
                                       str(root / "notebooks"), str(root / "notebooks" / "02_readout.ipynb"),
                                       str(notebook), "-p", "model", MODELS[1], "-p", "dataset", DATASETS[0],
                                       "-p", "limit", "1", "-p", "methods", "lp,meanlp,penlp", "-p", "templates",
                                       "[1]"], root, env))
            rerun_loads[name].append(int(loaded(notebook)) if name == "now" else 1)
            shutil.rmtree(outputs, ignore_errors=True)
            return seconds
        return once

    seconds = spread.rounds({"before": contender("before", before), "now": contender("now", now)}, args.rounds)
    print(f"sweep of {', '.join(NOTEBOOKS)} over {', '.join(MODELS)} x {', '.join(DATASETS)} (limit 1), "
          f"{args.rounds} rounds:")
    for name in ("before", "now"):
        count, scoring = counted[name][0]
        print(f"  {name}: {spread.describe(seconds[name])}; {count} model loads for {scoring} scoring notebooks "
              f"(the same every round: {len(set(map(tuple, counted[name]))) == 1}); the finished sweep again: "
              f"{spread.describe(finished[name])}; 02 again on its stored scores (papermill): "
              f"{spread.describe(rerun[name])}, {max(rerun_loads[name])} model load(s)")
    print(f"  the sweep, now against before: {spread.describe_ratio(seconds['before'], seconds['now'])}; 02 again: "
          f"{spread.describe_ratio(rerun['before'], rerun['now'])}")
    subprocess.run([sys.executable, "-c", LOAD, str(now)], env=_env(work / "load", work / "processed-now", now),
                   check=True)
    print(f"# load average after: {spread.load_average()}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
