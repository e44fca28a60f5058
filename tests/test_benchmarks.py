"""The cheap benchmarks run as committed (a benchmark that no longer runs is found here, not
by the next person to quote it), with the values they must print."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_gpu  # noqa: E402
import bench_masked  # noqa: E402
import bench_plan  # noqa: E402


def run(module, argv: list[str], capsys, monkeypatch) -> str:
    monkeypatch.setattr(sys, "argv", [module.__name__] + argv)
    capsys.readouterr()
    module.main()
    return capsys.readouterr().out


def test_bench_plan_times_growing_plans(capsys, monkeypatch):
    out = run(bench_plan, ["--sizes", "40", "120"], capsys, monkeypatch)
    assert re.search(r"^# machine: .*\n# load average before: [\d. ]+\n# commit: \w+", out, re.M), out
    assert re.search(r"^# load average after: [\d. ]+$", out, re.M), out
    assert "in-template LP template 1; 120 requests encoded; share='auto'; 5 runs at each N" in out
    # the median time (range, runs) and the per-round ratio to the smallest N (median and range)
    assert re.search(r"^N=\s+40: [\d.]+ s \([\d.]+-[\d.]+, 5 runs\), .* 1\.00x \(1\.00-1\.00\) the per-request "
                     r"time at N=40 \(a quadratic plan: 1x\)$", out, re.M), out
    assert re.search(r"^N=\s+120: [\d.]+ s \([\d.]+-[\d.]+, 5 runs\), .* [\d.]+x \([\d.]+-[\d.]+\) the per-request "
                     r"time at N=40 \(a quadratic plan: 3x\)$", out, re.M), out
    plain = run(bench_plan, ["--method", "lp", "--sizes", "40"], capsys, monkeypatch)
    assert "; plain LP; 40 requests encoded; share='auto'; 5 runs at each N" in plain


def test_benchmarks_refuse_fewer_than_five_runs_before_any_work(capsys, monkeypatch):
    for module in (bench_plan, bench_masked):
        with pytest.raises(SystemExit) as refused:  # argparse's usage error, before anything is built
            run(module, ["--repeats", "4"], capsys, monkeypatch)
        assert refused.value.code == 2
        assert "argument --repeats: 4: a figure needs at least 5 interleaved runs" in capsys.readouterr().err


def test_bench_plan_tokens_orders_the_share_modes_and_one_block_reaches_the_minimum(capsys, monkeypatch):
    out = run(bench_plan, ["--tokens", "--pairs", "20"], capsys, monkeypatch)
    totals = {}
    for line in out.splitlines():
        if "all passes" in line:
            numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?=\s)", line + " ")]
            minimum, counts = numbers[1], numbers[2:]
            totals[line[:2]] = (minimum, counts)
    assert set(totals) == {"02", "03"}
    for minimum, (none, context, prefix, tree) in totals.values():
        assert none >= context >= prefix >= tree
        assert tree == minimum  # 40 requests per pass: one block, one trie, every prefix run once


def test_bench_gpu_says_it_needs_cuda_and_exits_0_without_one(capsys, monkeypatch):
    monkeypatch.setattr(bench_gpu.torch.cuda, "is_available", lambda: False)
    out = run(bench_gpu, ["--shape", "llama3-1b"], capsys, monkeypatch)
    assert out == "bench_gpu needs a CUDA GPU; none is visible here (nothing measured; --cpu runs a smoke run)\n"


def test_bench_gpu_keeps_to_its_time_budget_and_says_what_it_skipped(capsys, monkeypatch):
    # a budget already spent: the floor's row runs, every engine row is skipped, and each section says so
    out = run(bench_gpu, ["--cpu", "--model", "tiny-llama", "--n", "10", "--priming-pairs", "1",
                          "--prefix-tokens", "20", "--seconds", "0"], capsys, monkeypatch)
    assert "plain forward + log-softmax loop (floor)" in out and "engine," not in out, out
    assert out.count("skipped: the time budget is spent") == 4, out


def test_bench_masked_runs_both_scorers_and_they_agree(capsys, monkeypatch):
    out = run(bench_masked, ["--shape", "tiny", "--n", "20", "--layers", "2", "--width", "64", "--l2r-n", "10",
                             "--ref-n", "5", "--repeats", "5", "--minicons-batches", "2,5"], capsys, monkeypatch)
    assert re.search(r"^# machine: .*\n# load average before: [\d. ]+\n# commit: \w+", out, re.M), out
    assert re.search(r"^# load average after: [\d. ]+$", out, re.M), out
    assert re.search(r"^random bert \(tiny: 2 layers x 64, vocabulary \d+\), .* 20 BLiMP sentences, \d+ masked "
                     r"copies \([\d.]+ a sentence\)$", out, re.M)
    warm = re.search(r"^minicons warm-up, seconds a sentence by batch size \(median and range of 5 interleaved runs\): "
                     r"2: ([\d.]+) \(([\d.]+)-([\d.]+)\), 5: ([\d.]+) \(([\d.]+)-([\d.]+)\); timed with ([25])$",
                     out, re.M)
    assert warm, out
    two, five = (float(warm[1]), float(warm[2]), float(warm[3])), (float(warm[4]), float(warm[5]), float(warm[6]))
    assert two[1] <= two[0] <= two[2] and five[1] <= five[0] <= five[2]  # a median within its range
    assert {"2": two[0], "5": five[0]}[warm[7]] == min(two[0], five[0])  # the batch with the lower median
    differences = [float(x) for x in re.findall(r"(\d\.\d\de-\d\d)(?: nats)?", out)]
    assert len(differences) == 4 and max(differences) < 1e-3, out  # float32 rounding only, both variants: they agree
    pll = re.search(r"^pll, 5 interleaved runs each: engine ([\d.]+) s \(([\d.]+)-([\d.]+), 5 runs\), \d+ forward "
                    r"passes a run; minicons ([\d.]+) s \(([\d.]+)-([\d.]+), 5 runs\); engine ([\d.]+)x "
                    r"\(([\d.]+)-([\d.]+)\) faster \(per-round ratios: median, range\); max \|PLL difference\| "
                    r"\d\.\d\de-\d\d nats$", out, re.M)
    assert pll, out
    engine, minicons, ratio = (tuple(float(pll[i]) for i in (k, k + 1, k + 2)) for k in (1, 4, 7))
    for median, low, high in (engine, minicons, ratio):
        assert 0 < low <= median <= high, out


def test_scripts_put_the_repository_on_the_path_before_importing_helpers():
    # a GPU machine runs them from a copy of the repository, where helpers is not installed
    import ast

    root = Path(__file__).resolve().parent.parent
    late = []
    for script in sorted([*root.glob("benchmarks/*.py"), *root.glob("scripts/*.py")]):
        body = ast.parse(script.read_text(encoding="utf-8")).body
        on_path = next((i for i, node in enumerate(body) if "sys.path" in ast.unparse(node)), None)
        helpers_at = [i for i, node in enumerate(body) if isinstance(node, (ast.Import, ast.ImportFrom))
                      and any((getattr(node, "module", None) or alias.name).split(".")[0] == "helpers"
                              for alias in node.names)]
        if helpers_at and (on_path is None or helpers_at[0] < on_path):
            late.append(script.name)
    assert late == []


def test_spread_interleaves_reverses_and_takes_medians_of_per_round_ratios():
    import spread

    order, clock = [], iter([4.0, 2.0, 2.0, 6.0, 5.0, 1.0, 3.0, 3.0, 8.0, 2.0])  # A, B, then B, A, ...
    contenders = {name: (lambda name=name: order.append(name) or next(clock)) for name in ("A", "B")}
    seconds = spread.rounds(contenders, 5)
    assert order == ["A", "B", "B", "A", "A", "B", "B", "A", "A", "B"]
    assert seconds == {"A": [4.0, 6.0, 5.0, 3.0, 8.0], "B": [2.0, 2.0, 1.0, 3.0, 2.0]}
    # per-round speed-ups of B over A: 2, 3, 5, 1, 4 -> median 3, range 1-5 (not 5.0 / 2.0 of the medians)
    assert spread.ratio(seconds["A"], seconds["B"]) == (3.0, 1.0, 5.0)
    assert spread.describe_ratio(seconds["A"], seconds["B"]) == "3.00x (1.00-5.00)"
    assert spread.describe(seconds["A"]) == "5.000 s (3.000-8.000, 5 runs)"
    match = spread.Contest()
    match.add("x", lambda: 42)
    match.add("y", lambda: "kept")
    match.run(5)
    assert match.values == {"x": 42, "y": "kept"} and [len(v) for v in match.seconds.values()] == [5, 5]


def test_bench_segment_gathers_times_both_ways_on_recorded_calls_and_they_agree(capsys, monkeypatch):
    import bench_segment_gathers

    out = run(bench_segment_gathers, ["--m", "6", "--calls", "2", "--inner", "1"], capsys, monkeypatch)
    assert re.search(r"^# machine: .*\n# load average before: [\d. ]+\n# commit: \w+", out, re.M), out
    assert re.search(r"^# load average after: [\d. ]+$", out, re.M), out
    assert re.search(r"^prefix, packed; in-template LP, 6 sentences x 5 templates; .* 2 recorded calls .* outputs "
                     r"identical \(max \|diff\| 0\.0 at every computed position\)$", out, re.M), out
    shapes = re.findall(r"^\s+\d+ x \d+\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)x \(([\d.]+)-([\d.]+)\)$", out, re.M)
    assert len(shapes) == 2, out
    total = re.search(r"^all calls x 1: \[\] indexing [\d.]+ s \([\d.]+-[\d.]+, 5 runs\), index_select [\d.]+ s "
                      r"\([\d.]+-[\d.]+, 5 runs\); index_select ([\d.]+)x \(([\d.]+)-([\d.]+)\) faster$", out, re.M)
    assert total, out
    # a median within its range (printed to two decimals: a round of a loaded machine may print 0.00)
    for median, low, high in shapes + [total.groups()]:
        assert float(low) <= float(median) <= float(high) and float(high) > 0, out


def test_bench_head_blocks_times_the_ways_and_each_stays_within_float32_rounding_of_float64(capsys, monkeypatch):
    import bench_head_blocks

    from helpers.engine import head

    kept = dict(head.FUSED_ELEMENTS), dict(head.SLICE_ELEMENTS)
    argv = ["--cases", "3000x64:40", "3000x64:2000", "--elements", "12", "19"]
    out = run(bench_head_blocks, argv, capsys, monkeypatch)
    assert (head.FUSED_ELEMENTS, head.SLICE_ELEMENTS) == kept  # the engine's settings as they were
    assert re.search(r"^# machine: .*\n# load average before: [\d. ]+\n# commit: \w+", out, re.M), out
    assert re.search(r"^# load average after: [\d. ]+$", out, re.M), out
    assert "the engine's: at most 2^22 logits fused, else slices of 2^19" in out, out
    rows = re.findall(r"^3,000 x 64\s+([\d,]+)  (before 4372a66|slices of 2\^12|slices of 2\^19|new logits a slice|"
                      r"the engine's)\s+"
                      r"[\d.]+ \([\d.]+-[\d.]+\)\s+(?:([\d.]+)x \(([\d.]+)-([\d.]+)\))?\s+([\d.e+-]+), ([\d.e+-]+)$",
                      out, re.M)
    ways = ["before 4372a66", "slices of 2^12", "slices of 2^19", "new logits a slice", "the engine's"]
    assert [(r[0], r[1]) for r in rows] == [(n, w) for n in ("40", "2,000") for w in ways], out
    for positions, way, median, low, high, versus_before, versus_float64 in rows:
        # a few float32 roundings of log-probs near log(1/3000) = -8 (one: 9.5e-7); 2^12 reads slices of 1,024
        assert float(versus_float64) < 4e-6 and float(versus_before) < 4e-6, out
        assert way == ways[0] or float(low) <= float(median) <= float(high), out
    # 40 positions (120,000 logits) run fused, as before: the same values bit for bit
    assert [r[5] for r in rows if r[0] == "40" and r[1] == "the engine's"] == ["0.0e+00"], out
    # the slices' logits in one reused buffer, the logsumexp in place: torch's own operations, the same values
    against = re.findall(r"^\s+the engine's against new logits a slice: ([\d.]+)x \([\d.]+-[\d.]+\), "
                         r"max \|diff\| ([\d.e+-]+)$", out, re.M)
    assert [diff for _, diff in against] == ["0.0e+00", "0.0e+00"], out
