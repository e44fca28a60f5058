"""LP accuracy and per-pair decision agreement of a model in float32, bfloat16, 4-bit NF4 and
8-bit on a dataset, scored by the project's runner; writes a CSV and a markdown table, and with
``--card`` records the table in the demo model's training.json and card (README.md).

    nice -n 10 python scripts/precision_table.py --model demo-en --dataset blimp --card
    python scripts/precision_table.py --model demo-en --dataset blimp --limit 5   # a quick estimate

Scores go to outputs/precision/<model>/<dataset>/<precision>/ (one score store per precision,
so that a run cut short resumes with the precisions it finished).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import paths  # noqa: E402
from helpers.zoo.model_card import update_card_precision  # noqa: E402
from helpers.zoo.precision import PRECISIONS, REFERENCE, compare, markdown, run_precision  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="demo-en")
    p.add_argument("--dataset", default="blimp")
    p.add_argument("--limit", type=int, default=None, help="pairs per paradigm (default: all)")
    p.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=list(PRECISIONS))
    p.add_argument("--out", default=None, help="folder for the stores and tables (default outputs/precision/...)")
    p.add_argument("--card", action="store_true", help="record the table in the demo model's card")
    p.add_argument("--why-subset", default=None, help="with --limit and --card: why not every pair (shown in the card)")
    args = p.parse_args(argv)
    names = [REFERENCE] + [n for n in args.precisions if n != REFERENCE]
    out = Path(args.out) if args.out else paths.outputs() / "precision" / args.model / args.dataset
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in names:
        run = run_precision(args.model, args.dataset, name, out / "scores", args.limit)
        print(f"{name}: {len(run.scores)} pairs, LP accuracy {100 * run.scores['correct'].mean():.2f}%, "
              f"{run.seconds:.0f} s", flush=True)
        runs.append(run)
    table = compare(runs)
    stem = f"precision_table{'' if args.limit is None else f'_limit{args.limit}'}"
    table.to_csv(out / f"{stem}.csv", index=False)
    text = markdown(table)
    (out / f"{stem}.md").write_text(text + "\n")
    print(text)
    print(f"wrote {out / stem}.csv and .md")
    if args.card:
        settings = {"model": args.model, "dataset": args.dataset, "limit": args.limit, "machine": machine(),
                    "why_subset": args.why_subset}
        print(f"wrote {update_card_precision(args.model, table, settings)}")
    return 0


def machine() -> str:
    import platform

    import torch
    return (f"{platform.machine()}, {torch.get_num_threads()} CPU thread(s), torch {torch.__version__}"
            + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))


if __name__ == "__main__":
    raise SystemExit(main())
