"""The GPU verification in one command, writing one results file.

1. Conformance on CUDA: tiny random models of four families (Llama, Qwen2, Mistral's sliding window
   on every layer, Gemma 2's soft-capping with sliding and full layers), loaded in float32 and in
   bfloat16 on the GPU and scored in every share mode (packed rows under the device's default,
   FlexAttention compiled on CUDA, and under the dense mask), each request's per-token log-probs
   against a float64 forward on the CPU. In float32 the engine must be within 1e-4 nats; in
   bfloat16 no further from float64, per share mode, than 1.1 times a plain bfloat16 forward (the
   model's own, with a float32 log-softmax) is at worst over batch shapes (each request alone or
   all in one padded batch, whole or as the engine feeds it: half-precision kernels round by
   shape). Then each model in float32 split over two devices by a device map
   (two GPUs where there are two, else the GPU and the CPU; in the dry run, the CPU and the
   disk), every layer's hooks placed by accelerate, within 1e-4 nats in every share mode; and
   the decisions of the default mode on a trained model (demo-en, bfloat16) against a plain
   bfloat16 forward's on BLiMP pairs: equal on 99.5% of them at least.
2. The float32 head in bfloat16: the same bfloat16 models with the head rounded to bfloat16 (the
   engine before the float32 head) and with the float32 head, each one's distance from float64.
3. The tests marked ``gpu`` (tests/test_gpu.py: compiled FlexAttention, bfloat16 and NF4 on CUDA,
   a device map split between the GPU and the CPU).
4. The device costs of the plan (benchmarks/fit_device_costs.py --device cuda): the line to paste
   into ``helpers.engine.cost_model.DEVICE_COSTS["cuda"]``.
5. ``benchmarks/bench_gpu_targets.py`` on a random Llama 3 8B in bfloat16: the rows the GPU targets
   compare, each as 5 interleaved runs (medians and ranges): plain LP, the default against the plain
   loop and lm-eval; in-template LP and 800-token priming, the default against no reuse; plain LP
   on an NF4 copy, the default against the NF4 loop; its output appended. (``bench_gpu.py`` runs
   every mode once, for a longer session.)

The check keeps to ``--minutes`` (8), counted once the carried wheels are installed, and prints its
plan first (:mod:`benchmarks.gpu_plan`: each part's estimate on one H100, the total against the
limit; the dry run prints it too): steps 1-4 each stop at their share (:data:`SHARES_OF_TIME`:
conformance between two models, the others killed, their output so far kept), and the benchmark
gets the rest, in which it starts no section after the limit. Conformance compiles FlexAttention
until the compiler's recompile limit, then runs it eagerly (as exact); tests/test_gpu.py checks the
compiled path itself.

Without CUDA it refuses to start, except with ``--dry-run``: the same steps on the CPU with tiny
sizes (a test runs it). It needs torch with CUDA and the repository; no package index: what the
machine's image lacks travels as wheels in ``.whl/`` (``bash scripts/gpu_wheels.sh`` fetches them),
installed from there into a scratch folder before anything is imported; the data it reads
travels as ``data/processed`` and ``.gpu_mirror/`` (``python scripts/gpu_pack.py``, which
gpu_wheels.sh runs). On a lent machine: carry ``.whl``, ``.gpu_mirror`` and ``data/processed``.

    python scripts/gpu_check.py [--out outputs/gpu_check.txt] [--minutes 8]
    python scripts/gpu_check.py --dry-run --out /tmp/gpu_check.txt
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
SITE = Path(tempfile.gettempdir()) / "helpers-gpu-site"


def carried_wheels() -> None:
    """Install the wheels of ``.whl/`` (if any) into :data:`SITE` and run this script again with
    them on the path (once: the rerun finds ``HELPERS_GPU_SITE`` set)."""
    wheels = sorted((ROOT / ".whl").glob("*.whl"))
    if not wheels or os.environ.get("HELPERS_GPU_SITE") or "--dry-run" in sys.argv:
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--no-cache-dir", "--upgrade", "--target", str(SITE), *map(str, wheels)], check=True)
    env = dict(os.environ, HELPERS_GPU_SITE=str(SITE),
               PYTHONPATH=os.pathsep.join(filter(None, [str(SITE), str(ROOT), os.environ.get("PYTHONPATH")])))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


if __name__ == "__main__":
    carried_wheels()
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers.settings import Settings  # noqa: E402

import gpu_pack  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import gpu_plan  # noqa: E402

# Gemma 2 and Mistral first: soft-capping and windows, compiled while the recompile limit lasts
ARCHITECTURES = ("gemma2", "mistral", "qwen2", "llama")
SHARES = ("none", "context", "prefix", "tree", "auto")
# packed rows under each way of attending, named (the device's default runs in "prefix" and "tree")
ATTENTIONS = ("flex", "dense")
CONTEXT = "Is the following sentence grammatically acceptable? "
TEXTS = ["The old cat sees the young dog near the river and the small bird watches the famous teacher.",
         "The old cat sees the young dog near the river and the small birds watches the famous teacher.",
         "Every careful student helps a quiet doctor in the green garden.",
         "Every careful student help a quiet doctor in the green garden."]
FLOAT32_TOLERANCE = 1e-4  # nats
BF16_MARGIN = 1.1  # bfloat16 is held to this times a plain bfloat16 forward's distance from float64
DECISIONS_AGREE = 0.995  # of BLiMP pairs, the default mode's decisions as a plain bfloat16 forward's
SHARES_OF_TIME = {"conformance": 100, "tests": 100, "costs": 60}  # seconds; the benchmark gets the rest
BENCH_EXIT = 20  # seconds the benchmark is given to end after its budget (a row under way, its exit)


class Report:
    """Lines printed and kept for the results file."""

    def __init__(self, path: Path):
        self.path, self.lines, self.failures = path, [], []

    def say(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")

    def fail(self, what: str) -> None:
        self.failures.append(what)
        self.say(f"  FAIL {what}")


def requests():
    from helpers.engine import Request

    return [Request("", t) for t in TEXTS] + [Request(CONTEXT, t) for t in TEXTS]


@torch.no_grad()
def float64_reference(folder: Path, scorer, reqs) -> list[np.ndarray]:
    """Each request's target log-probs from a float64 copy on the CPU, the whole sequence alone."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float64, attn_implementation="eager").eval()
    out = []
    for enc in scorer.encode_many(reqs):
        lp = torch.log_softmax(model(input_ids=torch.tensor([list(enc.ids)])).logits[0], -1)
        out.append(np.array([lp[i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))]))
    return out


@torch.no_grad()
def plain_forward(loaded, scorer, reqs, fed_only: bool = False) -> list[np.ndarray]:
    """Each request's target log-probs from the loaded model's own forward of all the requests
    in one right-padded batch (logits in the model's dtype, a float32 log-softmax); with
    ``fed_only``, of the tokens the engine feeds (all but the last, which is only predicted)."""
    encoded = scorer.encode_many(reqs)
    fed = [list(e.ids)[:-1] if fed_only else list(e.ids) for e in encoded]
    ids = torch.zeros((len(fed), max(map(len, fed))), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, tokens in enumerate(fed):
        ids[r, :len(tokens)], mask[r, :len(tokens)] = torch.tensor(tokens), 1
    logits = loaded.model(input_ids=ids.to(loaded.input_device), attention_mask=mask.to(loaded.input_device)).logits
    lp = torch.log_softmax(logits.float(), -1).cpu().double()  # [rows, width, vocab]
    return [np.array([lp[r, i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))])
            for r, enc in enumerate(encoded)]


def plain_spread(loaded, scorer, reqs, reference) -> float:
    """The largest distance from float64 of a plain forward of ``reqs`` over batch shapes (each
    request alone and all in one padded batch; whole sequences and the tokens the engine feeds):
    half-precision kernels round by shape, so this is what a plain forward can promise."""
    return max(worst(runs, reference) for fed_only in (False, True)
               for runs in ([plain_forward(loaded, scorer, [r], fed_only)[0] for r in reqs],
                            plain_forward(loaded, scorer, reqs, fed_only)))


def worst(got, expected) -> float:
    return max(float(np.max(np.abs(np.asarray(g) - e))) for g, e in zip(got, expected))


def conformance(report: Report, device: str, until: float) -> None:
    from helpers.engine import CausalScorer, scorer_for
    from helpers.engine.projection import rounded_head
    from helpers.models import load
    from helpers.models import tiny_architectures as ta

    report.say("1. conformance: engine vs a float64 CPU forward (max |log-prob difference|, nats)")
    report.say("2. the float32 head in bfloat16: distance from float64 with the head in bfloat16 and in float32")
    reqs = requests()
    with tempfile.TemporaryDirectory() as tmp:
        for index, name in enumerate(ARCHITECTURES):
            if time.time() > until:
                rest = ", ".join(ARCHITECTURES[index:])
                report.fail(f"conformance stopped at its share of the time; not run: {rest}")
                return
            folder = ta.build(name, Path(tmp) / name)
            reference = None
            for dtype in (torch.float32, torch.bfloat16):
                loaded = load(folder, quant=None, dtype=dtype, device_map={"": device})
                first = scorer_for(loaded, Settings(progress=False, share="none"))
                if reference is None:
                    reference = float64_reference(folder, first, reqs)
                label = str(dtype).removeprefix("torch.")
                if dtype == torch.float32:
                    bound = FLOAT32_TOLERANCE
                    plain = ""
                else:
                    plain_worst = plain_spread(loaded, first, reqs, reference)
                    bound = BF16_MARGIN * plain_worst
                    plain = f"  (plain bf16 forwards, worst over batch shapes {plain_worst:.3g}; bound {bound:.3g})"
                cells = []
                runs = [(share, share, None) for share in SHARES] + [(f"tree/{how}", "tree", how) for how in ATTENTIONS]
                for share, mode, how in runs:
                    scorer = first if share == "none" else \
                        scorer_for(loaded, Settings(progress=False, share=mode)) if how is None else \
                        CausalScorer(loaded, Settings(progress=False, share=mode), attention=how)
                    diff = worst([s.logprobs for s in scorer.score(reqs)], reference)
                    used = scorer.share_used if share == "auto" else ""
                    how = f"[{scorer.executor.row_attention}]" if share in ("prefix", "tree") else ""
                    cells.append(f"{share}{how}{'->' + used if used else ''} {diff:.2e}")
                    if not diff <= bound:
                        report.fail(f"{name} {label} {share}: {diff:.3g} nats > {bound:.3g}")
                report.say(f"  {name:<8}{label:<10}" + "  ".join(cells) + plain)
                if dtype == torch.bfloat16:
                    with rounded_head():
                        rounded = worst([s.logprobs for s in scorer_for(loaded, Settings(progress=False, share="none"))
                                         .score(reqs)], reference)
                    ours = worst([s.logprobs for s in first.score(reqs)], reference)
                    report.say(f"  {name:<8}head      bf16 head {rounded:.3e}   float32 head {ours:.3e}")
                del loaded, first
                if device == "cuda":
                    torch.cuda.empty_cache()
            split_conformance(report, folder, reference, reqs, device, Path(tmp) / f"{name}-offload")
    decisions_on_blimp(report, device)


def split_devices(device: str) -> tuple[object, object]:
    """The two devices a split model spans: two GPUs where there are two, else the GPU and the
    CPU; on the CPU (the dry run), the CPU and the disk (accelerate's offloading hooks)."""
    if device != "cuda":
        return "cpu", "disk"
    return (0, 1) if torch.cuda.device_count() > 1 else (0, "cpu")


def split_conformance(report: Report, folder: Path, reference, reqs, device: str, offload: Path) -> None:
    """The model in float32 with its first half of layers on one device and the rest, with the
    embeddings, the final norm and the head (tied to the embeddings in some families), on the
    other: every share mode within the float32 tolerance of float64."""
    from helpers.engine import scorer_for
    from helpers.models import load

    first, second = split_devices(device)
    layers = json.loads((folder / "config.json").read_text())["num_hidden_layers"]
    placement = {"model.embed_tokens": second, "model.rotary_emb": second, "model.norm": second, "lm_head": second,
                 **{f"model.layers.{i}": first if i < layers // 2 else second for i in range(layers)}}
    loaded = load(folder, quant=None, dtype=torch.float32, device_map=placement, offload_folder=offload)
    cells = []
    for share in ("none", "prefix", "tree", "auto"):
        scorer = scorer_for(loaded, Settings(progress=False, share=share))
        diff = worst([s.logprobs for s in scorer.score(reqs)], reference)
        cells.append(f"{share}{'->' + scorer.share_used if share == 'auto' else ''} {diff:.2e}")
        if not diff <= FLOAT32_TOLERANCE:
            report.fail(f"{folder.name} split over {first} and {second} {share}: {diff:.3g} nats > {FLOAT32_TOLERANCE}")
    report.say(f"  {folder.name:<8}split     {first}/{second}: " + "  ".join(cells))
    del loaded
    if device == "cuda":
        torch.cuda.empty_cache()


@torch.no_grad()
def decisions_on_blimp(report: Report, device: str, per_paradigm: int | None = None) -> None:
    """demo-en (trained) in bfloat16: the default mode's LP decisions on BLiMP pairs against a
    plain bfloat16 forward's (each sentence's own forward in length-sorted padded batches, its
    logits in bfloat16, a float32 log-softmax): equal on :data:`DECISIONS_AGREE` of them at least."""
    from helpers.data.selection import select
    from helpers.engine import Request, scorer_for
    from helpers.models import load

    per_paradigm = per_paradigm or (2 if device == "cpu" else 30)
    pairs = select("blimp", per_paradigm).frame
    texts = list(pairs.good) + list(pairs.bad)
    loaded = load("demo-en", quant=None, dtype=torch.bfloat16, device_map={"": device})
    scorer = scorer_for(loaded, Settings(progress=False))
    engine = np.array([s.total for s in scorer.score([Request("", t) for t in texts])])
    encoded = scorer.encode_many([Request("", t) for t in texts])
    plain = np.empty(len(texts))
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
    for at in range(0, len(order), 64):
        rows = order[at:at + 64]
        for i, values in zip(rows, plain_forward(loaded, scorer, [Request("", texts[i]) for i in rows])):
            plain[i] = values.sum()
    n = len(pairs)
    agree = float(np.mean(np.sign(engine[:n] - engine[n:]) == np.sign(plain[:n] - plain[n:])))
    report.say(f"  demo-en bfloat16 on {n} BLiMP pairs: the default ({scorer.share_used}) decides as a plain "
               f"bfloat16 forward on {agree:.2%} (at least {DECISIONS_AGREE:.1%})")
    if agree < DECISIONS_AGREE:
        report.fail(f"demo-en bfloat16: decisions agree with a plain forward on {agree:.2%} < {DECISIONS_AGREE:.1%}")


def subprocess_step(report: Report, title: str, command: list[str], timeout: int) -> None:
    """Run ``command`` from the repository's root, its output in the report; a non-zero exit or
    running past ``timeout`` seconds is a failure (the output so far is kept)."""
    report.say(title)
    report.say("  $ " + " ".join(command[1:]))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"))  # what it printed survives a kill
        for line in (done.stdout + done.stderr).splitlines():
            if not line.startswith(("Loading weights", "Converting")) and "it/s]" not in line:
                report.say("  " + line)
        if done.returncode != 0:
            report.fail(f"{command[1]} exited {done.returncode}")
    except subprocess.TimeoutExpired as err:
        for stream in (err.stdout, err.stderr):
            so_far = (stream or b"").decode() if isinstance(stream, bytes) else (stream or "")
            for line in so_far.splitlines():
                report.say("  " + line)
        report.fail(f"{command[1]} ran past {timeout} s (its output so far is above)")


def seconds_for(step: str, deadline: float) -> int:
    """What ``step`` may run: its share of the time, or what is left before ``deadline`` (30 s at
    least)."""
    return max(30, min(SHARES_OF_TIME[step], int(deadline - time.time())))


def gpu_tests(report: Report, dry_run: bool, deadline: float) -> None:
    # on the CPU the marked tests are collected and skipped, with the reason
    subprocess_step(report, "3. the tests marked gpu", [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-rs",
                                                         "-p", "no:cacheprovider", "tests/test_gpu.py"],
                    seconds_for("tests", deadline))


def fit_costs(report: Report, dry_run: bool, deadline: float) -> None:
    args = ["--device", "cpu", "--models", "demo-en"] if dry_run else ["--device", "cuda"]
    subprocess_step(report, "4. the plan's device costs (paste the DeviceCosts line into cost_model.DEVICE_COSTS)",
                    [sys.executable, str(ROOT / "benchmarks" / "fit_device_costs.py"), *args],
                    seconds_for("costs", deadline))


DRY_RUN_SIZES = dict(n=40, m=8, priming_pairs=1, prefix_tokens=20)  # the CPU's tiny model, tiny sizes


def bench(report: Report, dry_run: bool, deadline: float) -> None:
    left = max(60, int(deadline - time.time()))
    sizes = DRY_RUN_SIZES if dry_run else gpu_plan.SIZES
    args = ["--cpu", "--model", "tiny-llama"] if dry_run else ["--shape", "llama3-8b"]
    args += [a for key, value in sizes.items() for a in ("--" + key.replace("_", "-"), str(value))]
    subprocess_step(report, "5. benchmarks/bench_gpu_targets.py",
                    [sys.executable, str(ROOT / "benchmarks" / "bench_gpu_targets.py"), *args,
                     "--until", f"{time.time() + left - BENCH_EXIT:.0f}"], left)


def plan_lines() -> list[str]:
    """The check's plan on one H100 and its estimate (printed first, by the dry run too)."""
    steps = {"1-2. conformance (four families, float32 and bfloat16, every share mode)": SHARES_OF_TIME["conformance"],
             "3. the tests marked gpu": SHARES_OF_TIME["tests"],
             "4. the device costs refitted": SHARES_OF_TIME["costs"]}
    return gpu_plan.lines(steps)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="the same steps on the CPU with tiny sizes")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "gpu_check.txt")
    ap.add_argument("--minutes", type=float, default=8.0, help="the whole check's time limit")
    ap.add_argument("--skip-bench", action="store_true")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available() and not args.dry_run:
        print("error: no CUDA device is visible: run this on a GPU machine, or with --dry-run on the CPU",
              file=sys.stderr)
        return 2
    device = "cpu" if args.dry_run else "cuda"
    gpu_pack.use_packed()  # inherited by the steps' processes
    report = Report(args.out)
    import transformers

    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU (dry run)"
    report.say(f"# scripts/gpu_check.py on {name}, {time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, "
               f"transformers {transformers.__version__}")
    for line in plan_lines():
        report.say(line)
    start = time.time()
    deadline = start + 60 * args.minutes
    for step in (lambda: conformance(report, device, start + SHARES_OF_TIME["conformance"]),
                 lambda: gpu_tests(report, args.dry_run, deadline),
                 lambda: fit_costs(report, args.dry_run, deadline),
                 None if args.skip_bench else lambda: bench(report, args.dry_run, deadline)):
        if step is None:
            continue
        try:
            step()
        except Exception:  # noqa: BLE001 - one step's failure is recorded; the next step still runs
            report.fail("a step stopped:\n" + traceback.format_exc())
    report.say(f"{len(report.failures)} failure(s); {time.time() - start:.0f} s")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
