"""lm-evaluation-harness with this engine as its model against lm-eval's own ``hf`` model, end to
end through lm-eval's evaluator (``lm_eval.simple_evaluate``: task building, requests, metrics),
on SmolLM2-135M-Instruct (the real weights, offline) and this project's offline tasks
(helpers/harness/tasks):

  1. ``blimp_offline``: BLiMP plain LP, the first ``--per-paradigm`` pairs of each of its 67 paradigms
     (two requests per pair, an empty context: the prefix token), as ``--limit`` takes them from lm-eval's
     67 blimp subtasks; one run per number given (a paradigm's pairs share more opening words the more of
     them a run holds: a whole BLiMP run holds 1,000);
  2. ``blimp_yes_no_offline``: a multiple-choice task whose choices share one context, Ide et al.'s
     first Yes/No prompt over the first ``--yes-no`` BLiMP sentences ("Yes" and "No" after it).

Both models score the same loaded weights; hf as lm-eval users run it (``batch_size=--hf-batch``,
its logits cache on, float32 log-softmax), the engine with its defaults (``share=auto``). For each
task: the wall time of each (the fastest of ``--repeats``), the ratio, whether the accuracies are
identical, the largest per-request log-likelihood difference and whether every ``is_greedy`` agrees.
Then, on the first ``--exact`` requests of task 1, how far each float32 run is from a float64 forward
(hf with a float64 log-softmax on a float64 copy of the model), and the engine against that reference
on the float64 copy itself (what is left is the engine's float32 log-softmax).

    OMP_NUM_THREADS=2 python benchmarks/bench_lm_eval.py [--per-paradigm 15 50] [--yes-no 1000] [--hf-batch 64]
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


def blimp_documents(per_paradigm: int) -> list[int]:
    """Document ids of blimp_offline: the first ``per_paradigm`` pairs of each paradigm (the task's
    documents are the processed table's rows, in order)."""
    paradigms = data.load_processed("blimp")["paradigm"].reset_index(drop=True)
    return sorted(paradigms.groupby(paradigms, sort=False).head(per_paradigm).index.tolist())


def responses(result: dict, task: str) -> tuple[np.ndarray, list[bool]]:
    """Every (log-likelihood, is_greedy) of a task's logged samples, by document."""
    pairs = [r[0] for s in sorted(result["samples"][task], key=lambda s: s["doc_id"]) for r in s["resps"]]
    return np.array([float(p[0]) for p in pairs]), [bool(p[1]) for p in pairs]


def main() -> None:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from helpers.harness import TASKS_DIR
    from helpers.harness.model import EngineLM
    from helpers.models import load

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--per-paradigm", type=int, nargs="+", default=[15, 50],
                   help="BLiMP pairs per paradigm (67 paradigms), a run for each")
    p.add_argument("--yes-no", type=int, default=1000, help="BLiMP sentences of the Yes/No task")
    p.add_argument("--hf-batch", type=int, default=64, help="lm-eval's hf batch size")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--exact", type=int, default=300, help="requests checked against a float64 forward")
    args = p.parse_args()

    loaded = load("smollm2-135m-instruct")
    print(f"model: SmolLM2-135M-Instruct (real weights, Q4_1 GGUF dequantized to {loaded.dtype}); "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}, lm-eval {lm_eval.__version__}; "
          f"fastest of {args.repeats} runs each, through lm_eval.simple_evaluate")
    models = {"hf": HFLM(pretrained=loaded.model, tokenizer=copy.deepcopy(loaded.tokenizer), batch_size=args.hf_batch),
              "engine": EngineLM(loaded, progress=False)}
    tasks = TaskManager(include_path=str(TASKS_DIR))
    runs = [("blimp_offline", blimp_documents(k), f"BLiMP plain LP, {k} pairs per paradigm") for k in args.per_paradigm]
    runs.append(("blimp_yes_no_offline", list(range(args.yes_no)), "Yes/No, choices sharing the prompt"))
    for n, (task, documents, what) in enumerate(runs, 1):
        print(f"{n}. {task} ({what}): {len(documents)} documents, {2 * len(documents)} requests")
        seconds, results = {}, {}
        for name, lm in models.items():
            best = float("inf")
            for _ in range(args.repeats):
                start = time.perf_counter()
                results[name] = lm_eval.simple_evaluate(model=lm, tasks=[task], samples={task: documents},
                                                        task_manager=tasks, log_samples=True, verbosity="ERROR")
                best = min(best, time.perf_counter() - start)
            seconds[name] = best
            share = f", share used: {lm.scorer.share_used}" if name == "engine" else f", batch {args.hf_batch}"
            print(f"  {name:<7} {best:7.1f} s  accuracy {results[name]['results'][task]['acc,none']:.4f}{share}")
        ours, our_greedy = responses(results["engine"], task)
        theirs, their_greedy = responses(results["hf"], task)
        same = results["engine"]["results"][task]["acc,none"] == results["hf"]["results"][task]["acc,none"]
        print(f"  engine vs hf: {seconds['hf'] / seconds['engine']:.2f}x the speed; accuracies "
              f"{'identical' if same else 'DIFFERENT'}; max |log-likelihood diff| {np.abs(ours - theirs).max():.1e} "
              f"over {len(ours)} requests; is_greedy {'agrees on every request' if our_greedy == their_greedy else 'DIFFERS'}"
              f" ({sum(our_greedy)} greedy)")
        if n == 1:
            exactness(loaded, results, task, args.exact)


def exactness(loaded, results: dict, task: str, n: int) -> None:
    """The first ``n`` requests of ``task``'s runs against a float64 forward, and the engine on the
    float64 model against it."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from helpers.harness.model import EngineLM
    from helpers.models import LoadedModel

    samples = sorted(results["hf"]["samples"][task], key=lambda s: s["doc_id"])
    requests = [Instance("loglikelihood", {}, tuple(args), 0) for s in samples for args in s["arguments"]][:n]
    model64 = copy.deepcopy(loaded.model).double()
    reference = np.array([v[0] for v in HFLM(pretrained=model64, tokenizer=copy.deepcopy(loaded.tokenizer), batch_size=64,
                                             softmax_dtype="float64").loglikelihood(requests, disable_tqdm=True)])
    engine64 = np.array([v[0] for v in EngineLM(LoadedModel.wrap(model64, loaded.tokenizer, spec=loaded.spec),
                                                progress=False).loglikelihood(requests, disable_tqdm=True)])
    print(f"  against a float64 forward, first {len(requests)} requests: max |diff| hf (float32) "
          f"{np.abs(responses(results['hf'], task)[0][:n] - reference).max():.1e}, engine (float32) "
          f"{np.abs(responses(results['engine'], task)[0][:n] - reference).max():.1e}; the engine on the float64 "
          f"copy {np.abs(engine64 - reference).max():.1e}")


if __name__ == "__main__":
    main()
