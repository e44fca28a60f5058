"""The vocabulary head's blocks on the CPU (issue 74): `logprobs_at` as it ran before 4372a66 (chunks of
positions of 2^23 logits, by vocabulary slices only where a chunk would hold fewer than 256 positions)
against cache-sized blocks: every position at once, slice by slice of the vocabulary, at most 2^e logits
a slice ("slices of 2^e", whatever the call's size), and the engine's rule now ("the engine's": a call
of at most ``helpers.engine.head.FUSED_ELEMENTS`` logits as one chunk through the fused log-softmax, a
larger one by slices of ``SLICE_ELEMENTS``). On heads of the three vocabularies the rows benchmarks use:
the benchmark GPT-2's 8,000 x 384, SmolLM2-135M's 49,152 x 576 and Gemma 3 270M's 262,144 x 640 (random
float32 weights, seeded; the head's time depends on the shapes only). Every way combines its slices'
logsumexps in float64, as the engine does since 4372a66. Since 3185470 a slice's logits go into one buffer
the call reuses and its logsumexp runs in place there; "new logits a slice" is the engine's rule with each
slice's logits and logsumexp in new tensors, as before (and "before 4372a66" slices that way too).

Each case is a call reading ``positions`` positions, one entry each, as a scoring run's forward call
does; the ways run in interleaved rounds (benchmarks/spread.py) and the table gives each way's
microseconds per position read (median and range), its speed-up over until-now's (median and range of
the per-round ratios) and its largest log-prob difference from until-now's and from a float64 head.

    python benchmarks/bench_head_blocks.py [--cases 8000x384:900 ...] [--elements 18 19 20] [--repeats 5]
"""
from __future__ import annotations

import argparse
import math
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
UNTIL_NOW = "before 4372a66"
NEW_LOGITS = "new logits a slice"
ENGINE = "the engine's"


def case(text: str) -> tuple[int, int, int]:
    """"vocabxwidth:positions" as argparse reads it."""
    try:
        shape, positions = text.split(":")
        vocab, width = shape.split("x")
        return int(vocab), int(width), int(positions)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a case is vocab x width : positions, as 8000x384:900") from None


def new_logits_a_slice(project, vocab: int, hidden: torch.Tensor, which: np.ndarray, targets: np.ndarray,
                       mass=None, greedy: bool = False) -> tuple[np.ndarray, ...]:
    """`head._by_vocabulary` as it ran before 3185470 (log-probs and raw logits; no mass, no greedy): each
    slice's logits a new tensor, its logsumexp by `torch.logsumexp` (a second slice-sized tensor)."""
    rows = hidden.shape[0]
    width = min(vocab, max(head.MIN_SLICE, head.SLICE_ELEMENTS.get("cpu", head.LOGIT_ELEMENTS["cpu"]) // rows))
    h = project.prepared(hidden)
    at, tokens = torch.from_numpy(which), torch.from_numpy(targets)
    total = torch.full((rows,), -math.inf, dtype=torch.float64)
    raw = torch.empty(len(which))
    for start in range(0, vocab, width):
        logits = project.columns(h, start, min(start + width, vocab))
        total = torch.logaddexp(total, torch.logsumexp(logits, dim=-1).double())
        inside = (tokens >= start) & (tokens < start + width)
        raw[inside] = logits[at[inside], tokens[inside] - start]
    return tuple(x.double().numpy() for x in (raw.double() - total[at], raw))


def run(project: Projection, hidden: torch.Tensor, targets: np.ndarray, rule: dict | None,
        reused: bool = True) -> tuple[float, np.ndarray]:
    """Seconds of one `logprobs_at` call under ``rule`` ({"fused": elements, "slice": elements} on the CPU;
    None: neither, the head as it ran before 4372a66), its slices' logits in the engine's reused buffer or
    (``reused`` False) new each slice, and its log-probs. The engine's settings are restored."""
    kept = dict(head.FUSED_ELEMENTS), dict(head.SLICE_ELEMENTS), head._by_vocabulary
    for setting, name in ((head.FUSED_ELEMENTS, "fused"), (head.SLICE_ELEMENTS, "slice")):
        setting.clear()
        if rule is not None:
            setting["cpu"] = rule[name]
    if not reused:
        head._by_vocabulary = new_logits_a_slice
    try:
        with torch.no_grad():
            start = time.perf_counter()
            got = head.logprobs_at(project, project.vocab, hidden, np.arange(len(hidden)), targets)
            return time.perf_counter() - start, got[0]
    finally:
        for setting, was in zip((head.FUSED_ELEMENTS, head.SLICE_ELEMENTS), kept):
            setting.clear()
            setting.update(was)
        head._by_vocabulary = kept[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", type=case, default=[case(c) for c in CASES])
    ap.add_argument("--elements", nargs="+", type=int, default=[18, 19, 20], help="powers of two of a slice's logits")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(spread.header(sys.argv), flush=True)
    print(f"the head of logprobs_at on the CPU, float32; {args.threads} threads; {args.repeats} interleaved rounds; "
          f"us per position read: median (range); speed-up over {UNTIL_NOW}: median (range) of the per-round ratios; "
          f"the engine's: at most 2^{head.FUSED_ELEMENTS['cpu'].bit_length() - 1} logits fused, "
          f"else slices of 2^{head.SLICE_ELEMENTS['cpu'].bit_length() - 1}")
    print(f"{'vocab x width':<16}{'positions':>10}  {'way':<20}{'us/position':<26}{'vs ' + UNTIL_NOW:<22}"
          f"max |diff| vs {UNTIL_NOW}, vs float64")
    engine = {"fused": head.FUSED_ELEMENTS["cpu"], "slice": head.SLICE_ELEMENTS["cpu"]}
    ways = {UNTIL_NOW: (None, False), **{f"slices of 2^{e}": ({"fused": 0, "slice": 1 << e}, True)
                                          for e in args.elements},
            NEW_LOGITS: (engine, False), ENGINE: (engine, True)}
    for vocab, width, positions in args.cases:
        torch.manual_seed(0)
        project = Projection(torch.nn.Linear(width, vocab, bias=False).requires_grad_(False), LogitTransform())
        hidden = torch.randn(positions, width)
        targets = np.random.default_rng(0).integers(0, vocab, positions)
        values = {}

        def timed(name: str) -> float:
            seconds, values[name] = run(project, hidden, targets, *ways[name])
            return seconds

        seconds = spread.rounds({name: (lambda name=name: timed(name)) for name in ways}, args.repeats)
        exact = torch.log_softmax(hidden.double() @ project.head.weight.double().T, -1)[
            torch.arange(positions), torch.from_numpy(targets)].numpy()
        for name in ways:
            per = [1e6 * s / positions for s in seconds[name]]
            versus = "" if name == UNTIL_NOW else spread.describe_ratio(seconds[UNTIL_NOW], seconds[name])
            print(f"{f'{vocab:,} x {width}':<16}{positions:>10,}  {name:<20}"
                  f"{f'{statistics.median(per):.1f} ({min(per):.1f}-{max(per):.1f})':<26}{versus:<22}"
                  f"{np.abs(values[name] - values[UNTIL_NOW]).max():.1e}, {np.abs(values[name] - exact).max():.1e}")
        print(f"{'':<26}  the engine's against {NEW_LOGITS}: "
              f"{spread.describe_ratio(seconds[NEW_LOGITS], seconds[ENGINE])}, "
              f"max |diff| {np.abs(values[NEW_LOGITS] - values[ENGINE]).max():.1e}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
