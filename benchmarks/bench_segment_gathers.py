"""Segment attention's gathers (issue 74): the engine's `segment_sdpa` (queries and keys gathered with
``index_select``, each query's output read back from its group's by one more gather) against the same
attention with the gathers written as ``[]`` indexing and the outputs assigned into place (the engine's
way until 9fda18b), on the very calls a run makes.

One scoring run of packed pair prefixes (``share="prefix"``) over in-template LP on the benchmark
GPT-2 records the first call of each batch shape (its queries, keys, values and segment plan) at the
first layer; then every recorded call runs ``--inner`` times under each way in turn, in interleaved rounds
(benchmarks/spread.py),
and the table gives each way's microseconds per query slot and layer, the ratio per shape and over
all shapes (medians and ranges of the per-round ratios), and the largest difference of the outputs at
the positions a query computes (0: the same values bit for bit).

    python benchmarks/bench_segment_gathers.py [--m 400] [--repeats 5] [--calls 30] [--inner 10]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scoring as bench  # noqa: E402  (its model builder; sets the path to helpers)
import profile_rows  # noqa: E402  (its in-template workload)
import spread  # noqa: E402

import torch  # noqa: E402
from transformers import AttentionInterface  # noqa: E402
from transformers.integrations.sdpa_attention import sdpa_attention_forward  # noqa: E402

from helpers.engine import CausalScorer  # noqa: E402
from helpers.engine import segment_attention as sa  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.settings import Settings, scorer_arguments  # noqa: E402


def indexed_sdpa(module, query, key, value, segments, **kwargs):
    """The baseline: `segment_sdpa` with ``[]`` gathers and the outputs assigned into a spare-row buffer."""
    rows, heads, seg, _ = query.shape
    flat_q = query.transpose(1, 2).reshape(rows * seg, heads, -1)
    flat_k = key.transpose(1, 2).reshape(rows * key.shape[2], key.shape[1], -1)
    flat_v = value.transpose(1, 2).reshape(rows * value.shape[2], value.shape[1], -1)
    out = query.new_zeros((rows * seg + 1, heads, value.shape[3]))  # the last row takes padding
    for group in segments.groups:
        read, k_idx = group.read, group.k  # padding reads query 0 (the old code read row -1); its output is never read
        got, _ = sdpa_attention_forward(module, flat_q[read].transpose(1, 2), flat_k[k_idx].transpose(1, 2),
                                        flat_v[k_idx].transpose(1, 2), group.mask, is_causal=group.causal, **kwargs)
        out[group.q.reshape(-1)] = got.reshape(-1, heads, got.shape[-1])
    return out[:-1].view(rows, seg, heads, -1)


def recorded_calls(m: int, limit: int) -> list[tuple]:
    """(module, query, key, value, segments, kwargs) of the first layer's call per batch shape."""
    model, tok = bench.build_model()
    lm = LoadedModel.wrap(model, tok, name="bench-segment-gathers")
    scorer = CausalScorer(lm, **scorer_arguments(bench.MODES["prefix"][1], Settings(progress=False)))
    calls: dict[tuple, tuple] = {}

    def recording(module, query, key, value, mask, segments=None, **kwargs):
        shape = (query.shape[0], query.shape[2], key.shape[2])
        if segments is not None and shape not in calls and len(calls) < limit:
            calls[shape] = (module, query.clone(), key.clone(), value.clone(), segments, dict(kwargs))
        return sa.segment_sdpa(module, query, key, value, mask, segments=segments, **kwargs)

    AttentionInterface.register(sa.NAME, recording)
    try:
        scorer.score(profile_rows.workload("intemplate", tok, m, 0))
    finally:
        sa.register()
    return list(calls.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=400, help="sentences of in-template LP (x5 templates)")
    ap.add_argument("--calls", type=int, default=30, help="batch shapes recorded at most")
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS)
    ap.add_argument("--inner", type=int, default=10, help="runs of each call per way and round")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(spread.header(sys.argv), flush=True)
    calls = recorded_calls(args.m, args.calls)
    slots = sum(q.shape[0] * q.shape[2] for _, q, *_ in calls)
    ways = {"index_select": lambda c: sa.segment_sdpa(*c[:4], None, segments=c[4], **c[5])[0],
            "[] indexing": lambda c: indexed_sdpa(*c[:5], **c[5])}
    per_call = {way: [[] for _ in calls] for way in ways}

    def timed(way: str) -> float:
        total = 0.0
        with torch.inference_mode():
            for i, call in enumerate(calls):
                start = time.perf_counter()
                for _ in range(args.inner):
                    ways[way](call)
                seconds = (time.perf_counter() - start) / args.inner
                per_call[way][i].append(seconds)
                total += seconds * args.inner
        return total

    with torch.inference_mode():
        for call in calls:  # warm, and the outputs compared where a query computes them
            new, old = (f(call) for f in ways.values())
            rows, seg = call[1].shape[0], call[1].shape[2]
            real = torch.zeros(rows * seg, dtype=torch.bool)
            for group in call[4].groups:
                q = group.q.reshape(-1)
                real[q[q >= 0]] = True
            diff = (new.reshape(rows * seg, -1)[real] - old.reshape(rows * seg, -1)[real]).abs().max().item()
            assert diff == 0.0, f"the two ways differ by {diff} at a call of {rows} x {seg} queries"
    seconds = spread.rounds({way: (lambda way=way: timed(way)) for way in ways}, args.repeats)
    print(f"prefix, packed; in-template LP, {args.m} sentences x 5 templates; benchmark GPT-2 6x384; "
          f"{len(calls)} recorded calls (first layer, one per batch shape), {slots:,} query slots; "
          f"{args.threads} threads; outputs identical (max |diff| 0.0 at every computed position)")
    print(f"{'rows x queries, keys':<24}{'groups':>7}   {'[] indexing us/slot':<22}{'index_select us/slot':<22}"
          "speed-up")
    for i, (_, q, k, _, segments, _) in enumerate(calls):
        n = q.shape[0] * q.shape[2]
        old, new = (statistics.median(per_call[w][i]) * 1e6 / n for w in ("[] indexing", "index_select"))
        ratio = spread.describe_ratio(per_call["[] indexing"][i], per_call["index_select"][i])
        print(f"{q.shape[0]:>4} x {q.shape[2]:<5}{k.shape[2]:>6}   {len(segments.groups):>7}   "
              f"{old:<22.2f}{new:<22.2f}{ratio}")
    print(f"all calls x {args.inner}: [] indexing {spread.describe(seconds['[] indexing'])}, index_select "
          f"{spread.describe(seconds['index_select'])}; index_select "
          f"{spread.describe_ratio(seconds['[] indexing'], seconds['index_select'])} faster")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
