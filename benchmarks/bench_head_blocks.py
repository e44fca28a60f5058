"""The vocabulary head's blocks on the CPU (issue 74): `logprobs_at` as it ran until now (chunks of
positions of 2^23 logits, by vocabulary slices only where a chunk would hold fewer than 256 positions)
against cache-sized blocks (every position at once, slice by slice of the vocabulary, at most
2^e logits a slice: ``helpers.engine.head.SLICE_ELEMENTS``), on heads of the three vocabularies the
rows benchmarks use: the benchmark GPT-2's 8,000 x 384, SmolLM2-135M's 49,152 x 576 and Gemma 3
270M's 262,144 x 640 (random float32 weights, seeded; the head's time depends on the shapes only).

Each case is a call reading ``positions`` positions, one entry each, as a scoring run's forward call
does; the ways run in interleaved rounds (benchmarks/spread.py) and the table gives each way's
microseconds per position read (median and range), its speed-up over until-now's (median and range of
the per-round ratios) and its largest log-prob difference from until-now's and from a float64 head.

    python benchmarks/bench_head_blocks.py [--cases 8000x384:900 ...] [--elements 18 19 20] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers.engine import head  # noqa: E402
from helpers.engine.logit_transform import LogitTransform  # noqa: E402
from helpers.engine.projection import Projection  # noqa: E402

CASES = ["8000x384:300", "8000x384:900", "8000x384:1353", "49152x576:600", "262144x640:300"]
UNTIL_NOW = "until now"


def case(text: str) -> tuple[int, int, int]:
    """"vocabxwidth:positions" as argparse reads it."""
    try:
        shape, positions = text.split(":")
        vocab, width = shape.split("x")
        return int(vocab), int(width), int(positions)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a case is vocab x width : positions, as 8000x384:900") from None


def run(project: Projection, hidden: torch.Tensor, targets: np.ndarray, elements: int | None) -> tuple[float, np.ndarray]:
    """Seconds of one `logprobs_at` call with ``SLICE_ELEMENTS`` on the CPU at ``elements`` (None: none,
    the head as it ran until now), and its log-probs."""
    kept = dict(head.SLICE_ELEMENTS)
    head.SLICE_ELEMENTS.clear()
    if elements is not None:
        head.SLICE_ELEMENTS["cpu"] = elements
    try:
        with torch.no_grad():
            start = time.perf_counter()
            got = head.logprobs_at(project, project.vocab, hidden, np.arange(len(hidden)), targets)
            return time.perf_counter() - start, got[0]
    finally:
        head.SLICE_ELEMENTS.clear()
        head.SLICE_ELEMENTS.update(kept)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", type=case, default=[case(c) for c in CASES])
    ap.add_argument("--elements", nargs="+", type=int, default=[18, 19, 20], help="powers of two of a block's logits")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(spread.header(sys.argv), flush=True)
    print(f"the head of logprobs_at on the CPU, float32; {args.threads} threads; {args.repeats} interleaved rounds; "
          "us per position read: median (range); speed-up over until now: median (range) of the per-round ratios")
    print(f"{'vocab x width':<16}{'positions':>10}  {'way':<18}{'us/position':<26}{'vs until now':<22}"
          "max |diff| vs until now, vs float64")
    ways = {UNTIL_NOW: None, **{f"blocks of 2^{e}": 1 << e for e in args.elements}}
    for vocab, width, positions in args.cases:
        torch.manual_seed(0)
        project = Projection(torch.nn.Linear(width, vocab, bias=False).requires_grad_(False), LogitTransform())
        hidden = torch.randn(positions, width)
        targets = np.random.default_rng(0).integers(0, vocab, positions)
        values = {}

        def timed(name: str) -> float:
            seconds, values[name] = run(project, hidden, targets, ways[name])
            return seconds

        seconds = spread.rounds({name: (lambda name=name: timed(name)) for name in ways}, args.repeats)
        exact = torch.log_softmax(hidden.double() @ project.head.weight.double().T, -1)[
            torch.arange(positions), torch.from_numpy(targets)].numpy()
        for name in ways:
            per = [1e6 * s / positions for s in seconds[name]]
            versus = "" if name == UNTIL_NOW else spread.describe_ratio(seconds[UNTIL_NOW], seconds[name])
            print(f"{f'{vocab:,} x {width}':<16}{positions:>10,}  {name:<18}"
                  f"{f'{statistics.median(per):.1f} ({min(per):.1f}-{max(per):.1f})':<26}{versus:<22}"
                  f"{np.abs(values[name] - values[UNTIL_NOW]).max():.1e}, {np.abs(values[name] - exact).max():.1e}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
