"""A small command line over the engine, for quick checks and teaching.

    python -m helpers models
    python -m helpers fetch-model smollm2-135m-instruct
    python -m helpers score --model path/to/SmolLM2-135M-Instruct.Q4_1.gguf --json "The cats annoy Tim."
    python -m helpers score --model tiny-gpt2 "The cat sees a dog." "The cat see a dog."
    python -m helpers score --model gpt2 --context "Answer:" --json " Yes" " No"
    python -m helpers score --model tiny-gpt2 --words "The cat sees a dog."
    python -m helpers score --model llama3-8b --quant 4bit --max-memory 0=20GiB,cpu=60GiB "The cat sees a dog."
    python -m helpers sweep --notebooks 02 --models gpt2 opt-125m --datasets blimp climp
    python -m helpers sweep --notebooks 02 03 --models qwen2 --share none --start auto
    python -m helpers sweep --notebooks 02 08 --models EleutherAI/pythia-160m --revisions step1000,step143000
    python -m helpers precision --model demo-en --dataset blimp --limit 20
    python -m helpers embed --datasets blimp_hu2025 syntaxgym li_hu2025
    python -m helpers explore --serve --port 8000
    python -m helpers demo
    python -m helpers lm-eval --model engine --model_args pretrained=smollm2-135m-instruct --tasks blimp_offline
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import yaml

from . import sweep
from .demo import main as demo_main
from .explore.command import add_parser as add_explore_parser
from .models.fetch_command import add_parser as add_fetch_parser
from .models import ModelNotFoundError, QuantizationUnavailableError, registry_table
from .data.picking import PICKS
from .settings import AUTO, METHOD_SETTINGS, TABLE, Settings
from .settings.options import PRECISION, setting_options
from .engine.interface import Request
from .engine.kinds import scorer_for
from .explain import word_surprisal
from .provenance import REUSE_STALE_ENV
from .zoo.command import add_parsers as add_zoo_parsers


def _cmd_models(args) -> int:
    print(registry_table())
    return 0


def _cmd_settings(args) -> int:
    from . import methods

    print(methods.settings_table())
    return 0


def _cmd_score(args) -> int:
    try:
        method_given = [name for name in METHOD_SETTINGS if getattr(args, name) != AUTO]
        if method_given:
            raise ValueError(f"{', '.join(method_given)} {'is a method setting' if len(method_given) == 1 else 'are method settings'}: "
                             "score prints token log-probs and runs no method, so its numbers would not depend on "
                             f"{'it' if len(method_given) == 1 else 'them'}; give it to a notebook or the sweep")
        settings = Settings(**{name: getattr(args, name) for name in list(TABLE)}, device_map=args.device_map,
                            max_memory=args.max_memory, offload_folder=args.offload_folder, progress=False)
        scorer = scorer_for(args.model, settings)
    except (ModelNotFoundError, QuantizationUnavailableError, TypeError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        results = scorer.score([Request(args.context, t, word_boundary=args.words) for t in args.texts])
    except (TypeError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for text, s in zip(args.texts, results):
        words = word_surprisal.word_table(args.context + text, s) if args.words else None
        if args.json:
            print(json.dumps({"text": text, "tokens": s.tokens, "logprobs": [float(x) for x in s.logprobs],
                              "sum": s.total, "n_tokens": s.n_tokens, "start_token": s.start_token,
                              **(word_surprisal.word_record(words, s) if args.words else {})}, ensure_ascii=False))
            continue
        print(f"{text}\n  start token: {s.start_token}")
        for token, value in zip(s.tokens, s.logprobs):
            print(f"  {token!r:>20}  {value:10.4f}")
        print(f"  {'sum':>20}  {s.total:10.4f}  ({s.n_tokens} tokens)")
        if args.words:
            print("\n".join(word_surprisal.word_lines(words, s)))
    return 0


def _parameters(pairs: list[str]) -> dict:
    """KEY=VALUE pairs; values are read as YAML (numbers, lists, null), as papermill -y does."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"error: parameter {pair!r} is not KEY=VALUE")
        out[key] = yaml.safe_load(value)
    return out


SLURM_FLAGS = {"partition": str, "account": str, "time": str, "mem": str, "cpus": int, "gpus": int,
               "constraint": str, "qos": str, "array_parallelism": int}


def _cmd_sweep(args) -> int:
    from .sweep.slurm import SlurmUnavailableError, executor_parameters, resources
    from .sweep.status import format_status, status

    try:
        given = {name: getattr(args, name) for name in [*list(TABLE), *PICKS] if getattr(args, name) is not None}
        jobs = sweep.plan(args.notebooks, args.models, args.datasets, _parameters(args.param), args.shards,
                          settings=given, revisions=",".join(args.revisions) if args.revisions else None)
        if args.status:
            print(format_status(status(jobs)))
            return 0
        if args.reuse_stale:  # the jobs (local, or Slurm's exported environment) inherit it
            os.environ[REUSE_STALE_ENV] = "1"
        res = None
        if args.executor == "slurm":
            res = resources(args.profile, **{k: getattr(args, k) for k in SLURM_FLAGS})
            executor_parameters(res)  # a bad value is an error before anything is submitted
        sweep.run(jobs, executor=args.executor, resources=res, wait=args.wait)
    except (FileNotFoundError, ValueError, SlurmUnavailableError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except sweep.SweepInterrupted as err:
        print(f"error: {err}", file=sys.stderr)
        return 130
    except sweep.SweepFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def _cmd_precision(args) -> int:
    import platform
    import time

    import torch

    from .zoo.precision import markdown, precision_report, summary
    from .zoo.precision_card import update_card_precision

    start = time.perf_counter()
    try:
        settings = Settings(**{name: getattr(args, name) for name in PRECISION}, templates=args.templates)
        report = precision_report(args.model, args.dataset, args.methods, args.limit, args.precisions,
                                  root=args.root, settings=settings)
    except (ModelNotFoundError, QuantizationUnavailableError, FileNotFoundError, KeyError, TypeError,
            ValueError) as err:
        print(f"error: {err.args[0] if isinstance(err, KeyError) and err.args else err}", file=sys.stderr)
        return 2
    print(markdown(report.table))
    print(summary(report.table, "nf4"))
    print(f"wrote {report.csv} and {report.markdown.name} ({time.perf_counter() - start:.0f} s)")
    if args.card:
        machine = (f"{platform.machine()}, {torch.get_num_threads()} CPU thread(s), torch {torch.__version__}"
                   + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))
        card = {"model": args.model, "dataset": args.dataset, "machine": machine, "why_subset": args.why_subset,
                "note": args.note}
        try:
            print(f"wrote {update_card_precision(args.model, report.table, card)}")
        except FileNotFoundError as err:
            print(f"error: {err} (the table above is kept in {report.csv})", file=sys.stderr)
            return 2
    return 0


def _cmd_embed(args) -> int:
    import time

    from .analysis import embedding_store, embeddings
    from .data import DATASETS, DataNotPreparedError

    for name in args.datasets:
        try:
            if name not in DATASETS:
                raise ValueError(f"unknown dataset {name!r}; choose from: {', '.join(DATASETS)}")
            model = args.model or embeddings.default_model(DATASETS[name].language)
            start = time.perf_counter()
            path = embedding_store.precompute(name, model, batch_size=args.batch_size, threads=args.threads)
        except (DataNotPreparedError, ImportError, OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        record = embedding_store.provenance(model, name)
        print(f"{name}: {record['texts']:,} sentences with {record['embedding_model_id']} in {path} "
              f"({time.perf_counter() - start:.0f} s now, {record['seconds']:.0f} s computing in all)")
    return 0


def _cmd_demo(args) -> int:
    return demo_main()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m helpers", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("models", help="list the model registry").set_defaults(handler=_cmd_models)
    sub.add_parser("settings", help="list every setting: its values, what 'auto' is, who reads it (every notebook "
                   "that scores or reads scores, the sweep and score take each by its name)").set_defaults(
        handler=_cmd_settings)
    s = sub.add_parser("score", help="token log-probs of each text")
    s.add_argument("--model", required=True, help="registry name, local folder or Hugging Face id")
    s.add_argument("--context", default="", help="text before each target (not scored)")
    s.add_argument("--json", action="store_true", help="one JSON object per line")
    s.add_argument("--words", action="store_true", help="per-word surprisal in bits, plain and corrected for word "
                   "boundaries (Pimentel & Meister 2024), from the same pass (a causal LM)")
    setting_options(s, list(TABLE), AUTO)  # every setting: --start, --share, --quant, ... (method settings refused)
    s.add_argument("--device-map", default="auto", help="accelerate placement: auto, balanced, sequential, none")
    s.add_argument("--max-memory", metavar="DEVICE=SIZE,...",
                   help="cap per device for the placement, e.g. 0=20GiB,1=20GiB,cpu=60GiB (disk=...: offload)")
    s.add_argument("--offload-folder", help="folder for weights offloaded to the disk")
    s.add_argument("texts", nargs="+", help="the texts to score")
    s.set_defaults(handler=_cmd_score)
    w = sub.add_parser("sweep", help="papermill over notebooks x models x datasets (skips finished runs)")
    w.add_argument("--notebooks", nargs="+", required=True, help="notebook number prefixes, e.g. 02 03")
    w.add_argument("--models", nargs="+", default=["none"], help="registry names ('none' for 01_data_prep)")
    w.add_argument("--datasets", nargs="+", default=["blimp"], help="dataset names ('all' for every one)")
    w.add_argument("--param", "-p", action="append", default=[], metavar="[NB:]KEY=VALUE",
                   help="extra notebook parameter (NB: only for the notebooks starting with NB, e.g. 02:methods=lp)")
    w.add_argument("--executor", choices=["local", "slurm"], default="local",
                   help="slurm: the unfinished jobs as one job array, the analyses (04, 05) after the scoring tasks "
                        "they read (afterok); not those already queued or running")
    w.add_argument("--revisions", nargs="+", default=None, metavar="REV",
                   help="Hub revisions (training checkpoints, e.g. step1000,step2000): each model at each one, scored "
                        "as a model of its own (<model>@<revision>); 08_learning_curves reads them together")
    w.add_argument("--shards", type=int, default=1, metavar="K",
                   help="split each dataset run's pairs into K jobs (by paradigm, then position); 03, 06 "
                        "and 07 then get one more job reading the K shards as one run (after them)")
    w.add_argument("--status", action="store_true", help="show each job: done, running, pending, waiting (on "
                   "the scoring jobs it reads), failed or cancelled (with the failing cell's error and the job's log) "
                   "and exit")
    w.add_argument("--reuse-stale", dest="reuse_stale", action="store_true",
                   help="reuse score files written by another engine numerics version or torch/transformers "
                        "major.minor (stale: recomputed by default), with a warning")
    w.add_argument("--wait", action="store_true", help="slurm: return when the submitted jobs have left the queue")
    g = w.add_argument_group("what each dataset's run scores (02, 03, 06, 07; recorded in the score files)")
    g.add_argument("--languages", default=None, type=yaml.safe_load, help="'all', codes ('eng,nld' or 'en') or a number "
                   "drawn with --draw-seed")
    g.add_argument("--paradigms", default=None, type=yaml.safe_load, help="'all', names ('a,b') or a number drawn "
                   "with --draw-seed")
    g.add_argument("--draw-seed", "--draw_seed", dest="draw_seed", default=None, type=int,
                   help="the seed of a drawn number of languages or paradigms (every notebook's default: 0)")
    g.add_argument("--drop-identical", "--drop_identical", dest="drop_identical", action="store_const", const=True,
                   default=None, help="leave out pairs whose two sentences are the same string")
    setting_options(w.add_argument_group("settings (the notebook parameters of the same names; default: the "
                                            "notebooks' own, 'auto')"), list(TABLE), None)
    r = w.add_argument_group("Slurm resources (over the profile's)")
    r.add_argument("--profile", help="a name in profiles/ or a YAML file (default: slurm-gpu, one GPU per task)")
    for name, kind in SLURM_FLAGS.items():
        r.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind)
    w.set_defaults(handler=_cmd_sweep)
    e = sub.add_parser("embed", help="sentence embeddings of whole datasets, once (07 reuses them for every model)")
    e.add_argument("--datasets", nargs="+", required=True, help="prepared datasets, e.g. blimp_hu2025 syntaxgym")
    e.add_argument("--model", default=None, help="embedding model (default: the paper's per language, or "
                   "offline the packaged stand-in: helpers.analysis.embeddings.default_model)")
    e.add_argument("--batch-size", dest="batch_size", type=int, default=512, help="sentences per encoder call")
    e.add_argument("--threads", type=int, default=None, help="torch CPU threads while embedding (default: torch's; "
                   "1 is faster when other processes keep the cores busy)")
    e.set_defaults(handler=_cmd_embed)
    sub.add_parser("demo", help="the main job on the offline default").set_defaults(handler=_cmd_demo)
    add_explore_parser(sub)
    add_zoo_parsers(sub)
    add_fetch_parser(sub)
    sub.add_parser("lm-eval", help="lm-evaluation-harness's command line with the engine as its model 'engine' and "
                   "this project's offline tasks (every lm-eval argument passes through)", add_help=False)
    q = sub.add_parser("precision", help="what bfloat16, 4-bit NF4 and 8-bit cost each method, against float32")
    q.add_argument("--model", required=True, help="registry name, local folder or Hugging Face id")
    q.add_argument("--dataset", required=True, help="a dataset of minimal pairs, or a Hu & Levy stimulus set")
    q.add_argument("--methods", nargs="+", default=None, help="registry names (default: lp intemplate_lp yesno ab "
                   "on minimal pairs, and Hu & Levy's tasks on their stimulus sets)")
    q.add_argument("--limit", type=int, default=None, help="items per paradigm, the first ones (default: all)")
    q.add_argument("--templates", nargs="+", default=None,
                   help="template ids (1 to 5) and Hu & Levy prompt types (default: all)")
    q.add_argument("--precisions", nargs="+", default="all", choices=["float32", "bfloat16", "nf4", "int8"],
                   help="default: all four (float32, the reference, is always scored)")
    q.add_argument("--root", default=None, help="score store and tables (default: outputs/precision)")
    q.add_argument("--card", action="store_true", help="record the table in the demo model's card")
    q.add_argument("--why-subset", default=None, help="with --limit and --card: why not every pair (in the card)")
    q.add_argument("--note", default=None, help="with --card: what these methods' rows show (in the card)")
    setting_options(q, PRECISION, AUTO)  # as 02's precision section passes them
    q.set_defaults(handler=_cmd_precision)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lm-eval"]:  # lm-eval parses its own arguments
        try:
            from .harness.command import main as lm_eval_main
        except ImportError as err:
            print(err, file=sys.stderr)
            return 2
        return lm_eval_main(argv[1:])
    args = parser().parse_args(argv)
    return args.handler(args)
