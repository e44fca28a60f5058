"""What the results explorer costs on a store of BLiMP's size: build time, the page's size and
the size of the item files a browser loads when a paradigm is opened, and how long a browser
takes to show them.

The store is made up (no model runs): every BLiMP pair (67 paradigms, 67,000 pairs, from
data/processed) for each model, with LP, MeanLP, PenLP (token log-probs of the model's own
tokenizer, random values) and in-template LP and Yes/No at five templates each: 13 score
files per model. The explorer reads it like any store (tokenizers included).

The build runs ``--repeats`` times (at least 5; benchmarks/spread.py), each in a fresh process
into an empty folder, and so does the browser's opening of the largest paradigm: each its median
time with its range (one contender each, so nothing to interleave). With the machine, the load
average before and after, and the commit.

    python benchmarks/bench_explore.py [--models demo-en tiny-gpt2] [--limit 1000] [--repeats 5]

demo-en's tokenizer (8,192 tokens) spells a BLiMP sentence of 7.4 words in 12.8 tokens on average,
tiny-gpt2's (900) in 31.5: its item files are the larger ones.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from helpers.data.selection import select  # noqa: E402
from helpers.explore import build  # noqa: E402
from helpers.explore.tokens import tokenizer_for  # noqa: E402
from helpers.store import ScoreStore  # noqa: E402
import spread  # noqa: E402

METHODS = {"lp": [None], "meanlp": [None], "penlp": [None], "intemplate_lp": [1, 2, 3, 4, 5], "yesno": [1, 2, 3, 4, 5]}


def write_model(store: ScoreStore, frame, model: str, seed: int) -> None:
    """A made-up run of ``model`` on ``frame`` (a BLiMP selection): 13 score files."""
    tokenizer, why = tokenizer_for({"model_name": model})
    if tokenizer is None:
        raise SystemExit(f"no tokenizer for {model}: {why}")
    rng = np.random.default_rng(seed)
    info = frame[["dataset", "paradigm", "phenomenon", "pair_id"]].reset_index(drop=True)
    ids = {side: tokenizer(frame[side].tolist(), add_special_tokens=False)["input_ids"] for side in ("good", "bad")}
    lps = {side: [-rng.gamma(2.0, 3.0, len(x)) for x in ids[side]] for side in ("good", "bad")}
    for method, templates in METHODS.items():
        for template in templates:
            good, bad = rng.normal(-40, 8, len(info)), rng.normal(-41, 8, len(info))
            out = info.assign(score_good=good, score_bad=bad, correct=good > bad, tie=good == bad,
                              n_tokens_good=[len(x) for x in ids["good"]], n_tokens_bad=[len(x) for x in ids["bad"]])
            if template is None:
                out = out.assign(token_lp_good=lps["good"], token_ids_good=ids["good"], token_lp_bad=lps["bad"],
                                 token_ids_bad=ids["bad"])
            config = {"model_name": model, "method": method, "template_id": template, "dataset": "blimp",
                      "dataset_options": {}, "weights": f"made-up-{model}"}
            store.write(out, "blimp", model, method, template, config)


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build_only(root: str, out: str) -> None:
    """The build alone, in its own process: its seconds, files, rows and peak memory (GiB), tab-separated."""
    explorer = build(root, out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"{explorer.seconds}\t{explorer.files}\t{explorer.rows}\t{peak}")


def main() -> None:
    if sys.argv[1:2] == ["--build-only"]:
        return build_only(*sys.argv[2:4])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["demo-en", "tiny-gpt2"])
    ap.add_argument("--limit", type=int, default=None, help="pairs per paradigm (default: all, 1,000)")
    ap.add_argument("--no-browser", action="store_true", help="skip the timing in headless Chromium")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="runs of each timing (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    frame = select("blimp", args.limit).frame
    with tempfile.TemporaryDirectory() as tmp:
        root, out = Path(tmp) / "scores", Path(tmp) / "explore"
        started = time.perf_counter()
        for k, model in enumerate(args.models):
            write_model(ScoreStore(root), frame, model, k)
        print(f"# store: {len(frame):,} pairs x {len(args.models)} models x 13 files, written in "
              f"{time.perf_counter() - started:.0f} s, one run: setup ({folder_size(root) / 2**20:.1f} MiB); "
              f"{os.cpu_count()} CPUs")
        builds: list[list[float]] = []

        def build_once() -> float:
            shutil.rmtree(out, ignore_errors=True)
            child = subprocess.run([sys.executable, __file__, "--build-only", str(root), str(out)], check=True,
                                   capture_output=True, text=True)
            builds.append([float(x) for x in child.stdout.strip().splitlines()[-1].split("\t")])
            return builds[-1][0]

        seconds = spread.rounds({"build": build_once}, args.repeats)["build"]
        peaks = [b[3] for b in builds]
        print(f"build, a fresh process each run: {spread.describe(seconds)} for {int(builds[-1][1])} score files, "
              f"{int(builds[-1][2]):,} scored rows; peak memory {min(peaks):.2f}-{max(peaks):.2f} GiB")
        items = sorted((out / "items").rglob("*.js"), key=lambda p: p.stat().st_size)
        sizes = np.array([p.stat().st_size for p in items])
        print(f"index.html: {(out / 'index.html').stat().st_size / 2**10:.0f} KiB; figures: "
              f"{folder_size(out / 'figures') / 2**10:.0f} KiB; whole folder: {folder_size(out) / 2**20:.1f} MiB")
        print(f"item files: {len(items)}, {sizes.sum() / 2**20:.1f} MiB in all")
        for model in args.models:
            mine = np.array([p.stat().st_size for p in items if p.parent.name == model])
            print(f"  {model}: per paradigm median {np.median(mine) / 2**10:.0f} KiB, largest {mine.max() / 2**10:.0f} KiB")
        if not args.no_browser:
            in_browser(out, items[-1], args.repeats)
    print(f"# load average after: {spread.load_average()}")


def in_browser(out: Path, largest: Path, repeats: int) -> None:
    """Seconds from asking for the largest paradigm (from file://) to its table of pairs, and from a
    click on a pair to its bars, in headless Chromium (``repeats`` runs: medians and ranges)."""
    from helpers.explore.page import read_data
    from helpers.explore.snapshot import chromium, wait_for

    path = largest.relative_to(out).as_posix()
    (dataset, model, paradigm), = [(d, m, p) for d, models in read_data(out / "index.html")["items"].items()
                                   for m, files in models.items() for p, f in files.items() if f == path]
    address = "#items/" + "/".join(quote(x, safe="") for x in (dataset, model, paradigm))
    driver = chromium()
    item, shown = [], []

    def open_and_click() -> float:
        """The table's seconds (returned) and then the click's (kept in ``item``): one contender,
        as the click needs the table."""
        driver.get("about:blank")
        started = time.perf_counter()
        driver.get((out / "index.html").resolve().as_uri() + address)
        rows = wait_for(driver, "#pairs-table tbody tr", poll=0.01)
        table = time.perf_counter() - started
        started = time.perf_counter()
        rows[-1].click()
        wait_for(driver, "#item-view svg.bars-tok-good", poll=0.01)
        item.append(time.perf_counter() - started)
        shown.append(len(rows))
        return table

    try:
        table = spread.rounds({"table": open_and_click}, repeats)["table"]
    finally:
        driver.quit()
    print(f"headless Chromium, from file://: {paradigm} of {model} ({shown[-1]:,} pairs, "
          f"{largest.stat().st_size / 2**10:.0f} KiB): its table in {spread.describe(table)}, a pair's "
          f"bars in {spread.describe(item)} after the click")


if __name__ == "__main__":
    main()
