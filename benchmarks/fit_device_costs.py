"""Fit a device class's per-unit costs (``helpers.engine.cost_model.DEVICE_COSTS``) from timings.

On each model, ``share="auto"``'s probes (a short row, a long row, many short rows, a cached
context under continuations, packed short rows and packed long branches) are timed through the
executor (packed ones in each way packed rows attend on the device: segment or flex attention
and the dense mask) and the model's cost coefficients fitted (non-negative least squares,
:func:`helpers.engine.cost_model.calibrate`). Dividing each coefficient by what scales it in the
model's :class:`~helpers.engine.cost_model.ModelShape` (layers, multiply-adds per token, layers x
width, cached bytes per token) gives per-unit costs; the device class's are their geometric mean
over the models (:meth:`helpers.engine.cost_model.DeviceCosts.pooled`: features a model's probes
could not separate, fitted at the floor, are left out of the mean; one no model separated keeps
its shipped cost). The models on the CPU (float32): the project's demo-en, the benchmark GPT-2 (6 x
384, vocabulary 8,000), the real SmolLM2-135M-Instruct and a random model of Gemma 3 270M's shape
(18 x 640, vocabulary 262,144, sliding windows); on CUDA (bfloat16): demo-en and random Llama 3 1B
and 8B shapes (what travels with the repository; scripts/gpu_check.py runs it). It prints the
line to paste and, per model, which mode the coefficients timed on this machine, those of this
fit and the shipped ones choose on a primed and a plain workload.

    OMP_NUM_THREADS=2 python benchmarks/fit_device_costs.py [--models demo-en bench-gpt2 smollm2 gemma3-270m]
    python benchmarks/fit_device_costs.py --device cuda
"""
from __future__ import annotations

import argparse
import os
from dataclasses import fields
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from helpers.engine import CausalScorer, Request  # noqa: E402
from helpers.engine.cost_model import DEVICE_COSTS, DeviceCosts, ModelShape, device_class, shipped  # noqa: E402
from helpers.models import LoadedModel, load  # noqa: E402
from helpers.settings import Settings  # noqa: E402

MODELS = ("demo-en", "bench-gpt2", "smollm2", "gemma3-270m", "llama3-1b", "llama3-8b")
DEFAULT_MODELS = {"cpu": ("demo-en", "bench-gpt2", "smollm2", "gemma3-270m"),
                  "cuda": ("demo-en", "llama3-1b", "llama3-8b")}  # on a GPU: what travels with the repository


def build(name: str, device: str, dtype: torch.dtype) -> LoadedModel:
    from bench_scoring import build_model, build_shape, shape_tokenizer

    if name.startswith("llama3-"):  # random weights of a Llama 3 shape, built on the device
        from bench_gpu import random_llama

        loaded = random_llama(name, device)
        return LoadedModel.wrap(loaded.model.to(dtype), loaded.tokenizer, name=loaded.name)
    if name == "demo-en":
        return load("demo-en", dtype=dtype, device_map={"": device})
    if name == "smollm2":
        return load("smollm2-135m-instruct", dtype=dtype, device_map={"": device})
    model, tokenizer = build_model()
    if name == "gemma3-270m":  # a random model of Gemma 3 270M's shape (benchmarks/bench_scoring.py --shape)
        tokenizer = shape_tokenizer("gemma3-270m", tokenizer)
        model = build_shape("gemma3-270m", tokenizer)
    return LoadedModel.wrap(model.to(device=device, dtype=dtype), tokenizer, name=f"bench-{name}")


def workloads() -> dict[str, list[Request]]:
    prefix = ("The committee met on a grey morning in the old hall. Everyone had read the report, and nobody "
              "wanted to speak first. After a long silence the chair opened the window and began. ") * 4
    pairs = [("The cats near the door are asleep.", "The cats near the door is asleep."),
             ("Every student has finished the test.", "Every student have finished the test."),
             ("Who did the doctor say that left?", "Who did the doctor say left?")] * 8
    return {"primed": [Request(prefix + f"({k}) ", s) for k in range(4) for pair in pairs for s in pair],
            "plain": [Request("", s) for pair in pairs for s in pair]}


def chosen(scorer: CausalScorer, coefficients, requests: list[Request]) -> str:
    """The mode ``share="auto"`` would run on ``requests`` under ``coefficients``."""
    from helpers.engine import cost_model

    encoded = scorer.encode_many(requests)
    return cost_model.cheapest(scorer._auto.predict(encoded, [e.first for e in encoded], coefficients))


def costs_line(costs: DeviceCosts) -> str:
    """The line to paste into ``DEVICE_COSTS``."""
    return "DeviceCosts(" + ", ".join(f"{f.name}={getattr(costs, f.name):.3g}" for f in fields(costs)) + ")"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=None, choices=MODELS,
                    help="default: the device's (%s)" % "; ".join(f"{d}: {' '.join(m)}" for d, m in DEFAULT_MODELS.items()))
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default=None,
                    help="default: float32 on the CPU, bfloat16 on CUDA (what researchers run there)")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype or ("bfloat16" if args.device == "cuda" else "float32"))
    rows = []
    for name in args.models or DEFAULT_MODELS[args.device]:
        loaded = build(name, args.device, dtype)
        scorer = CausalScorer(loaded, Settings(progress=False))
        measured = scorer._auto.measured()
        shape = ModelShape.of(loaded.model)
        rows.append((name, loaded, scorer, measured, shape))
        print(f"{name}: {shape}; measured {measured}", flush=True)
        costs, kept = DeviceCosts.pooled([(measured, shape) for *_, measured, shape in rows],
                                         DEVICE_COSTS[device_class(args.device)])
        if len(rows) < len(args.models or DEFAULT_MODELS[args.device]):  # a run stopped early keeps what it fitted
            print(f"    so far ({len(rows)} models): {costs_line(costs)}", flush=True)
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"\n{device_class(args.device)} costs (geometric mean over {len(rows)} models, {where}, {dtype}):")
    print(f"    {costs_line(costs)}")
    if kept:
        print(f"    (no model's probes separated {', '.join(kept)}: the shipped costs are kept for them)")
    print("\n| model | workload | this machine's timing chooses | this fit chooses | the shipped costs choose |")
    print("|---|---|---|---|---|")
    for name, loaded, scorer, measured, shape in rows:
        fitted, ships = costs.coefficients(shape), shipped(loaded.model, args.device)
        for work, requests in workloads().items():
            print(f"| {name} | {work} | {chosen(scorer, measured, requests)} | {chosen(scorer, fitted, requests)} "
                  f"| {chosen(scorer, ships, requests)} |")


if __name__ == "__main__":
    main()
