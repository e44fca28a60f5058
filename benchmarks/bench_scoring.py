"""The engine against what users would pick instead, in one run, with identical scores.

A random-weight GPT-2-style model (6 layers, n_embd 384, byte-level BPE of about 8,000
tokens trained here on the WikiText-103 test text of the mirror) on BLiMP sentences:

  1. plain LP over the first N sentences (good and bad interleaved): a plain length-sorted
     forward + log-softmax loop (the floor), minicons IncrementalLMScorer.sequence_score,
     lm-eval HFLM.loglikelihood with an empty context, and this engine (no reuse; pair
     prefixes shared, packed; the same with cached levels instead of packing);
  2. in-template LP (the 5 Ide et al. templates) over the first M sentences: lm-eval's
     loglikelihood of (template prefix, sentence + suffix) vs the engine;
  3. Yes/No (the 5 Ide et al. prompts) over the first M sentences: lm-eval's loglikelihood of
     "Yes"/"No" after the prompt vs the engine.
In 2 and 3 lm-eval gets the engine's own token ids (HFLM._loglikelihood_tokens: its string
API would move the context's trailing space into the continuation and add no start token,
scoring other tokens), so both do the same work and the scores must agree.

The contenders of a section run interleaved (benchmarks/spread.py: A B ..., the order reversed
every other round), each warmed up once on 16 requests, then ``--repeats`` (at least 5) times. For
each: the median requests/s and time with its range, tokens through the model and time per token
(the floor's time per token is the yardstick: "time follows tokens" means the same time per token
with fewer tokens), the speed-up over lm-eval as the median of the per-round ratios with their range,
and the largest score difference against lm-eval (for plain LP also against a float64 run, and the
engine against lm-eval both on a float64 copy of the model, where lm-eval's float32 sums drop out).
Where more than one mode ran, the mode ``share="auto"`` chose is printed beside the fastest mode's.

    python benchmarks/bench_scoring.py [--n 2000] [--m 400] [--threads 2] [--repeats 5]
        [--shape smollm2-135m | gemma3-270m] [--real smollm2] [--sections 1 2 3] [--modes none default ...]

``--shape`` runs a random model of a real model's shape (SmolLM2-135M: 30 x 576, vocabulary
49,152, on the benchmark tokenizer's ids; Gemma 3 270M: 18 x 640, vocabulary 262,144, sliding
windows, on a real tokenizer of that size, Gemma 4's), where the vocabulary head is most of the
work; ``--real smollm2`` the real SmolLM2-135M-Instruct weights with their own tokenizer.
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from helpers.settings import Settings, scorer_arguments  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import data, paths  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402


def blimp_sentences(n: int) -> list[str]:
    """The first ``n`` BLiMP sentences, good then bad of each pair (from the processed table,
    prepared from the mirror the first time)."""
    blimp = data.load_processed("blimp").head(-(-n // 2))
    return [s for good, bad in zip(blimp.good, blimp.bad) for s in (good, bad)][:n]


def single_templates() -> list[str]:
    folder = paths.mirror() / "ide2024-templates" / "templates_ll"
    return [(folder / f"template_blimp_single_{i}.txt").read_text() for i in range(1, 6)]


def build_model(vocab: int = 8000, seed: int = 0):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    text = (paths.mirror() / "wikitext103-test" / "wikitext-raw_test.raw").read_text().splitlines()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<|endoftext|>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(n_layer=6, n_embd=384, n_head=6, n_positions=1024, vocab_size=tok.get_vocab_size(),
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    model.requires_grad_(False)
    return model, fast


# Random models of real shapes (``--shape``): their vocabulary heads are what researchers' models
# spend their time in. SmolLM2's shape reads the benchmark tokenizer's ids (the first 8,000 rows of
# the head are used, every row is computed); Gemma 3's reads a real tokenizer of its size, Gemma 4's
# 262,144 tokens (``gemma_tokenizer.py``), so its sentences run as many tokens as a real 262k model's.
SHAPES = {
    "smollm2-135m": ("LlamaConfig", dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                                         num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True,
                                         max_position_embeddings=8192)),
    "gemma3-270m": ("Gemma3TextConfig", dict(vocab_size=262144, hidden_size=640, intermediate_size=2048,
                                             num_hidden_layers=18, num_attention_heads=4, num_key_value_heads=1,
                                             head_dim=256, sliding_window=512, max_position_embeddings=32768)),
}


def shape_tokenizer(shape: str, tokenizer):
    """The tokenizer ``shape``'s model reads: a real one of its vocabulary's size where there is one."""
    if shape == "gemma3-270m":
        from gemma_tokenizer import gemma4_tokenizer

        return gemma4_tokenizer()
    return tokenizer


def build_shape(shape: str, tokenizer, seed: int = 0):
    """A random model of ``shape`` (:data:`SHAPES`) for ``tokenizer``'s ids, float32, eval mode."""
    import transformers

    config_class, sizes = SHAPES[shape]
    model_class = {"LlamaConfig": "LlamaForCausalLM", "Gemma3TextConfig": "Gemma3ForCausalLM"}[config_class]
    special = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    config = getattr(transformers, config_class)(bos_token_id=special, eos_token_id=tokenizer.eos_token_id,
                                                 pad_token_id=tokenizer.pad_token_id or 0, attn_implementation="sdpa",
                                                 **sizes)
    torch.manual_seed(seed)
    model = getattr(transformers, model_class)(config).eval()
    model.requires_grad_(False)
    return model


@torch.no_grad()
def plain_loop(model, tok, texts: list[str], batch: int = 64, dtype=torch.float32) -> list[float]:
    """Length-sorted batches, one forward each, full log-softmax (in ``dtype``): the plain-LP
    floor (a float64 model with ``dtype=torch.float64``: the exact reference)."""
    enc = [[tok.eos_token_id] + tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
    out = [0.0] * len(enc)
    for b in range(0, len(order), batch):
        idx = order[b:b + batch]
        width = max(len(enc[i]) for i in idx)
        ids = torch.full((len(idx), width), tok.pad_token_id)
        mask = torch.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, :len(enc[i])] = torch.tensor(enc[i])
            mask[r, :len(enc[i])] = 1
        lp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.to(dtype), -1)
        tok_lp = lp[:, :-1].gather(2, ids[:, 1:, None])[..., 0] * mask[:, 1:]
        for r, i in enumerate(idx):
            out[i] = float(tok_lp[r].double().sum())
    return out


def floor_tokens(tok, texts: list[str]) -> int:
    return sum(1 + len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts)


class Table:
    """Printed rows of one section, from a :class:`spread.Contest` run: median requests/s, the
    median time with its range, tokens, time per token and its ratio to the floor's, max |diff|,
    and the median per-round speed-up over the section's baseline (lm-eval) with its range."""

    def __init__(self, contest: spread.Contest, baseline: str, per_token_floor: float | None = None):
        self.contest, self.baseline, self.floor = contest, baseline, per_token_floor
        self.cost: dict[str, tuple[float, int | None]] = {}
        self.split: dict[str, dict] = {}

    def row(self, name: str, n: int, tokens: int | None = None, diff: float | None = None,
            split: dict | None = None) -> None:
        seconds = self.contest.median(name)
        self.cost[name] = (seconds, tokens)
        if split is not None:
            self.split[name] = split
        floor = "" if self.floor is None or tokens is None else f" ({seconds / tokens / self.floor:4.2f}x the floor's)"
        per_token = "" if tokens is None else f" {tokens:>9,} tokens {1e6 * seconds / tokens:7.1f} us/token{floor}"
        d = "" if diff is None else f"  max |diff| {diff:.1e}"
        vs = "" if name == self.baseline else f"  {self.contest.against(self.baseline, name)} lm-eval"
        print(f"  {name:<50}{n / seconds:8.1f} req/s  {spread.describe(self.contest.seconds[name])}{per_token}{d}{vs}")

    def follows(self, name: str, base: str) -> None:
        """Whether time follows tokens: ``name``'s share of ``base``'s tokens and of its time."""
        (t, n), (t0, n0) = self.cost[name], self.cost[base]
        print(f"  time follows tokens: {name.split(' (')[0]} runs {n / n0:.2f}x the tokens of '{base}' "
              f"in {t / t0:.2f}x its time (tokens saved {1 - n / n0:.0%}, time saved {1 - t / t0:.0%}; "
              f"the tokens bound the speed-up at {n0 / n:.2f}x)")
        if name in self.split and base in self.split:
            (rows, head), (rows0, head0) = ((self.split[k]["rows"], self.split[k]["head"]) for k in (name, base))
            print(f"    running rows: {rows / rows0:.2f}x the time (saved {1 - rows / rows0:.0%}); the head (a "
                  f"vocabulary log-softmax per position read; sharing removes only positions read twice): {head:.2f} s "
                  f"against {head0:.2f} s, {head / t:.0%} of the time")

    def chosen(self, default: str, mode: str, modes: list[str]) -> None:
        """The mode ``share="auto"`` ran beside the fastest mode's median (item 4 of issue 65)."""
        fastest = min(modes, key=self.contest.median)
        print(f"  share=\"auto\" ran {mode!r}; the fastest mode by median time: '{fastest}' "
              f"(the default at {self.contest.against(fastest, default)} its speed)")


def max_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))


class EngineRun:
    """One engine contender: its scorer built once, each call scoring ``requests`` and keeping the
    tokens it ran, where its time went (``CausalScorer.seconds``: rows, head, ...) and the mode it ran."""

    def __init__(self, lm, requests, **options):
        self.scorer = CausalScorer(lm, **scorer_arguments(options, Settings(progress=False)))
        self.requests, self.splits, self.tokens, self.mode = requests, [], 0, None

    def __call__(self, requests=None) -> list[float]:
        tokens, seconds = self.scorer.tokens_run, dict(self.scorer.seconds)
        totals = [s.total for s in self.scorer.score(self.requests if requests is None else requests)]
        if requests is None:  # a timed run (a warm-up passes its own requests)
            self.tokens = self.scorer.tokens_run - tokens
            self.splits.append({k: v - seconds.get(k, 0.0) for k, v in self.scorer.seconds.items()})
            self.mode = self.scorer.share_used
        return totals

    def split(self) -> dict[str, float]:
        """The median of each part's seconds over the timed runs."""
        return {k: statistics.median(s[k] for s in self.splits) for k in self.splits[0]}


def float64_checks(model, tok, texts, plain, default, floor, lme, args, instances, loglikelihoods) -> None:
    """The engine, lm-eval and the float32 floor against a float64 run of the same model, and the
    engine against lm-eval both on the float64 model (what is left is the engine's float32
    log-softmax, not lm-eval's sums)."""
    from lm_eval.models.huggingface import HFLM

    model64 = copy.deepcopy(model).double()
    exact = plain_loop(model64, tok, texts, dtype=torch.float64)
    print(f"  against a float64 run of the same model: engine (default) max |diff| {max_diff(default, exact):.1e}, "
          f"lm-eval {max_diff(lme, exact):.1e}, the float32 floor {max_diff(floor, exact):.1e}")
    lme64 = loglikelihoods(HFLM(pretrained=model64, tokenizer=tok, batch_size=64, device=args.device),
                           instances([("", s) for s in texts]))
    ours64 = [s.total for s in CausalScorer(LoadedModel.wrap(model64, tok, name="bench-gpt2-f64"),
                                            Settings(progress=False)).score(plain)]
    print(f"  both on the float64 model: engine (default) vs lm-eval max |diff| {max_diff(ours64, lme64):.1e}, "
          f"lm-eval vs the float64 loop {max_diff(lme64, exact):.1e}")


def model_type(shape: str) -> str:
    return SHAPES[shape][0].removesuffix("Config").removesuffix("Text")


MODES = {  # --modes: the engine's contenders, by short name
    "none": ("engine, no reuse (share=none)", dict(share="none")),
    "levels": ("engine, pairs' prefixes shared, cached levels", dict(share="prefix", pack=False)),
    "context": ("engine, template prefixes shared (share=context)", dict(share="context")),
    "prefix": ("engine, share=prefix, packed", dict(share="prefix")),
    "tree": ("engine, share=tree, packed", dict(share="tree")),
    "dense": ("engine, share=tree with a dense tree mask (attention='dense')", dict(share="tree", attention="dense")),
    "default": ("engine, default (share=auto)", dict()),
}
DEFAULT = MODES["default"][0]
SECTION_MODES = {1: ("none", "levels", "prefix", "tree", "dense", "default"),
                 2: ("none", "context", "prefix", "tree", "default"), 3: ("none", "prefix", "tree", "default")}


def contest(entries: dict, requests_n: int, repeats: int, warm: int = 16) -> spread.Contest:
    """Each entry ``name: fn(subset or None)`` warmed up once on ``warm`` items, then all timed
    interleaved (``fn(None)`` runs the whole workload)."""
    match = spread.Contest()
    for name, fn in entries.items():
        fn(warm)
        match.add(name, lambda fn=fn: fn(None))
    print(f"  ({len(entries)} contenders x {repeats} interleaved runs over {requests_n} requests)", flush=True)
    match.run(repeats)
    return match


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="sentences for plain LP")
    ap.add_argument("--m", type=int, default=400, help="sentences for in-template LP and Yes/No (x5 templates)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each contender")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--shape", choices=sorted(SHAPES), default=None,
                    help="a random model of this real model's shape instead of the benchmark GPT-2")
    ap.add_argument("--real", choices=["smollm2"], default=None,
                    help="the real SmolLM2-135M-Instruct weights (python -m helpers fetch-model smollm2-135m-instruct)")
    ap.add_argument("--sections", type=int, nargs="+", choices=[1, 2, 3], default=[1, 2, 3],
                    help="which sections to run (1 plain LP, 2 in-template LP, 3 Yes/No; default all)")
    ap.add_argument("--modes", nargs="+", choices=sorted(MODES), default=sorted(MODES),
                    help="the engine's contenders (default all a section has; 'default' always runs)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    from minicons.scorer import IncrementalLMScorer

    from helpers.methods.answers import yes_no
    from helpers.methods.prompt_text import render
    from helpers.methods.templates import ide_templates

    print(spread.header(sys.argv), flush=True)
    texts = blimp_sentences(args.n)
    model, tok = build_model()
    described = "GPT-2 6x384"
    if args.shape:
        tok = shape_tokenizer(args.shape, tok)
        model, described = build_shape(args.shape, tok), f"random {args.shape}-shaped {model_type(args.shape)}"
    elif args.real:
        from helpers.models import load

        real = load("smollm2-135m-instruct", dtype=torch.float32)
        model, tok, described = real.model, real.tokenizer, "SmolLM2-135M-Instruct (real weights, Q4_1 GGUF dequantized)"
    model.to(args.device)
    lm = LoadedModel.wrap(model, tok, name="bench-" + (args.shape or args.real or "gpt2"))
    n_params = sum(p.numel() for p in model.parameters())
    vocab = model.get_output_embeddings().weight.shape[0]
    print(f"model: {described}, {n_params / 1e6:.1f}M parameters, vocabulary head {vocab:,} (tokenizer {len(tok):,}); "
          f"{args.threads} threads, torch {torch.__version__}, device {args.device}; {args.repeats} interleaved runs "
          f"each, medians (range); speed-ups are medians of the per-round ratios (range)")
    hflm = HFLM(pretrained=model, tokenizer=tok, batch_size=64, device=args.device)

    def instances(pairs):
        return [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]

    def loglikelihoods(harness, reqs):
        return [x[0] for x in harness.loglikelihood(reqs, disable_tqdm=True)]

    def engines(requests, section: int) -> dict:
        return {MODES[m][0]: EngineRun(lm, requests, **MODES[m][1])
                for m in SECTION_MODES[section] if m in args.modes or m == "default"}

    def report(table: Table, runs: dict, requests_n: int, reference) -> None:
        for name, run in runs.items():
            table.row(name, requests_n, run.tokens, max_diff(table.contest.values[name], reference), run.split())
        if "engine, no reuse (share=none)" in runs:
            table.follows(DEFAULT, "engine, no reuse (share=none)")
        if len(runs) > 2:
            table.chosen(DEFAULT, runs[DEFAULT].mode, [n for n in runs if n != DEFAULT])

    lm_eval_name = "lm-eval HFLM.loglikelihood, empty context (batch 64)"
    # ---------------------------------------------------------------- 1. plain LP
    if 1 in args.sections:
        print(f"1. plain LP, {len(texts)} BLiMP sentences", flush=True)
        mc = IncrementalLMScorer(model, device=args.device, tokenizer=tok)

        def run_minicons(k):
            some, out = texts if k is None else texts[:k], []
            for b in range(0, len(some), 64):
                out += mc.sequence_score(some[b:b + 64], reduction=lambda x: x.sum(0).item())
            return out

        plain = [Request("", s) for s in texts]
        runs = engines(plain, 1)
        floor_name, mc_name = "plain forward + log-softmax loop (floor)", "minicons sequence_score (batch 64)"
        match = contest({floor_name: lambda k: plain_loop(model, tok, texts if k is None else texts[:k]),
                         mc_name: run_minicons,
                         lm_eval_name: lambda k: loglikelihoods(hflm, instances([("", s) for s in texts[:k]])),
                         **{name: (lambda k, run=run: run(plain[:k]) if k else run()) for name, run in runs.items()}},
                        len(texts), args.repeats)
        n_floor = floor_tokens(tok, texts)
        table = Table(match, lm_eval_name, match.median(floor_name) / n_floor)
        lme = match.values[lm_eval_name]
        table.row(floor_name, len(texts), n_floor)
        ours_mc = [s.total for s in CausalScorer(lm, Settings(progress=False, start="minicons")).score_texts(texts)]
        table.row(mc_name, len(texts), diff=max_diff(ours_mc, match.values[mc_name]))
        table.row(lm_eval_name, len(texts))
        report(table, runs, len(texts), lme)
        table.follows(DEFAULT, floor_name)
        if args.shape or args.real:
            print("  (the float64 checks run on the benchmark model only)")
        else:
            float64_checks(model, tok, texts, plain, match.values[DEFAULT], match.values[floor_name], lme, args,
                           instances, loglikelihoods)
        print(f"  engine (default) vs lm-eval {match.against(lm_eval_name, DEFAULT)}, vs minicons "
              f"{match.against(mc_name, DEFAULT)}, vs the floor {match.against(floor_name, DEFAULT)}")

    def compare(requests, name: str, section: int) -> None:
        """lm-eval on exactly the engine's tokens (context ids, continuation ids: the same work, so
        the scores must agree and the times compare the implementations), then the engine's modes."""
        encoded = CausalScorer(lm, Settings(progress=False)).encode_many(requests)
        reqs = [(("", ""), list(e.ids[:e.first]), list(e.ids[e.first:])) for e in encoded]
        runs = engines(requests, section)
        match = contest({name: lambda k: [x[0] for x in hflm._loglikelihood_tokens(reqs[:k], disable_tqdm=True)],
                         **{n: (lambda k, run=run: run(requests[:k]) if k else run()) for n, run in runs.items()}},
                        len(requests), args.repeats)
        table = Table(match, name)
        table.row(name, len(requests))
        report(table, runs, len(requests), match.values[name])
        print(f"  engine (default) vs lm-eval {match.against(name, DEFAULT)}")

    sentences = texts[:args.m]
    # ---------------------------------------------------------------- 2. in-template LP
    if 2 in args.sections:
        requests = [Request(before, s + after) for before, after in (t.split() for t in ide_templates("single"))
                    for s in sentences]
        print(f"2. in-template LP, 5 templates x {len(sentences)} sentences = {len(requests)} requests", flush=True)
        compare(requests, "lm-eval loglikelihood(template prefix, sentence + suffix)", 2)

    # ---------------------------------------------------------------- 3. Yes/No
    if 3 in args.sections:
        yes, no = yes_no("en")
        requests = [Request(render(template, tok, instruct=False, sentence=s), answer, separate=True)
                    for template in ide_templates("yn") for s in sentences for answer in (yes, no)]
        print(f"3. Yes/No, 5 prompts x {len(sentences)} sentences x 2 answers = {len(requests)} requests", flush=True)
        compare(requests, "lm-eval loglikelihood(prompt, answer)", 3)
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
