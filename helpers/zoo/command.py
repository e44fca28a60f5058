"""``python -m helpers train-demo`` (train a demo model from a recipe: every recipe field is a
flag) and ``python -m helpers model-card`` (write its card)."""
from __future__ import annotations

from dataclasses import fields

from .demo_training import Recipe, train
from .model_card import write_card

FLAGS = {"lists_only": "train on the sentence lists alone (--sentence-lists)",
         "autocast_bf16": "bfloat16 matmuls with float32 weights (fast on CPUs with AVX512-BF16)"}


def add_parsers(sub) -> None:
    """The ``train-demo`` and ``model-card`` subcommands on the CLI's subparsers."""
    t = sub.add_parser("train-demo", help="train a small demo LM from the mirror's corpora")
    t.add_argument("--out", required=True, help="folder to save the model to")
    t.add_argument("--language", choices=["en", "zh"], default="en")
    for f in fields(Recipe):  # every recipe field but the language (above) and the corpora (read from the mirror)
        if f.name in FLAGS:
            t.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, action="store_true", default=None,
                           help=FLAGS[f.name])
        elif f.name not in ("language", "corpora"):
            t.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type={"int": int, "float": float}.get(f.type, str))
    t.set_defaults(handler=train_demo)
    c = sub.add_parser("model-card", help="write a demo model's card from training.json and the stored LP scores")
    c.add_argument("--model", required=True)
    c.add_argument("--dataset", required=True)
    c.add_argument("--priming", action="store_true", help="also record 06's Figure 2 of the model (run 06 first)")
    c.set_defaults(handler=model_card)


def train_demo(args) -> int:
    recipe = Recipe(**{f.name: getattr(args, f.name) for f in fields(Recipe)
                       if getattr(args, f.name, None) is not None})
    train(args.out, recipe)
    return 0


def model_card(args) -> int:
    print(f"wrote {write_card(args.model, args.dataset, priming=args.priming)}")
    return 0
