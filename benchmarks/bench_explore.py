"""What the results explorer costs on a store of BLiMP's size: build time, the page's size and
the size of the item files a browser loads when a paradigm is opened.

The store is made up (no model runs): every BLiMP pair (67 paradigms, 67,000 pairs, from
data/processed) for each model, with LP, MeanLP, PenLP (token log-probs of the model's own
tokenizer, random values) and in-template LP and Yes/No at five templates each: 13 score
files per model. The explorer reads it like any store (tokenizers included).

    python benchmarks/bench_explore.py [--models demo-en tiny-gpt2] [--limit 1000]

demo-en's tokenizer (8,192 tokens) spells a BLiMP sentence of 7.4 words in 12.8 tokens on average,
tiny-gpt2's (900) in 31.5: its item files are the larger ones.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from helpers.data.selection import select  # noqa: E402
from helpers.explore import build  # noqa: E402
from helpers.explore.tokens import tokenizer_for  # noqa: E402
from helpers.store import ScoreStore  # noqa: E402

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
    """The build alone, in its own process: its time and peak memory."""
    explorer = build(root, out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"build: {explorer.seconds:.1f} s for {explorer.files} score files, {explorer.rows:,} scored rows; "
          f"peak memory {peak:.2f} GiB; load average {os.getloadavg()[0]:.1f} (1 min)")


def main() -> None:
    if sys.argv[1:2] == ["--build-only"]:
        return build_only(*sys.argv[2:4])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["demo-en", "tiny-gpt2"])
    ap.add_argument("--limit", type=int, default=None, help="pairs per paradigm (default: all, 1,000)")
    ap.add_argument("--no-browser", action="store_true", help="skip the timing in headless Chromium")
    args = ap.parse_args()
    frame = select("blimp", args.limit).frame
    with tempfile.TemporaryDirectory() as tmp:
        root, out = Path(tmp) / "scores", Path(tmp) / "explore"
        started = time.perf_counter()
        for k, model in enumerate(args.models):
            write_model(ScoreStore(root), frame, model, k)
        print(f"# store: {len(frame):,} pairs x {len(args.models)} models x 13 files, written in "
              f"{time.perf_counter() - started:.0f} s ({folder_size(root) / 2**20:.1f} MiB); {os.cpu_count()} CPUs")
        child = subprocess.run([sys.executable, __file__, "--build-only", str(root), str(out)], check=True,
                               capture_output=True, text=True)
        print(child.stdout.strip())
        items = sorted((out / "items").rglob("*.js"), key=lambda p: p.stat().st_size)
        sizes = np.array([p.stat().st_size for p in items])
        print(f"index.html: {(out / 'index.html').stat().st_size / 2**10:.0f} KiB; figures: "
              f"{folder_size(out / 'figures') / 2**10:.0f} KiB; whole folder: {folder_size(out) / 2**20:.1f} MiB")
        print(f"item files: {len(items)}, {sizes.sum() / 2**20:.1f} MiB in all")
        for model in args.models:
            mine = np.array([p.stat().st_size for p in items if p.parent.name == model])
            print(f"  {model}: per paradigm median {np.median(mine) / 2**10:.0f} KiB, largest {mine.max() / 2**10:.0f} KiB")
        if not args.no_browser:
            in_browser(out, items[-1])


def in_browser(out: Path, largest: Path) -> None:
    """Seconds from asking for the largest paradigm (from file://) to its table of pairs, and from a
    click on a pair to its bars, in headless Chromium (median of 3)."""
    from helpers.explore.page import read_data
    from helpers.explore.snapshot import chromium, wait_for

    path = largest.relative_to(out).as_posix()
    (dataset, model, paradigm), = [(d, m, p) for d, models in read_data(out / "index.html")["items"].items()
                                   for m, files in models.items() for p, f in files.items() if f == path]
    address = "#items/" + "/".join(quote(x, safe="") for x in (dataset, model, paradigm))
    driver = chromium()
    table, item = [], []
    try:
        for _ in range(3):
            driver.get("about:blank")
            started = time.perf_counter()
            driver.get((out / "index.html").resolve().as_uri() + address)
            rows = wait_for(driver, "#pairs-table tbody tr", poll=0.01)
            table.append(time.perf_counter() - started)
            started = time.perf_counter()
            rows[-1].click()
            wait_for(driver, "#item-view svg.bars-tok-good", poll=0.01)
            item.append(time.perf_counter() - started)
    finally:
        driver.quit()
    print(f"headless Chromium, from file://: {paradigm} of {model} ({len(rows):,} pairs, "
          f"{largest.stat().st_size / 2**10:.0f} KiB): its table in {statistics.median(table):.2f} s, a pair's "
          f"bars in {statistics.median(item):.2f} s after the click (median of 3)")


if __name__ == "__main__":
    main()
