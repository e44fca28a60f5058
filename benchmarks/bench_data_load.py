"""How long reading a benchmark from the mirror into its canonical table takes: a first read
in a process (every file's sha256 computed and the manifest read: their caches emptied before
each such read, the modules already imported) and a read after it (checksums cached by file,
size and modification time). Defaults to the two multilingual sets, RuBLiMP and JBLiMP. The two
run interleaved (benchmarks/spread.py: in turn, the order reversed every other round),
``--repeats`` times each (at least 5): each one's median time with its range and the cache's
speed-up as the median of the per-round ratios with their range; with the machine, the load
average before and after, and the commit.

    python benchmarks/bench_data_load.py [--datasets rublimp jblimp] [--repeats 5]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from helpers import data  # noqa: E402
from helpers.data import manifest_file, sources  # noqa: E402
import spread  # noqa: E402


def read(name: str, rows: list[int], first: bool):
    """A contender: one read of ``name`` (``first``: with the checksum and manifest caches emptied)."""
    def run() -> float:
        if first:
            sources._sha256.cache_clear()
            manifest_file.read_manifest.cache_clear()
        start = time.perf_counter()
        rows.append(len(data.load(name)))
        return time.perf_counter() - start
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["rublimp", "jblimp"])
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    for name in args.datasets:
        rows: list[int] = [len(data.load(name))]  # untimed: the modules a read needs imported
        times = spread.rounds({"first": read(name, rows, True), "cached": read(name, rows, False)}, args.repeats)
        if len(set(rows)) != 1:
            raise RuntimeError(f"{name}: the reads gave different row counts: {sorted(set(rows))}")
        print(f"{name}: {rows[0]:,} rows; first read {spread.describe(times['first'])} (with checksums), "
              f"then {spread.describe(times['cached'])} (checksums cached): "
              f"{spread.describe_ratio(times['first'], times['cached'])} faster")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
