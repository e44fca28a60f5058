"""Where a share mode's time goes beyond the tokens it runs (issue 74's profile): one workload
scored by each mode, warm, then once more under cProfile; per mode the tokens run and the
positions the head reads, and the time per token run of each part of the engine: building the
batch (ids, positions), the attention masks (the tree mask, FlexAttention's block mask, segment
blocks), gathering cached keys and values, the model's body (its attention beside it), the head
per position read, and what runs outside the forward passes (encoding, planning, scheduling,
results). cProfile's own overhead inflates Python-heavy parts alike in every mode; the parts'
ratios to no reuse's are what it is for, not the seconds.

    python benchmarks/profile_rows.py [--workload intemplate|plain|yesno] [--m 400] [--n 2000]
        [--shape smollm2-135m | gemma3-270m] [--modes none context prefix tree]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=["intemplate", "plain", "yesno"], default="intemplate")
    ap.add_argument("--m", type=int, default=400, help="sentences of in-template LP and Yes/No (x5 templates)")
    ap.add_argument("--n", type=int, default=2000, help="sentences of plain LP")
    ap.add_argument("--shape", choices=sorted(bench.SHAPES), default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", nargs="+", default=["none", "context", "prefix", "tree"], choices=sorted(bench.MODES))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(spread.header(sys.argv), flush=True)
    model, tok = bench.build_model()
    if args.shape:
        tok = bench.shape_tokenizer(args.shape, tok)
        model = bench.build_shape(args.shape, tok)
    lm = LoadedModel.wrap(model, tok, name="profile-" + (args.shape or "gpt2"))
    requests = workload(args.workload, tok, args.m, args.n)
    print(f"{args.workload}: {len(requests)} requests; model {args.shape or 'benchmark GPT-2 6x384, 8k BPE'}; "
          f"{args.threads} threads; us per token run (the head: per position read), one profiled run each, warm")
    read = [0]
    counted = readout.logprobs_at

    def counting(project, vocab, hidden, *rest, **kw):
        read[0] += int(hidden.shape[0])
        return counted(project, vocab, hidden, *rest, **kw)

    readout.logprobs_at = counting
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
