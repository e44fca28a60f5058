"""The GPU check's plan: the rows the GPU targets compare, each run :data:`ROUNDS` times in turn
(benchmarks/spread.py), sized so that the whole of scripts/gpu_check.py keeps to 8 minutes on one
H100, and the estimate of each part, which the check prints before it starts (the CPU dry run too).

The estimate reads requests per second of each row on one H200 with a random Llama 3 8B in
bfloat16 (benchmarks/results/gpu_check_h200.txt, 2026-11-27: the loop 1,700 req/s on plain LP, the
default 1,401; in-template no reuse 780 and the default 1,245; priming no reuse 37 and packed
prefixes 67), times :data:`H100_SLOWER` (the H100's memory bandwidth is 3.35 TB/s against 4.8);
rows not measured there are estimated, and named so: lm-eval at the loop's 0.7 (its padded batches
of 64 on the CPU measured 0.6-0.8 of the loop's speed), NF4 at 0.3 of bf16 (bitsandbytes dequantizes
each weight per call). A lent run prints each row's measured seconds beside the plan's, and the
rates here are to be refitted from it.
"""
from __future__ import annotations

ROUNDS = 5
MINUTES = 8.0
# what the benchmark scores (the rest of the check is steps 1-4, gpu_check.SHARES_OF_TIME)
SIZES = dict(n=1600, m=400, priming_pairs=15, prefix_tokens=800)
H100_SLOWER = 1.25
# requests/s on one H200, random Llama 3 8B, bf16; (section, contender) -> (rate, where it comes from)
RATES = {
    ("plain", "loop"): (1700, "measured"), ("plain", "lm-eval"): (1190, "estimated: 0.7x the loop"),
    ("plain", "default"): (1401, "measured"),
    ("template", "none"): (780, "measured"), ("template", "default"): (1245, "measured"),
    ("nf4", "loop"): (510, "estimated: 0.3x bf16"), ("nf4", "default"): (420, "estimated: 0.3x bf16"),
    ("priming", "none"): (37, "measured"), ("priming", "default"): (67, "measured (packed prefixes)"),
}
SECTIONS = {"plain": "1. plain LP: the default vs the plain loop and lm-eval",
            "template": "2. in-template LP: the default vs no reuse",
            "nf4": "3. plain LP in NF4: the default vs the NF4 loop",
            "priming": "4. priming: the default vs no reuse"}
WARM = 0.25  # each contender's warm-up run, as a share of one timed run (a quarter of the requests)
# seconds outside the rows: building the 8B model on the GPU, lm-eval's wrapper, the NF4 copy,
# the tokenizing and the start-up of the process
FIXED = {"start-up, the 8B model built on the GPU": 25, "lm-eval's HFLM": 5, "the NF4 copy quantized": 25,
         "priming prefixes built": 5}


def requests(section: str, sizes: dict) -> int:
    """How many requests a run of ``section`` scores."""
    return {"plain": sizes["n"], "nf4": sizes["n"], "template": 5 * sizes["m"],
            "priming": 2 * 5 * sizes["priming_pairs"]}[section]


def plan(sizes: dict = SIZES, rounds: int = ROUNDS) -> list[tuple[str, float]]:
    """(part, estimated seconds on one H100) of the benchmark: each section's interleaved runs and
    warm-ups, then the fixed parts."""
    parts = []
    for section, title in SECTIONS.items():
        contenders = [c for s, c in RATES if s == section]
        once = sum(requests(section, sizes) / RATES[section, c][0] * H100_SLOWER for c in contenders)
        parts.append((f"{title}: {requests(section, sizes):,} requests, {len(contenders)} contenders x "
                      f"{rounds} runs", once * (rounds + WARM)))
    return parts + list(FIXED.items())


def lines(steps: dict[str, float], sizes: dict = SIZES, rounds: int = ROUNDS, minutes: float = MINUTES) -> list[str]:
    """The plan as printed: steps 1-4 at their shares of the time (``steps``), the benchmark's parts,
    and the total against ``minutes``."""
    bench = plan(sizes, rounds)
    total = sum(steps.values()) + sum(s for _, s in bench)
    out = [f"plan on one H100 (estimates; rates in benchmarks/gpu_plan.py), {rounds} interleaved runs per row:"]
    out += [f"  {name:<78} {seconds:6.0f} s (its share)" for name, seconds in steps.items()]
    out.append("  5. the benchmark (benchmarks/bench_gpu_targets.py, random Llama 3 8B, bf16):")
    out += [f"     {name:<75} {seconds:6.0f} s" for name, seconds in bench]
    verdict = "within" if total <= 60 * minutes else "OVER"
    out.append(f"  total {total:.0f} s: {verdict} {minutes:g} minutes ({60 * minutes:.0f} s)")
    return out
