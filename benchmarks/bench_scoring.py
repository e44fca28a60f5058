"""Engine throughput against minicons and lm-evaluation-harness, in one run.

A random-weight GPT-2-style model (6 layers, n_embd 384, byte-level BPE of about 8,000
tokens trained here on the WikiText-103 test text of the mirror) scores the first 2,000
BLiMP sentences (good and bad interleaved). Printed: sentences/s of
  - a plain length-sorted forward + log-softmax loop (the floor of plain LP scoring),
  - minicons IncrementalLMScorer.sequence_score (batches of 64),
  - lm-eval HFLM.loglikelihood with an empty context (batch 64),
  - this engine: plain LP, LP with pair-prefix sharing, and the 5 in-template
    templates with shared-context reuse on vs off,
with the ratios and the largest score difference of each comparison.

    python benchmarks/bench_scoring.py [--n 2000] [--threads 2] [--device cpu]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import paths  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.scoring import Request, Scorer  # noqa: E402


def blimp_sentences(n: int) -> list[str]:
    out = []
    for f in sorted((paths.mirror() / "blimp" / "data").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            row = json.loads(line)
            out += [row["sentence_good"], row["sentence_bad"]]
            if len(out) >= n:
                return out[:n]
    return out


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


@torch.no_grad()
def plain_loop(model, tok, texts: list[str], batch: int = 64) -> list[float]:
    """Length-sorted batches, one forward each, full log-softmax: the plain-LP floor."""
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
        lp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), -1)
        tok_lp = lp[:, :-1].gather(2, ids[:, 1:, None])[..., 0] * mask[:, 1:]
        for r, i in enumerate(idx):
            out[i] = float(tok_lp[r].double().sum())
    return out


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--skip-peers", action="store_true", help="only the engine and the plain loop")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    texts = blimp_sentences(args.n)
    model, tok = build_model()
    model.to(args.device)
    lm = LoadedModel.wrap(model, tok, name="bench-gpt2")
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: GPT-2 6x384, {n_params / 1e6:.1f}M parameters, vocab {len(tok)}; {len(texts)} BLiMP sentences; "
          f"{args.threads} threads, torch {torch.__version__}, device {args.device}")
    rows = []

    def report(name, n, seconds, ref=None, scores=None):
        diff = "" if ref is None else f"max |diff| {np.max(np.abs(np.array(scores) - np.array(ref))):.2e}"
        rows.append((name, n / seconds))
        print(f"{name:<52}{n / seconds:9.1f} sent/s  {diff}")

    plain_loop(model, tok, texts[:64])  # warm-up
    floor, t = timed(lambda: plain_loop(model, tok, texts))
    report("plain forward + log-softmax loop (floor)", len(texts), t)

    engine = Scorer(lm, progress=False, share="none")
    lp, t = timed(lambda: [s.total for s in engine.score_texts(texts)])
    report("engine LP (share=none)", len(texts), t, floor, lp)
    eng_none = len(texts) / t
    pref = Scorer(lm, progress=False, share="prefix")
    lp_prefix, t = timed(lambda: [s.total for s in pref.score_texts(texts)])
    report("engine LP (share=prefix: pair prefixes once)", len(texts), t, lp, lp_prefix)
    print(f"    tokens through the model: share=none {engine.tokens_run}, share=prefix {pref.tokens_run} "
          f"({1 - pref.tokens_run / engine.tokens_run:.0%} fewer)")

    if not args.skip_peers:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
        from minicons.scorer import IncrementalLMScorer

        mc = IncrementalLMScorer(model, device=args.device, tokenizer=tok)

        def run_minicons():
            out = []
            for b in range(0, len(texts), 64):
                out += mc.sequence_score(texts[b:b + 64], reduction=lambda x: x.sum(0).item())
            return out

        mc_scores, t = timed(run_minicons)
        ours_mc = [s.total for s in Scorer(lm, progress=False, minicons=True).score_texts(texts)]
        report("minicons sequence_score (batch 64)", len(texts), t, ours_mc, mc_scores)
        mc_rate = len(texts) / t

        lm = HFLM(pretrained=model, tokenizer=tok, batch_size=64, device=args.device)
        reqs = [Instance("loglikelihood", {}, ("", s), i) for i, s in enumerate(texts)]
        lme, t = timed(lambda: [x[0] for x in lm.loglikelihood(reqs, disable_tqdm=True)])
        report("lm-eval HFLM.loglikelihood, empty context (batch 64)", len(texts), t, lp, lme)
        lme_rate = len(texts) / t
        print(f"ratios: engine/minicons {eng_none / mc_rate:.2f}x, engine/lm-eval {eng_none / lme_rate:.2f}x, "
              f"engine(prefix)/lm-eval {rows[2][1] / lme_rate:.2f}x, engine/floor {eng_none / rows[0][1]:.2f}x")

    templates = single_templates()
    requests = [Request(tpl.split("{sentence}")[0], s + tpl.split("{sentence}")[1]) for tpl in templates for s in texts]
    off = Scorer(lm, progress=False, share="none")
    a, t_off = timed(lambda: off.score(requests, with_context=True))
    on = Scorer(lm, progress=False, share="context")
    b, t_on = timed(lambda: on.score(requests, with_context=True))
    both = Scorer(lm, progress=False, share="prefix")
    c, t_both = timed(lambda: both.score(requests, with_context=True))
    whole_a = [x.total + x.context_logprobs.sum() for x in a]
    whole_b = [x.total + x.context_logprobs.sum() for x in b]
    whole_c = [x.total + x.context_logprobs.sum() for x in c]
    report("in-template x5, reuse off (share=none)", len(requests), t_off)
    report("in-template x5, reuse on (share=context)", len(requests), t_on, whole_a, whole_b)
    report("in-template x5, reuse on (share=prefix, the default)", len(requests), t_both, whole_a, whole_c)
    print(f"shared-context reuse: {t_off / t_on:.2f}x faster on the 5 in-template templates "
          f"({t_off / t_both:.2f}x with pair prefixes shared too)")


if __name__ == "__main__":
    main()
