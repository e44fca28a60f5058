"""Engine throughput on a GPU: tokens/s and achieved TFLOP/s against the FLOP floor.

Scores BLiMP sentences with a model in bfloat16:
  - plain LP: a plain length-sorted forward + log-softmax loop (the floor: every token of
    every sentence through the model), lm-eval's HFLM (where lm-eval is installed), the engine
    with no reuse, its share modes (packed rows under FlexAttention, segment attention or a
    dense mask) and its default (share="auto": the mode its cost model, from the shipped costs of
    the device class, predicts fastest; the row names it);
  - in-template LP (the 5 Ide et al. templates) and Yes/No (the 5 Ide et al. prompts, two answers
    each): lm-eval on the engine's own tokens, the engine with no reuse, its modes and its default;
  - priming (Sinha et al. 2023): ``--priming-pairs`` BLiMP pairs x 5 prefix types of
    ``--prefix-tokens`` tokens, LP under each prefix, with each share mode and the default;
  - plain LP in NF4 (``--nf4``): a copy of the model with every linear layer of its blocks
    quantized by bitsandbytes (4-bit NF4, bf16 compute; embeddings, norms and the head in bf16,
    as transformers loads ``quant="4bit"``), the plain loop, no reuse and the default.
For each it prints requests/s, tokens through the model per second and the achieved
TFLOP/s, counting a forward pass as 2 x parameters x tokens (attention not counted: the
floor a perfect implementation would need), against the device's bf16 peak (``--peak-tflops``,
else known for H100/H200/A100...), the peak GPU memory of the row, the mode auto ran, the
largest score difference against the no-reuse run and the share of pairs whose decision differs.
The rows the targets compare (the loop, lm-eval, no reuse, the default) run first in every
section, then each mode's row; under a time budget (``--seconds`` from the start, or ``--until``
a clock time, as scripts/gpu_check.py gives it) no row starts after it, and a mode's row that would
not end within it (twice its section's no-reuse time) is skipped and counted.

``--shape llama3-1b`` / ``--shape llama3-8b`` builds a model of that architecture with random
weights on the GPU (no download: throughput does not depend on the weights) with the demo
tokenizer and Llama 3's 128,256-row vocabulary; ``--model`` loads a real one instead.
Without CUDA it says so and exits 0; ``--cpu`` runs it on the CPU anyway (a smoke run of the
script with a tiny model and tiny sizes: its numbers mean nothing).

    python benchmarks/bench_gpu.py --shape llama3-8b [--n 20000] [--token-budget 32768] [--priming-pairs 100]
        [--seconds 420]
    python benchmarks/bench_gpu.py --model meta-llama/Meta-Llama-3-8B [--peak-tflops 989]
    python benchmarks/bench_gpu.py --cpu --model tiny-llama --n 40 --priming-pairs 2 --prefix-tokens 40
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

START = time.time()  # --seconds counts from here
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings, scorer_arguments  # noqa: E402

import torch  # noqa: E402

# dense bf16 tensor-core peaks (TFLOP/s, without sparsity) from the vendors' data sheets
PEAK_BF16 = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "A6000": 154.8, "L40S": 362.0, "A10": 125.0}

SECTIONS = {"plain": "1. plain LP", "template": "2. in-template LP", "yes/no": "3. Yes/No", "priming": "4. priming",
            "nf4": "5. plain LP in NF4"}

# Llama 3 architectures (the published configs' sizes)
SHAPES = {
    "llama3-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                      num_key_value_heads=8, tie_word_embeddings=True),
    "llama3-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                      num_key_value_heads=8, tie_word_embeddings=False),
}


def peak_for(name: str) -> float | None:
    for key, value in PEAK_BF16.items():
        if key in name.replace("RTX ", ""):
            return value
    return None


def random_llama(shape: str, device: str):
    """A Llama-3-shaped model with random bf16 weights and the demo-en tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from helpers.models import LoadedModel, load

    tokenizer = load("demo-en", dtype=torch.float32).tokenizer
    config = LlamaConfig(vocab_size=128256, max_position_embeddings=8192, rope_theta=500000.0,
                         bos_token_id=tokenizer.bos_token_id or tokenizer.eos_token_id,
                         eos_token_id=tokenizer.eos_token_id, attn_implementation="sdpa", **SHAPES[shape])
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    model.requires_grad_(False)
    return LoadedModel.wrap(model, tokenizer, name=f"random-{shape}")


@torch.no_grad()
def nf4_copy(model):
    """A copy of ``model`` whose blocks' linear layers are bitsandbytes NF4 (bf16 compute), each
    quantized from the copy's own weights on their device: the layers ``quant="4bit"`` quantizes
    (the head, embeddings and norms stay in bf16)."""
    import copy

    import bitsandbytes as bnb

    quantized = copy.deepcopy(model)
    blocks = quantized.get_decoder() if hasattr(quantized, "get_decoder") else quantized.base_model
    for parent in list(blocks.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is not torch.nn.Linear:
                continue
            four = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                     compute_dtype=torch.bfloat16, quant_type="nf4", device="meta")
            four.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False,
                                            quant_type="nf4").to(child.weight.device)
            if child.bias is not None:
                four.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(parent, name, four)
    return quantized.eval()


@torch.no_grad()
def plain_loop(model, ids_list: list[list[int]], pad: int, token_budget: int) -> list[float]:
    """Length-sorted batches of at most ``token_budget`` tokens, one forward each, float32
    log-softmax of every position: the plain-LP floor."""
    order = sorted(range(len(ids_list)), key=lambda i: len(ids_list[i]))
    out = [0.0] * len(ids_list)
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and (end + 1 - start) * len(ids_list[order[end]]) <= token_budget:
            end += 1
        idx = order[start:end]
        width = max(len(ids_list[i]) for i in idx)
        ids = torch.full((len(idx), width), pad, device=model.device)
        mask = torch.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, :len(ids_list[i])] = torch.tensor(ids_list[i])
            mask[r, :len(ids_list[i])] = 1
        lp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), -1)
        tok_lp = (lp[:, :-1].gather(2, ids[:, 1:, None])[..., 0] * mask[:, 1:]).double().sum(1).tolist()
        for r, i in enumerate(idx):
            out[i] = tok_lp[r]
        start = end
    return out


def timed(fn):
    """(value, seconds) of one call of ``fn``, the GPU synchronised around it."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    value = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return value, time.perf_counter() - start


def peak_memory_gib(reset: bool = False) -> float | None:
    """The GPU memory allocated at most since the last reset (GiB); None on the CPU."""
    if not torch.cuda.is_available():
        return None
    value = torch.cuda.max_memory_allocated() / 2**30
    if reset:
        torch.cuda.reset_peak_memory_stats()
    return value


def primed_requests(loaded, pairs: int, prefix_tokens: int) -> list:
    """LP requests of ``pairs`` BLiMP pairs (the first of each paradigm in turn) under 5 prefix
    types of ``prefix_tokens`` tokens each: (good, bad) per (pair, prefix type)."""
    from helpers import data
    from helpers.data import priming
    from helpers.data.selection import first_per_paradigm
    from helpers.engine import Request
    from helpers.engine.model_checks import max_positions

    blimp = data.load_processed("blimp")
    per = max(1, -(-pairs // blimp.paradigm.nunique()))
    targets = first_per_paradigm(blimp, per).head(pairs)
    prefixes = priming.build_prefixes(targets, priming.token_counter(loaded.tokenizer), pool=blimp,
                                      prefix_types=list(priming.PREFIX_TYPES)[:5], lengths=[prefix_tokens],
                                      max_positions=max_positions(loaded.model))
    sentences = targets.set_index(["paradigm", "pair_id"])[["good", "bad"]]
    return [Request(row.prefix + " ", sentences.loc[(row.paradigm, row.pair_id), side])
            for row in prefixes.itertuples() for side in ("good", "bad")]


def lm_eval_harness(model, tokenizer, on_gpu: bool):
    """lm-eval's HFLM around the loaded model (batch 64), or None where lm-eval is not installed."""
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        return None
    return HFLM(pretrained=model, tokenizer=tokenizer, batch_size=64, device="cuda" if on_gpu else "cpu")


def template_requests(sentences: list[str]) -> list:
    """In-template LP requests: each of the 5 Ide et al. templates around each sentence (the
    template's text before the sentence as context)."""
    from bench_scoring import single_templates

    from helpers.engine import Request

    return [Request(before, s + after) for before, after in (t.split("{sentence}") for t in single_templates())
            for s in sentences]


def yes_no_requests(tokenizer, sentences: list[str]) -> list:
    """Each Ide et al. Yes/No prompt for each sentence, with each answer."""
    from helpers.engine import Request
    from helpers.methods.answers import yes_no
    from helpers.methods.prompt_text import render
    from helpers.methods.templates import ide_templates

    yes, no = yes_no("en")
    return [Request(render(template, tokenizer, instruct=False, sentence=s), answer, separate=True)
            for template in ide_templates("yn") for s in sentences for answer in (yes, no)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="registry name, local folder or Hugging Face id")
    ap.add_argument("--shape", choices=sorted(SHAPES), default=None, help="a random-weight Llama 3 shape instead")
    ap.add_argument("--n", type=int, default=20000, help="BLiMP sentences")
    ap.add_argument("--token-budget", type=int, default=32768)
    ap.add_argument("--priming-pairs", type=int, default=100, help="BLiMP pairs under each of 5 prefix types")
    ap.add_argument("--prefix-tokens", type=int, default=800, help="priming prefix length in tokens")
    ap.add_argument("--peak-tflops", type=float, default=None, help="the device's bf16 peak (default: known devices)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="a time budget from the start: the target rows first, then each mode's row while one fits "
                         "(default: no limit)")
    ap.add_argument("--until", type=float, default=None, help="the budget as a clock time (seconds since the epoch)")
    ap.add_argument("--nf4", action="store_true", help="also plain LP on an NF4 copy of the model (section 5)")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (a smoke run: tiny model, tiny sizes)")
    args = ap.parse_args()
    if not torch.cuda.is_available() and not args.cpu:
        print("bench_gpu needs a CUDA GPU; none is visible here (nothing measured; --cpu runs a smoke run)")
        return
    from bench_scoring import blimp_sentences

    from helpers.models import LoadedModel, load
    from helpers.engine import Request, CausalScorer

    on_gpu = torch.cuda.is_available() and not args.cpu
    if args.shape:
        loaded = random_llama(args.shape, "cuda" if on_gpu else "cpu")
    else:
        loaded = load(args.model or "demo-en", quant=None, dtype=torch.bfloat16 if on_gpu else torch.float32)
    model = loaded.model
    params = sum(p.numel() for p in model.parameters())
    device = torch.cuda.get_device_name(0) if on_gpu else "CPU"
    peak = args.peak_tflops or peak_for(device)
    texts = blimp_sentences(args.n)
    print(f"{loaded.name}: {params / 1e9:.2f}B parameters, {next(model.parameters()).dtype}, {device}, "
          f"torch {torch.__version__}, "
          f"token budget {args.token_budget}")

    def row(name: str, n: int, seconds: float, tokens: int, diff: float | None = None, extra: str = "") -> None:
        tflops = 2 * params * tokens / seconds / 1e12
        of_peak = f" ({tflops / peak:.0%} of {peak:.0f})" if peak else ""
        d = "" if diff is None else f"  max |diff| {diff:.1e}"
        memory = peak_memory_gib(reset=True)
        mem = "" if memory is None else f"  peak {memory:.1f} GiB"
        print(f"  {name:<44} {n / seconds:>8,.0f} req/s {tokens:>10,} tokens {tokens / seconds:>10,.0f} tokens/s "
              f"{tflops:6.1f} TFLOP/s{of_peak}{mem}{d}{extra}")

    rates = {}

    def engine(requests, reference=None, lm=loaded, **options):
        settings = Settings(progress=False, token_budget=args.token_budget)
        scorer = CausalScorer(lm, **scorer_arguments(options, settings))
        scorer.score(requests[:512])  # warm-up (kernels, allocator, compilation)
        peak_memory_gib(reset=True)
        before = scorer.tokens_run
        scored, seconds = timed(lambda: scorer.score(requests))
        totals = [s.total for s in scored]
        diff = None if reference is None else max(abs(a - b) for a, b in zip(totals, reference))
        return totals, seconds, scorer.tokens_run - before, diff, scorer.share_used

    def flips(totals, reference) -> str:
        """The share of (good, bad) pairs whose decision differs from the reference's."""
        pairs = range(0, len(totals) - 1, 2)
        differ = sum((totals[i] > totals[i + 1]) != (reference[i] > reference[i + 1]) for i in pairs)
        return f"  decisions differ {differ / max(1, len(pairs)):.2%}"

    harness = lm_eval_harness(model, loaded.tokenizer, on_gpu)

    def lm_eval_row(section: str, requests) -> None:
        """lm-eval's loglikelihood on the engine's own tokens (the same work: the times compare the
        implementations)."""
        if harness is None:
            print("  lm-eval HFLM: not installed here (pip install lm-eval; scripts/gpu_check.py carries it)")
            return
        encoded = CausalScorer(loaded, Settings(progress=False)).encode_many(requests)
        reqs = [(("", ""), list(e.ids[:e.first]), list(e.ids[e.first:])) for e in encoded]
        harness._loglikelihood_tokens(reqs[:256], disable_tqdm=True)  # warm-up
        peak_memory_gib(reset=True)
        _, seconds = timed(lambda: harness._loglikelihood_tokens(reqs, disable_tqdm=True))
        rates[section, "lm-eval"] = len(requests) / seconds
        row("lm-eval HFLM.loglikelihood (batch 64)", len(requests), seconds, sum(len(e.ids) for e in encoded))

    def mode_row(section: str, requests, reference, name: str, options: dict, lm=loaded) -> None:
        try:
            totals, seconds, tokens, diff, used = engine(requests, reference, lm, **options)
        except ValueError as err:  # a way of attending whose start-up probe fails on this model or device
            print(f"  {name:<44} not usable here: {err}")
            return
        ran = f"  ran: {used}" if "share" not in options else ""
        row(name, len(requests), seconds, tokens, diff, ran + flips(totals, reference))
        if not options:
            rates[section, "default"] = len(requests) / seconds

    budgets = [t for t in (args.until, None if args.seconds is None else START + args.seconds) if t is not None]
    deadline = min(budgets, default=None)

    def spent(seconds: float = 0.0) -> bool:
        """Whether a row of ``seconds`` would end after the time budget."""
        return deadline is not None and time.time() + seconds > deadline
    measured = []  # (section, requests, the no-reuse totals, the no-reuse seconds)

    def targets(section: str, title: str | None, requests, floor=None, lm=loaded) -> None:
        """The rows the targets compare: lm-eval (on the bf16 model), no reuse (against the plain
        loop's sums where given) and the default, with the default's ratios."""
        if title:
            print(title)
        if spent():
            print("  skipped: the time budget is spent")
            return
        if lm is loaded:
            lm_eval_row(section, requests)
        if spent():
            print("  the engine's rows skipped: the time budget is spent")
            return
        reference, seconds, tokens, diff, _ = engine(requests, floor, lm, share="none")
        rates[section, "none"] = len(requests) / seconds
        row("engine, no reuse (share=none)" + (", against the loop" if floor else ""), len(requests), seconds,
            tokens, diff)
        if not spent():
            mode_row(section, requests, reference, "engine, default (share=auto)", {}, lm)
        ratios = [f"{rates[section, 'default'] / rates[section, base]:.2f}x {label}"
                  for base, label in (("none", "no reuse"), ("lm-eval", "lm-eval"), ("loop", "the plain loop"))
                  if (section, base) in rates and (section, "default") in rates]
        print("  default vs " + (", ".join(ratios) or "nothing (the default did not run)"))
        if lm is loaded:  # each mode's row (section 6) runs on the bf16 model
            measured.append((section, requests, reference, seconds))

    print(f"1. plain LP, {len(texts)} BLiMP sentences")
    plain = [Request("", t) for t in texts]
    ids = [list(e.ids) for e in CausalScorer(loaded, Settings(progress=False)).encode_many(plain)]
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    plain_loop(model, ids[:512], pad, args.token_budget)  # warm-up
    floor, seconds = timed(lambda: plain_loop(model, ids, pad, args.token_budget))
    rates["plain", "loop"] = len(texts) / seconds
    row("plain forward + log-softmax loop (floor)", len(texts), seconds, sum(map(len, ids)))
    targets("plain", None, plain, floor)
    m = len(texts) // 5
    requests = template_requests(texts[:m])
    targets("template", f"2. in-template LP, 5 templates x {m} sentences", requests)
    targets("yes/no", f"3. Yes/No, 5 prompts x {m} sentences x 2 answers", yes_no_requests(loaded.tokenizer, texts[:m]))
    primed = primed_requests(loaded, args.priming_pairs, args.prefix_tokens)
    targets("priming", f"4. priming: {args.priming_pairs} pairs x 5 prefix types of {args.prefix_tokens} tokens "
                       f"({len(primed)} requests)", primed)
    if args.nf4 and not spent():
        nf4 = LoadedModel.wrap(nf4_copy(model), loaded.tokenizer, name=f"{loaded.name}-nf4")
        print(f"{SECTIONS['nf4']} (bitsandbytes 4-bit, bf16 compute; head in bf16), {len(texts)} BLiMP sentences")
        plain_loop(nf4.model, ids[:512], pad, args.token_budget)  # warm-up
        floor4, seconds = timed(lambda: plain_loop(nf4.model, ids, pad, args.token_budget))
        rates["nf4", "loop"] = len(texts) / seconds
        row("plain forward + log-softmax loop (floor)", len(texts), seconds, sum(map(len, ids)))
        targets("nf4", None, plain, floor4, lm=nf4)
        del nf4
        if on_gpu:
            torch.cuda.empty_cache()

    packed = [("engine, share=tree, packed rows under " + label, dict(share="tree", attention=how))
              for how, label in (("flex", "FlexAttention"), ("segments", "segment attention"),
                                 ("dense", "a dense mask"))]
    shares = (("engine, share=prefix, cached levels", dict(share="prefix", pack=False)),
              ("engine, share=prefix, packed", dict(share="prefix")),
              ("engine, share=tree, packing from 16 tokens", dict(share="tree", pack_min_stem=16)), *packed)
    print("6. each share mode and way of attending, against no reuse (in the time budget's order: a row that would"
          " not end in it is skipped)")
    for section, requests, reference, none_seconds in measured:
        print(f"  {SECTIONS[section]}")
        skipped = 0
        for name, options in shares:
            if spent(2 * none_seconds):
                skipped += 1
                continue
            mode_row(section, requests, reference, name, options)
        if skipped:
            print(f"  {skipped} of {len(shares)} rows skipped: the time budget is spent")
    print("targets (one H100 or H200, random Llama 3 8B, bf16): each engine row's tokens/s >= 90% of no reuse's, "
          "no reuse >= 95% of the loop's; plain LP default >= 1.6x the loop and >= 2x lm-eval; in-template >= 3.5x "
          "and priming >= 1.8x no reuse; NF4 default >= 1.5x the NF4 loop")


if __name__ == "__main__":
    main()
