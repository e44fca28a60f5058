"""What every benchmark reports beside a speed figure, so that a reader can tell a change from
noise: contenders run interleaved (A B, then B A, ...), each at least five times; the median time
and its range; the ratio against the baseline as the median of the per-round ratios (a slow
spell of the machine falls on both of a round's runs) with their range; and the machine, its load
average before and after, and the commit."""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

MIN_REPEATS = 5


def rounds(contenders: dict[str, Callable[[], float]], repeats: int = MIN_REPEATS) -> dict[str, list[float]]:
    """Each contender's seconds per round: run in turn, the order reversed every other round.
    A contender is a callable that runs once and returns its seconds."""
    if repeats < MIN_REPEATS:
        raise ValueError(f"repeats={repeats}: a figure needs at least {MIN_REPEATS} interleaved runs per contender")
    names = list(contenders)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            seconds[name].append(float(contenders[name]()))
    return seconds


def repeats(value: str) -> int:
    """``--repeats`` as argparse reads it: a whole number of at least :data:`MIN_REPEATS`, refused
    with a usage error before anything is loaded."""
    import argparse

    n = int(value)
    if n < MIN_REPEATS:
        raise argparse.ArgumentTypeError(f"{n}: a figure needs at least {MIN_REPEATS} interleaved runs per contender")
    return n


def ratio(baseline: list[float], other: list[float]) -> tuple[float, float, float]:
    """(median, smallest, largest) of the per-round speed-ups ``baseline / other``."""
    per_round = [b / o for b, o in zip(baseline, other)]
    return statistics.median(per_round), min(per_round), max(per_round)


def describe(seconds: list[float]) -> str:
    """"median s (min-max, n runs)"."""
    return f"{statistics.median(seconds):.3f} s ({min(seconds):.3f}-{max(seconds):.3f}, {len(seconds)} runs)"


def describe_ratio(baseline: list[float], other: list[float]) -> str:
    """"1.23x (1.10-1.31)": the median per-round speed-up and its range."""
    median, low, high = ratio(baseline, other)
    return f"{median:.2f}x ({low:.2f}-{high:.2f})"


def commit(root: str | os.PathLike = ".") -> str:
    """The checkout's commit (with "+changes" when its tree differs from it)."""
    run = lambda *a: subprocess.run(["git", "-C", str(root), *a], capture_output=True, text=True).stdout.strip()
    head = run("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if run("status", "--porcelain", "--untracked-files=no") else "")


def machine() -> str:
    """The CPU model, cores and threads, the platform and the date."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() \
        else platform.processor()
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    return (f"{model}, {os.cpu_count()} cores, OMP_NUM_THREADS={threads}, {platform.system()} {platform.release()}, "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Contest:
    """Contenders run interleaved (:func:`rounds`), each keeping the value of its last run:
    ``add(name, fn)`` with ``fn()`` returning what the contender computed (scores, to compare
    afterwards); ``run(repeats)`` times them; ``seconds[name]`` and ``values[name]`` then hold
    each one's times and last value."""

    def __init__(self) -> None:
        self._runs: dict[str, Callable[[], float]] = {}
        self.values: dict[str, object] = {}
        self.seconds: dict[str, list[float]] = {}

    def add(self, name: str, fn: Callable[[], object]) -> None:
        def once() -> float:
            start = time.perf_counter()
            self.values[name] = fn()
            return time.perf_counter() - start
        self._runs[name] = once

    def run(self, repeats: int = MIN_REPEATS) -> dict[str, list[float]]:
        self.seconds = rounds(self._runs, repeats)
        return self.seconds

    def median(self, name: str) -> float:
        return statistics.median(self.seconds[name])

    def against(self, baseline: str, name: str) -> str:
        """``name``'s speed-up over ``baseline``: the median per-round ratio and its range."""
        return describe_ratio(self.seconds[baseline], self.seconds[name])


def header(argv: list[str], root: str | os.PathLike = ".") -> str:
    """The lines every benchmark prints first: its command, the machine, the compiler's switch,
    the load average before and the commit."""
    import shlex

    dynamo = os.environ.get("TORCHDYNAMO_DISABLE", "unset")
    return (f"# {shlex.join(argv)}\n# machine: {machine()}; TORCHDYNAMO_DISABLE={dynamo}\n"
            f"# load average before: {load_average()}\n# commit: {commit(root)}")
