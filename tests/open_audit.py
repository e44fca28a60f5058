"""Records every file opened under given folders, with an audit hook on Python's "open" event
(``sys.addaudithook``): ``open``, ``io.open``, ``os.open``, ``pathlib`` reads, pandas' and zipfile's
and tarfile's readers all raise it. The test process installs it with :func:`recording`; a child
Python process (a sweep, a notebook kernel) installs it at start-up through the ``sitecustomize``
that :func:`child_environment` puts on its ``PYTHONPATH``. Each opened path, resolved, is one line
of the log file.
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

LOG_ENV = "HELPERS_OPEN_LOG"  # the log file: one resolved path per line
ROOTS_ENV = "HELPERS_OPEN_ROOTS"  # the folders whose files are recorded (os.pathsep between them)
SITECUSTOMIZE = """\
import importlib.util
spec = importlib.util.spec_from_file_location("_helpers_open_audit", {module!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.install_from_environment()
"""

_state = threading.local()
_active: dict = {}  # "log": the open log file, "roots": resolved folders (empty: not recording)


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _active.get("roots") or getattr(_state, "busy", False):
        return
    path = args[0]
    if isinstance(path, int) or path is None:  # a file descriptor: opened by path before
        return
    _state.busy = True
    try:
        resolved = os.path.realpath(os.fsdecode(path))
        if any(resolved == root or resolved.startswith(root + os.sep) for root in _active["roots"]):
            _active["log"].write(resolved + "\n")
    finally:
        _state.busy = False


def _start(log: str, roots: list[str]) -> None:
    _active["log"] = open(log, "a", buffering=1, encoding="utf-8")  # line-buffered: every path lands
    _active["roots"] = [os.path.realpath(r) for r in roots]
    if not _active.get("installed"):
        sys.addaudithook(_hook)  # hooks cannot be removed: an empty ``roots`` turns it off
        _active["installed"] = True


def install_from_environment() -> None:
    """Start recording when ``HELPERS_OPEN_LOG`` is set (what the ``sitecustomize`` calls)."""
    log = os.environ.get(LOG_ENV)
    if log:
        _start(log, [r for r in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if r])


@contextmanager
def recording(log: Path, roots: list[Path]):
    """Record the files this process opens under ``roots`` into ``log`` inside the block."""
    _start(str(log), [str(r) for r in roots])
    try:
        yield
    finally:
        _active["roots"] = []
        _active.pop("log").close()


def child_environment(folder: Path, log: Path, roots: list[Path]) -> dict[str, str]:
    """The environment variables that make a child Python process record into ``log``: a
    ``sitecustomize.py`` written into ``folder`` and put first on ``PYTHONPATH``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.format(module=str(Path(__file__).resolve())))
    python_path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": python_path, LOG_ENV: str(log), ROOTS_ENV: os.pathsep.join(str(r) for r in roots)}


def opened(log: Path) -> set[Path]:
    """The distinct paths recorded in ``log``."""
    return {Path(line) for line in log.read_text(encoding="utf-8").splitlines() if line} if log.is_file() else set()
