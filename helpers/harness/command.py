"""``python -m helpers lm-eval ...``: lm-eval's own command line (``lm-eval run``, ``ls``,
``validate``, every argument as lm-eval takes it) with the ``engine`` model registered and,
where no ``--include_path`` is given, this project's offline tasks (:data:`helpers.harness.TASKS_DIR`)
on its task path."""
from __future__ import annotations

import sys

from . import TASKS_DIR, register  # lm-eval missing: a one-line ImportError (helpers.cli prints it)

SUBCOMMANDS = ("run", "ls", "validate")


def lm_eval_argv(args: list[str]) -> list[str]:
    """``args`` as lm-eval's command line gets them: ``run`` where no subcommand is named (as
    lm-eval itself does), and the offline tasks' folder where no ``--include_path`` is given
    (to ``run`` and ``validate``; ``ls`` lists them too)."""
    args = list(args)
    if not args or args[0] in ("-h", "--help"):
        return args
    if args[0] not in SUBCOMMANDS:
        args.insert(0, "run")
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in args):
        args += ["--include_path", str(TASKS_DIR)]
    return args


def main(args: list[str]) -> int:
    """Run lm-eval's command line on ``args`` with the engine registered."""
    from lm_eval.__main__ import cli_evaluate
    register()
    saved = sys.argv
    sys.argv = ["lm-eval", *lm_eval_argv(args)]
    try:
        cli_evaluate()
    finally:
        sys.argv = saved
    return 0
