"""make report: notebooks 00-07 executed on the demo model with small limits, rendered to HTML
with an index page (helpers/sweep/examples.py).

    python scripts/render_examples.py                      # outputs/report/index.html
    python scripts/render_examples.py --only 00,02 --model tiny-gpt2
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from helpers.sweep.examples import build  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="demo-en", help="registry name, folder or Hugging Face id (default demo-en)")
    p.add_argument("--only", default="", help="notebook prefixes, comma-separated (default: 00 to 07)")
    p.add_argument("--out", type=Path, default=None, help="report folder (default outputs/report)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    try:
        index, pages = build(args.model, [s for s in args.only.split(",") if s] or None, args.out)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    failed = [page.notebook.name for page in pages if page.error]
    print(f"wrote {index} ({len(pages)} notebooks, {time.perf_counter() - started:.0f} s)"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
