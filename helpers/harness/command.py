"""``python -m helpers lm-eval ...``: lm-eval's own command line (``lm-eval run``, ``ls``,
``validate``, every argument as lm-eval takes it) with the ``engine`` model registered and this
project's offline tasks (:data:`helpers.harness.TASKS_DIR`) on its task path beside a user's
``--include_path`` (lm-eval 0.4.13's command line takes one path: :func:`offline_tasks_beside`
gives its task manager both, the user's last, so that a task of theirs overrides one of ours of
the same name, as lm-eval orders its include paths)."""
from __future__ import annotations

import inspect
import os
import sys
from contextlib import contextmanager

from . import TASKS_DIR, register  # lm-eval missing: a one-line ImportError (helpers.cli prints it)

SUBCOMMANDS = ("run", "ls", "validate")


def lm_eval_argv(args: list[str]) -> list[str]:
    """``args`` as lm-eval's command line gets them: ``run`` where no subcommand is named (as
    lm-eval itself does)."""
    args = list(args)
    if not args or args[0] in ("-h", "--help"):
        return args
    if args[0] not in SUBCOMMANDS:
        args.insert(0, "run")
    return args


def with_offline_tasks(include_path) -> list:
    """A task manager's include paths with the offline tasks first (the user's, later, win)."""
    given = [] if include_path is None else list(include_path) if isinstance(include_path, (list, tuple)) \
        else [include_path]
    return [TASKS_DIR, *[p for p in given if str(p) != str(TASKS_DIR)]]


@contextmanager
def offline_tasks_beside():
    """Every lm-eval TaskManager built inside gets :func:`with_offline_tasks` of its include path."""
    from lm_eval.tasks import TaskManager

    original = TaskManager.__init__
    signature = inspect.signature(original)

    def init(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.arguments["include_path"] = with_offline_tasks(bound.arguments.get("include_path"))
        original(*bound.args, **bound.kwargs)

    TaskManager.__init__ = init
    try:
        yield
    finally:
        TaskManager.__init__ = original


def refuse_idle_processes(args: list[str], processes: int) -> None:
    """A one-line error (exit status 1) before anything loads where ``--limit`` (a whole number of
    documents per task) leaves a process of ``processes`` without a document: lm-eval 0.4.13 stops
    such a process (lm_eval/api/task.py l.376, "task.build_requests() did not find any docs!") and
    the others then fail on a closed connection."""
    given = [a.split("=", 1)[1] if "=" in a else args[k + 1] for k, a in enumerate(args)
             if a.split("=", 1)[0] == "--limit" and ("=" in a or k + 1 < len(args))]
    if processes <= 1 or not given:
        return
    try:
        limit = float(given[-1])
    except ValueError:
        return  # lm-eval's own parser names a bad value
    if limit >= 1 and limit.is_integer() and limit < processes:
        idle = processes - int(limit)
        raise SystemExit(f"error: --limit {int(limit)} over {processes} processes leaves {idle} of them "
                         "without a document, which lm-eval stops ('did not find any docs', lm_eval/api/task.py "
                         f"l.376): give --limit {processes} or more, or launch {int(limit)} process(es)")


def main(args: list[str]) -> int:
    """Run lm-eval's command line on ``args`` with the engine registered and the offline tasks found."""
    refuse_idle_processes(args, int(os.environ.get("WORLD_SIZE", "1")))
    from lm_eval.__main__ import cli_evaluate
    register()
    saved = sys.argv
    sys.argv = ["lm-eval", *lm_eval_argv(args)]
    try:
        with offline_tasks_beside():
            cli_evaluate()
    finally:
        sys.argv = saved
    return 0
