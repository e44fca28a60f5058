"""Engine throughput on a GPU: tokens/s and achieved TFLOP/s against the FLOP floor.

Scores BLiMP sentences (LP, and the 5 in-template templates with shared contexts) with a
model in bfloat16 and prints tokens through the model per second and the achieved
TFLOP/s, counting the forward pass as 2 x parameters x tokens (attention not counted: the
floor a perfect implementation would need), against the device's peak when known.
Without CUDA it says so and exits 0.

    python benchmarks/bench_gpu.py --model meta-llama/Meta-Llama-3-8B [--n 20000] [--token-budget 32768]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

# dense bf16 tensor-core peaks (TFLOP/s, without sparsity) from the vendors' data sheets
PEAK_BF16 = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "A6000": 154.8, "L40S": 362.0, "A10": 125.0}


def peak_for(name: str) -> float | None:
    for key, value in PEAK_BF16.items():
        if key in name.replace("RTX ", ""):
            return value
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="demo-en", help="registry name, local folder or Hugging Face id")
    ap.add_argument("--n", type=int, default=20000, help="BLiMP sentences")
    ap.add_argument("--token-budget", type=int, default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("bench_gpu needs a CUDA GPU; none is visible here (nothing measured)")
        return
    from bench_scoring import blimp_sentences, single_templates  # noqa: E402 (same folder)

    from helpers.models import load
    from helpers.scoring import Request, Scorer

    loaded = load(args.model, quant=None, dtype=torch.bfloat16)
    params = sum(p.numel() for p in loaded.model.parameters())
    device = torch.cuda.get_device_name(0)
    peak = peak_for(device)
    texts = blimp_sentences(args.n)
    templates = single_templates()
    workloads = {
        "LP (share=prefix)": [Request("", t) for t in texts],
        "in-template x5 (shared contexts)": [Request(tpl.split("{sentence}")[0], t + tpl.split("{sentence}")[1])
                                             for tpl in templates for t in texts[: args.n // 5]],
    }
    print(f"{args.model}: {params / 1e9:.2f}B parameters, bf16, {device}")
    for name, requests in workloads.items():
        scorer = Scorer(loaded, progress=False, token_budget=args.token_budget)
        scorer.score(requests[:256])  # warm-up (kernels, allocator)
        torch.cuda.synchronize()
        before = scorer.tokens_run
        start = time.perf_counter()
        scorer.score(requests)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        tokens = scorer.tokens_run - before
        tflops = 2 * params * tokens / seconds / 1e12
        of_peak = f", {tflops / peak:.0%} of the {peak:.0f} TFLOP/s bf16 peak" if peak else ""
        print(f"{name:<34} {len(requests):>7} requests  {tokens / seconds:>10,.0f} tokens/s  "
              f"{tflops:6.1f} TFLOP/s{of_peak}  (peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB)")


if __name__ == "__main__":
    main()
