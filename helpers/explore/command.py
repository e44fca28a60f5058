"""``python -m helpers explore``: build the results explorer over a score store and, with
``--serve``, serve it (``make explore``)."""
from __future__ import annotations

import sys

from .build import ExploreError, build
from .serve import serve


def add_parser(sub) -> None:
    """The ``explore`` subcommand on the CLI's subparsers."""
    x = sub.add_parser("explore", help="the results explorer: one page over the score store (tables, figures, items)")
    x.add_argument("--root", default=None, help="the score store (default outputs/scores)")
    x.add_argument("--out", default=None, help="the explorer's folder (default outputs/explore; replaced on rebuild)")
    x.add_argument("--serve", action="store_true", help="serve it after building, until Ctrl-C")
    x.add_argument("--port", type=int, default=8000, help="with --serve (default 8000)")
    x.add_argument("--host", default="127.0.0.1", help="with --serve: the address to bind (default 127.0.0.1, "
                   "this machine only; 0.0.0.0 for every interface)")
    x.set_defaults(handler=run)


def run(args) -> int:
    try:
        explorer = build(args.root, args.out)
        print(f"wrote {explorer.index}: {explorer.files} score files, {explorer.rows:,} scored rows, "
              f"{len(explorer.datasets)} dataset(s), {len(explorer.models)} model(s), {explorer.item_files} item "
              f"files ({explorer.seconds:.1f} s)", flush=True)
        if args.serve:
            serve(explorer.index.parent, args.port, args.host)
        else:
            print(f"open {explorer.index.resolve().as_uri()} or serve it: python -m helpers explore --serve")
    except ExploreError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
