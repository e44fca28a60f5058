"""How long reading a benchmark from the mirror into its canonical table takes: the first read
in a process (every file's sha256 computed) and the reads after it (checksums cached by file,
size and modification time). Defaults to the two multilingual sets, RuBLiMP and JBLiMP.

    python benchmarks/bench_data_load.py [--datasets rublimp jblimp] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import data  # noqa: E402


def timed(name: str) -> tuple[float, int]:
    start = time.perf_counter()
    rows = len(data.load(name))
    return time.perf_counter() - start, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["rublimp", "jblimp"])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    for name in args.datasets:
        first, rows = timed(name)
        again = [timed(name)[0] for _ in range(args.repeats)]
        print(f"{name}: {rows:,} rows; first read {first:.3f} s (with checksums), "
              f"then median {statistics.median(again):.3f} s over {args.repeats} reads (checksums cached)")


if __name__ == "__main__":
    main()
