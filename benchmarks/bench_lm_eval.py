"""lm-evaluation-harness with this engine as its model against lm-eval's own ``hf`` model, end to
end through lm-eval's evaluator (``lm_eval.simple_evaluate``: task building, requests, metrics),
on SmolLM2-135M-Instruct (the real weights, offline) and this project's offline tasks
(helpers/harness/tasks):

  1. BLiMP plain LP as ``--tasks blimp --limit k`` runs it: 67 tasks, one per paradigm (``blimp_offline``
     cut by its ``paradigm`` metadata, :func:`blimp_paradigm_tasks`), ``limit=k`` for each ``--per-paradigm``
     k (two requests per pair, an empty context: the prefix token; a paradigm's pairs share more opening
     words the more of them a run holds: a whole BLiMP run holds 1,000);
  2. ``blimp_yes_no_offline``: a multiple-choice task whose choices share one context, Ide et al.'s
     first Yes/No prompt over the first ``--yes-no`` BLiMP sentences ("Yes" and "No" after it), once
     per ``--fewshot`` value: with k > 0 each prompt follows k answered prompts of other sentences
     (lm-eval's ``num_fewshot``, its default seeds), a long context the two choices share (one token each,
     so lm-eval's ``hf`` runs it once for both: its logits cache);
  3. ``blimp_offline`` with ``--pairs-fewshot`` k: each pair's two sentences as the choices after k
     acceptable sentences of other pairs, over ``--pairs-docs`` pairs spread over the paradigms: choices of
     many tokens sharing a long context, which ``hf`` runs once for each choice.

Both models score the same loaded weights; hf as lm-eval users run it (``batch_size=--hf-batch``,
its logits cache on, float32 log-softmax), the engine with its defaults (``share=auto``). For each
task: each one's wall time as the median (range) of ``--repeats`` runs (at least 5) taken in turn
(benchmarks/spread.py), the speed-up as the median of the per-round ratios (range), whether the
accuracies are identical, the largest per-request log-likelihood difference, whether every
``is_greedy`` agrees, the context's length in tokens and the tokens the engine ran; and each model's
own part, the seconds inside its ``loglikelihood`` calls (tokenizing, the forward passes, the
results), beside lm-eval's work around them (the rest of the run), each as a median with its range,
and the model parts' speed-up.
Then, on the first ``--exact`` requests of task 1, how far each float32 run is from a float64 forward
(hf with a float64 log-softmax on a float64 copy of the model), and the engine against that reference
on the float64 copy itself (what is left is the engine's float32 log-softmax).

    OMP_NUM_THREADS=2 python benchmarks/bench_lm_eval.py [--per-paradigm 15] [--yes-no 200] [--fewshot 0 5]
        [--pairs-fewshot 20] [--pairs-docs 40]
        [--hf-batch 64] [--repeats 5]
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from helpers import data  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spread  # noqa: E402


def blimp_offline_config(**overrides) -> dict:
    """blimp_offline's task config (its YAML, functions resolved) with ``overrides``."""
    from lm_eval.tasks._yaml_loader import load_yaml

    from helpers.harness import TASKS_DIR

    return {**load_yaml(TASKS_DIR / "blimp_offline.yaml", resolve_func=True), **overrides}


def blimp_paradigm_tasks() -> list[dict]:
    """lm-eval's BLiMP as its users run it, offline: 67 tasks, one per paradigm (blimp_offline's config,
    its dataset cut to the paradigm by the task's metadata), so that ``limit=k`` takes the first k pairs
    of each paradigm as ``--tasks blimp --limit k`` does from lm-eval's 67 ``blimp_<paradigm>`` tasks."""
    base = blimp_offline_config()
    return [{**base, "task": f"blimp_offline_{p}", "metadata": {**base.get("metadata", {}), "paradigm": p}}
            for p in data.load_processed("blimp")["paradigm"].unique()]


def clocked(lm) -> list[float]:
    """The seconds of each of ``lm.loglikelihood``'s calls from now on, appended to the list returned
    (lm-eval's evaluator calls the method by name on the model it is given)."""
    spent: list[float] = []
    method = lm.loglikelihood

    def loglikelihood(requests, *args, **kwargs):
        start = time.perf_counter()
        try:
            return method(requests, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    lm.loglikelihood = loglikelihood
    return spent


def responses(result: dict, tasks: list[str]) -> tuple[np.ndarray, list[bool]]:
    """Every (log-likelihood, is_greedy) of the tasks' logged samples, task by task, by document."""
    pairs = [r[0] for task in tasks for s in sorted(result["samples"][task], key=lambda s: s["doc_id"])
             for r in s["resps"]]
    return np.array([float(p[0]) for p in pairs]), [bool(p[1]) for p in pairs]


def main() -> None:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from helpers.harness import TASKS_DIR
    from helpers.harness.model import EngineLM
    from helpers.models import load

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--per-paradigm", type=int, nargs="*", default=[15],
                   help="BLiMP pairs per paradigm (67 paradigms), a run for each")
    p.add_argument("--yes-no", type=int, default=200, help="BLiMP sentences of the Yes/No task")
    p.add_argument("--fewshot", type=int, nargs="*", default=[0, 5],
                   help="--num_fewshot of the Yes/No task, a run for each (k answered prompts before each one)")
    p.add_argument("--pairs-fewshot", type=int, nargs="*", default=[20],
                   help="--num_fewshot of blimp_offline, a run for each: k acceptable sentences before both choices")
    p.add_argument("--pairs-docs", type=int, default=40, help="BLiMP pairs of those runs, spread over the paradigms")
    p.add_argument("--hf-batch", type=int, default=64, help="lm-eval's hf batch size")
    p.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each model")
    p.add_argument("--exact", type=int, default=300, help="requests checked against a float64 forward")
    args = p.parse_args()

    print(spread.header(sys.argv), flush=True)
    loaded = load("smollm2-135m-instruct")
    print(f"model: SmolLM2-135M-Instruct (real weights, Q4_1 GGUF dequantized to {loaded.dtype}); "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, lm-eval {lm_eval.__version__}; "
          f"{args.repeats} interleaved runs each through lm_eval.simple_evaluate, medians (range); the speed-up is "
          f"the median of the per-round ratios (range)")
    models = {"hf": HFLM(pretrained=loaded.model, tokenizer=copy.deepcopy(loaded.tokenizer), batch_size=args.hf_batch),
              "engine": EngineLM(loaded, progress=False)}
    spent = {name: clocked(lm) for name, lm in models.items()}
    tasks = TaskManager(include_path=str(TASKS_DIR))
    paradigms = blimp_paradigm_tasks()
    names = [t["task"] for t in paradigms]
    runs = [(f"BLiMP plain LP: 67 offline blimp_<paradigm> tasks at limit={k}", paradigms, names, dict(limit=k))
            for k in args.per_paradigm]
    runs += [(f"blimp_yes_no_offline, Yes/No, choices sharing the prompt"
              f"{f' after {k} answered prompts (num_fewshot={k})' if k else ''}", ["blimp_yes_no_offline"],
              ["blimp_yes_no_offline"], dict(samples={"blimp_yes_no_offline": list(range(args.yes_no))},
                                             num_fewshot=k or None)) for k in args.fewshot]
    pairs = len(data.load_processed("blimp"))  # blimp_offline's documents: every BLiMP pair, in order
    spread_pairs = list(range(0, pairs, pairs // args.pairs_docs))[:args.pairs_docs]
    # blimp_offline's config fixes num_fewshot at 0 (as lm-eval's blimp tasks do), which simple_evaluate's
    # num_fewshot does not override: the config's own value is set instead (few-shot sentences drawn from
    # the test split, lm-eval's rule where a task has no other)
    runs += [(f"blimp_offline, BLiMP's two sentences as choices after {k} acceptable sentences (num_fewshot={k}): "
              f"choices of many tokens sharing a long context",
              [blimp_offline_config(task=f"blimp_offline_{k}shot", num_fewshot=k)], [f"blimp_offline_{k}shot"],
              dict(samples={f"blimp_offline_{k}shot": spread_pairs})) for k in args.pairs_fewshot]
    for n, (what, specs, names, options) in enumerate(runs, 1):
        print(f"{n}. {what}", flush=True)
        match, own = spread.Contest(), {name: [] for name in models}  # own: each run's seconds in the model

        def evaluated(name: str, lm):
            before = sum(spent[name])
            result = lm_eval.simple_evaluate(model=lm, tasks=specs, task_manager=tasks, log_samples=True,
                                             verbosity="ERROR", **options)
            own[name].append(sum(spent[name]) - before)
            return result

        for name, lm in models.items():
            match.add(name, lambda name=name, lm=lm: evaluated(name, lm))
        before = models["engine"].scorer.tokens_run
        match.run(args.repeats)
        ran = (models["engine"].scorer.tokens_run - before) // args.repeats
        results = match.values
        samples = [s for task in names for s in results["hf"]["samples"][task]]
        context = [len(loaded.tokenizer(s["arguments"][0][0])["input_ids"]) for s in samples]
        accuracy = {name: [results[name]["results"][task]["acc,none"] for task in names] for name in models}
        for name, lm in models.items():
            share = f", share used: {lm.scorer.share_used}" if name == "engine" else f", batch {args.hf_batch}"
            print(f"  {name:<7} {spread.describe(match.seconds[name])}  accuracy {np.mean(accuracy[name]):.4f}{share}")
        ours, our_greedy = responses(results["engine"], names)
        theirs, their_greedy = responses(results["hf"], names)
        same = accuracy["engine"] == accuracy["hf"]
        print(f"  {len(samples)} documents, {len(ours)} requests; engine vs hf: {match.against('hf', 'engine')} the "
              f"speed; accuracies {'identical in every task' if same else 'DIFFERENT'}; max |log-likelihood diff| "
              f"{np.abs(ours - theirs).max():.1e}; is_greedy {'agrees on every request' if our_greedy == their_greedy else 'DIFFERS'}"
              f" ({sum(our_greedy)} greedy); context {np.mean(context):.0f} tokens on average "
              f"({min(context)}-{max(context)}), the engine ran {ran:,} tokens a run")
        around = {name: [total - inside for total, inside in zip(match.seconds[name], own[name])] for name in models}
        print(f"  inside loglikelihood: hf {spread.describe(own['hf'])}, engine {spread.describe(own['engine'])}: "
              f"{spread.describe_ratio(own['hf'], own['engine'])} the speed; lm-eval's work around them: "
              f"hf {spread.describe(around['hf'])}, engine {spread.describe(around['engine'])}")
        if n == 1 and args.per_paradigm:
            exactness(loaded, results, names, args.exact)
    print(f"# load average after: {spread.load_average()}")


def exactness(loaded, results: dict, tasks: list[str], n: int) -> None:
    """The first ``n`` requests of the tasks' runs against a float64 forward, and the engine on the
    float64 model against it."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from helpers.harness.model import EngineLM
    from helpers.models import LoadedModel

    samples = [s for task in tasks for s in sorted(results["hf"]["samples"][task], key=lambda s: s["doc_id"])]
    requests = [Instance("loglikelihood", {}, tuple(args), 0) for s in samples for args in s["arguments"]][:n]
    model64 = copy.deepcopy(loaded.model).double()
    reference = np.array([v[0] for v in HFLM(pretrained=model64, tokenizer=copy.deepcopy(loaded.tokenizer), batch_size=64,
                                             softmax_dtype="float64").loglikelihood(requests, disable_tqdm=True)])
    engine64 = np.array([v[0] for v in EngineLM(LoadedModel.wrap(model64, loaded.tokenizer, spec=loaded.spec),
                                                progress=False).loglikelihood(requests, disable_tqdm=True)])
    print(f"  against a float64 forward, first {len(requests)} requests: max |diff| hf (float32) "
          f"{np.abs(responses(results['hf'], tasks)[0][:n] - reference).max():.1e}, engine (float32) "
          f"{np.abs(responses(results['engine'], tasks)[0][:n] - reference).max():.1e}; the engine on the float64 "
          f"copy {np.abs(engine64 - reference).max():.1e}")


if __name__ == "__main__":
    main()
