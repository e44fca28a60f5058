"""What a share mode's rows cost per token beyond what no reuse's cost (issue 74): one workload
scored by each mode, warm, and per mode the tokens run and the positions the head reads.

By default the modes run in turn ``--repeats`` times (benchmarks/spread.py, the order reversed every
other round), timed by the engine's own clocks around its forward passes (``scorer.seconds``: the
rows, the head apart), and the table gives the forward calls of a run and the medians (range) of: the
whole score per token run, the rows (the forward passes without the head) per token run, the part of
the rows spent inside the attention (SDPA and segment attention, clocked around each call), the head
per position read, and the rows, attention and head against no reuse's in the same round (the median
of the per-round ratios, range).

With ``--zero-attention``, each mode also runs a twin (``<mode>/0``, in the same rounds) whose every
attention (the model's SDPA and segment attention) returns its queries instead of attending: what the
rows cost without attention, and so how much of a mode's excess over no reuse is attention and how much
the rest of the rows (padding, the cached context's copy, building the batch). The twins' scores are
meaningless; only their time is read.

With ``--profile``, one run of each mode under cProfile splits the rows further: building the
batch (ids, positions), the attention masks (the tree mask, FlexAttention's block mask, segment
blocks), gathering cached keys and values, the model's body (its attention beside it), and what
runs outside the forward passes (encoding, planning, scheduling, results). cProfile's own overhead
inflates Python-heavy parts alike in every mode; the parts' ratios to no reuse's are what it is
for, not the seconds.

    python benchmarks/profile_rows.py [--workload intemplate|plain|yesno] [--m 400] [--n 2000]
        [--shape smollm2-135m | gemma3-270m | --real smollm2] [--modes none context prefix tree default]
        [--repeats 5 [--zero-attention] | --profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scoring as bench  # noqa: E402  (its model builders and workloads; sets the path to helpers)
import spread  # noqa: E402

import torch  # noqa: E402

from helpers.engine import CausalScorer, Request  # noqa: E402
from helpers.engine import readout  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.settings import Settings, scorer_arguments  # noqa: E402

# each part: (file ending, function names) whose cumulative time it is; "body" is the model's own forward
PARTS = {
    # built before the body runs; FlexAttention's block mask is built inside its attention (counted there)
    "masks": (("engine/forward.py", ("_mask_4d", "_pad_mask", "_blocks")), ("engine/flex_rows.py", ("of",)),
              ("engine/segment_attention.py", ("__init__",))),
    "cache gather": (("engine/forward.py", ("_gather_cache", "filled_cache")),),
    "attention": (("integrations/sdpa_attention.py", ("sdpa_attention_forward",)),
                  ("engine/segment_attention.py", ("segment_sdpa",)),
                  ("engine/flex_rows.py", ("tree_flex_attention",))),
    "head": (("engine/readout.py", ("_read_logprobs",)),),
    "forward passes": (("engine/forward.py", ("_forward",)),),
    "score": (("engine/scorer_base.py", ("score",)),),
}


def cumulative(stats: pstats.Stats, part: str) -> float:
    """The cumulative seconds of ``part``'s functions; of functions of one name in one file (a
    class built inside another's ``__init__``), the outermost's."""
    return sum(max((cum for (filename, _, fn), (_, _, _, cum, _) in stats.stats.items()
                    if filename.endswith(end) and fn == name), default=0.0)
               for end, names in PARTS[part] for name in names)


def body_seconds(stats: pstats.Stats, model) -> float:
    """The model body's forward: the outermost ``forward`` of its modeling file (the largest cumulative time)."""
    source = sys.modules[type(model).__module__].__file__
    return max((cum for (filename, _, name), (_, _, _, cum, _) in stats.stats.items()
                if filename == source and name == "forward"), default=0.0)


def workload(kind: str, tok, m: int, n: int) -> list[Request]:
    from helpers.methods.answers import yes_no
    from helpers.methods.prompt_text import render
    from helpers.methods.templates import ide_templates

    if kind == "plain":
        return [Request("", s) for s in bench.blimp_sentences(n)]
    sentences = bench.blimp_sentences(m)
    if kind == "intemplate":
        return [Request(before, s + after) for before, after in (t.split() for t in ide_templates("single"))
                for s in sentences]
    yes, no = yes_no("en")
    return [Request(render(t, tok, instruct=False, sentence=s), a, separate=True)
            for t in ide_templates("yn") for s in sentences for a in (yes, no)]


ZEROED = "/0"  # the suffix of a mode's twin whose attention is zeroed (``--zero-attention``)


def no_attention(module, query, key, value, attention_mask, **kwargs):
    """An attention that attends to nothing: its queries as the output ([batch, q, heads, dim])."""
    return query.transpose(1, 2).contiguous(), None


ATTENTION_SECONDS = [0.0]  # time inside the registered attentions, summed over calls


def clocked(attention):
    """``attention`` adding its wall time to :data:`ATTENTION_SECONDS`."""
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return attention(*args, **kwargs)
        finally:
            ATTENTION_SECONDS[0] += time.perf_counter() - start
    return timed


def attending(zeroed: bool) -> None:
    """Register the model's SDPA and segment attention as they are, or both as :func:`no_attention`,
    each clocked."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from helpers.engine import segment_attention

    AttentionInterface.register("sdpa", clocked(no_attention if zeroed else sdpa_attention_forward))
    AttentionInterface.register(segment_attention.NAME,
                                clocked(no_attention if zeroed else segment_attention.segment_sdpa))


def timed(lm, requests, modes: list[str], repeats: int, read: list[int]) -> None:
    """Each mode's score, rows and head, timed over ``repeats`` interleaved rounds (module docstring)."""
    import statistics

    scorers = {}
    for mode in modes:  # made with the real attention (the model checks a scorer makes run the model)
        scorers[mode] = CausalScorer(lm, **scorer_arguments(bench.MODES[mode.removesuffix(ZEROED)][1],
                                                            Settings(progress=False)))
        attending(mode.endswith(ZEROED))
        scorers[mode].score(requests[:32])  # warm
        attending(False)
    # per round: (seconds, rows seconds, head seconds, tokens, reads, attention seconds, forward calls)
    runs = {mode: [] for mode in modes}

    def once(mode: str) -> float:
        attending(mode.endswith(ZEROED))
        scorer = scorers[mode]
        before, tokens, calls = dict(scorer.seconds), scorer.tokens_run, scorer.forward_calls
        read[0], ATTENTION_SECONDS[0] = 0, 0.0
        start = time.perf_counter()
        scorer.score(requests)
        seconds = time.perf_counter() - start
        runs[mode].append((seconds, scorer.seconds["rows"] - before["rows"], scorer.seconds["head"] - before["head"],
                           scorer.tokens_run - tokens, read[0], ATTENTION_SECONDS[0], scorer.forward_calls - calls))
        attending(False)
        return seconds

    spread.rounds({mode: (lambda mode=mode: once(mode)) for mode in modes}, repeats)

    def per(mode: str, what: str) -> list[float]:
        at = {"total": (0, 3), "rows": (1, 3), "head": (2, 4), "attention": (5, 3)}[what]
        return [1e6 * r[at[0]] / max(r[at[1]], 1) for r in runs[mode]]

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):8.1f} ({min(values):.1f}-{max(values):.1f})"

    print(f"{'mode':<10}{'ran':<23}{'tokens':>8}{'read':>8}{'calls':>6}   {'us/token: score':<26}"
          f"{'rows per token run':<27}{'of which attention':<27}{'head per position read':<27}"
          "rows vs no reuse     attention vs no reuse  head vs no reuse")
    for mode in modes:
        tokens, reads, calls = runs[mode][-1][3], runs[mode][-1][4], runs[mode][-1][6]
        versus, base = "", "none" + (ZEROED if mode.endswith(ZEROED) else "")  # a twin against no reuse's twin
        if base in runs:
            ratios = [[a / b for a, b in zip(per(mode, what), per(base, what))]
                      for what in ("rows", "attention", "head")]
            versus = "   ".join(f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})" for r in ratios)
        ran = str(scorers[mode].share_used)[:23]
        print(f"{mode:<10}{ran:<23}{tokens:>8,}{reads:>8,}{calls:>6}   {cell(per(mode, 'total')):<26}"
              f"{cell(per(mode, 'rows')):<27}{cell(per(mode, 'attention')):<27}{cell(per(mode, 'head')):<27}{versus}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=["intemplate", "plain", "yesno"], default="intemplate")
    ap.add_argument("--m", type=int, default=400, help="sentences of in-template LP and Yes/No (x5 templates)")
    ap.add_argument("--n", type=int, default=2000, help="sentences of plain LP")
    ap.add_argument("--shape", choices=sorted(bench.SHAPES), default=None)
    ap.add_argument("--real", choices=["smollm2"], default=None, help="SmolLM2-135M-Instruct's real weights")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", nargs="+", default=["none", "context", "prefix", "tree", "default"],
                    choices=sorted(bench.MODES))
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS)
    ap.add_argument("--profile", action="store_true", help="one cProfile run per mode, split into parts")
    ap.add_argument("--zero-attention", action="store_true",
                    help="each mode's twin without attention beside it (module docstring)")
    args = ap.parse_args()
    if args.profile and args.zero_attention:
        ap.error("--zero-attention times twins in interleaved rounds; --profile runs each mode once under cProfile")
    torch.set_num_threads(args.threads)
    print(spread.header(sys.argv), flush=True)
    model, tok = bench.build_model()
    described = "benchmark GPT-2 6x384, 8k BPE"
    if args.shape:
        tok = bench.shape_tokenizer(args.shape, tok)
        model = bench.build_shape(args.shape, tok)
        described = f"random {args.shape} shape, vocabulary {model.config.vocab_size:,}, tokenizer {len(tok):,}"
    elif args.real:
        from helpers.models import load

        real = load("smollm2-135m-instruct", dtype=torch.float32)
        model, tok, described = real.model, real.tokenizer, "SmolLM2-135M-Instruct (real), vocabulary 49,152"
    lm = LoadedModel.wrap(model, tok, name="profile-" + (args.shape or args.real or "gpt2"))
    requests = workload(args.workload, tok, args.m, args.n)
    read = [0]
    counted = readout.logprobs_at

    def counting(project, vocab, hidden, *rest, **kw):
        read[0] += int(hidden.shape[0])
        return counted(project, vocab, hidden, *rest, **kw)

    readout.logprobs_at = counting
    if not args.profile:
        print(f"{args.workload}: {len(requests)} requests; model {described}; {args.threads} threads; "
              f"{args.repeats} interleaved runs per mode, warm; medians (range)")
        modes = [m + twin for m in args.modes for twin in (("", ZEROED) if args.zero_attention else ("",))]
        timed(lm, requests, modes, args.repeats, read)
        print(f"# load average after: {spread.load_average()}")
        return
    print(f"{args.workload}: {len(requests)} requests; model {described}; "
          f"{args.threads} threads; us per token run (the head: per position read), one profiled run each, warm")
    rows = {}
    for mode in args.modes:
        scorer = CausalScorer(lm, **scorer_arguments(bench.MODES[mode][1], Settings(progress=False)))
        scorer.score(requests[:32])  # warm
        tokens, read[0] = scorer.tokens_run, 0
        profile = cProfile.Profile()
        profile.enable()
        scorer.score(requests)
        profile.disable()
        stats = pstats.Stats(profile)
        tokens = scorer.tokens_run - tokens
        part = {p: cumulative(stats, p) for p in PARTS}
        body = body_seconds(stats, model)
        batch = part["forward passes"] - part["head"] - part["masks"] - part["cache gather"] - body
        rows[mode] = dict(tokens=tokens, read=read[0], total=part["score"], rows=part["forward passes"] - part["head"],
                          batch=batch, masks=part["masks"], cache=part["cache gather"], body=body,
                          attention=part["attention"], head=part["head"],
                          outside=part["score"] - part["forward passes"], mode=scorer.share_used)
    base = rows.get("none")
    print(f"{'mode':<8}{'ran':>8}{'tokens':>9}{'read':>8}  {'total':>7}{'rows':>7}{'batch':>7}{'masks':>7}"
          f"{'cache':>7}{'body':>7}{'(attn)':>7}{'head/rd':>8}{'outside':>8}  rows vs no reuse, head vs no reuse")
    for mode, r in rows.items():
        per = {k: 1e6 * r[k] / r["tokens"] for k in ("total", "rows", "batch", "masks", "cache", "body", "attention",
                                                     "outside")}
        head = 1e6 * r["head"] / max(r["read"], 1)
        versus = "" if base is None else (f"  {per['rows'] / (1e6 * base['rows'] / base['tokens']):.2f}x, "
                                          f"{head / (1e6 * base['head'] / max(base['read'], 1)):.2f}x")
        print(f"{mode:<8}{str(r['mode']):>8}{r['tokens']:>9,}{r['read']:>8,}  {per['total']:7.1f}{per['rows']:7.1f}"
              f"{per['batch']:7.1f}{per['masks']:7.1f}{per['cache']:7.1f}{per['body']:7.1f}{per['attention']:7.1f}"
              f"{head:8.1f}{per['outside']:8.1f}{versus}")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
