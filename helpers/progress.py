"""Progress bars that fit where they run.

- In JupyterLab (a kernel started by a Jupyter server, or by VS Code) with ipywidgets: a
  widget bar (``tqdm.notebook``).
- In a terminal: tqdm's usual bar, redrawn in place.
- Anywhere else (a headless papermill run, a log file, a Slurm job): whole lines, one when a
  loop ends (``scoring: 100%|##########| 134/134 [00:02<00:00, 57.3seq/s]``) and, outside a
  notebook, while a loop runs longer than ``LINE_INTERVAL`` seconds, one every ``LINE_INTERVAL``
  seconds with the rate and the time left; never one per update. A notebook run headless saves
  only the finished loops' lines (no stale ticks), and no bar of the model libraries (loading
  weights): those are drawn only where a person watches (a widget, a terminal).

``HELPERS_PROGRESS`` (widget, terminal, lines, off) overrides the choice.
"""
from __future__ import annotations

import os
import sys

from tqdm import std

MODE_ENV = "HELPERS_PROGRESS"
MODES = ("widget", "terminal", "lines", "off")
LINE_INTERVAL = 60.0  # seconds between the lines of a running loop (lines mode)


def _shell():
    """The IPython shell this code runs in, or None."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    return get_ipython()


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (a notebook, papermill, nbconvert)."""
    return getattr(_shell(), "kernel", None) is not None


def frontend_renders_widgets() -> bool:
    """Whether a person's notebook front end (JupyterLab, Notebook 7, VS Code) drives this
    kernel and ipywidgets is installed. A Jupyter server names the notebook of the kernels it
    starts (``JPY_SESSION_NAME``); papermill and nbconvert start kernels without it."""
    shell = _shell()
    if getattr(shell, "kernel", None) is None:
        return False
    driven = bool(os.environ.get("JPY_SESSION_NAME")) or "__vsc_ipynb_file__" in getattr(shell, "user_ns", {})
    if not driven:
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def mode() -> str:
    """How bars are shown here: "widget", "terminal", "lines" or "off" (see the module doc)."""
    chosen = os.environ.get(MODE_ENV, "").strip().lower()
    if chosen:
        if chosen not in MODES:
            raise ValueError(f"{MODE_ENV}={chosen!r}: choose one of {', '.join(MODES)} (or unset it)")
        return chosen
    if in_kernel():
        return "widget" if frontend_renders_widgets() else "lines"
    return "terminal" if getattr(sys.stderr, "isatty", lambda: False)() else "lines"


class LineBar(std.tqdm):
    """A tqdm bar that writes whole lines: one when the loop ends (with its overall rate), and
    one every ``interval`` seconds while it runs (rate and time left); nothing at the start."""

    monitor_interval = 0  # no monitor thread: lines come from update() and close() only

    def __init__(self, *args, interval: float = LINE_INTERVAL, **kwargs):
        kwargs.update(mininterval=interval, maxinterval=interval, delay=interval, smoothing=0,
                      dynamic_ncols=False)
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None):
        if msg == "":  # tqdm clears a bar with an empty message: a line stays
            return False
        self.fp.write(self.__str__() + "\n")
        self.fp.flush()
        self._written = self.n
        return True

    def close(self):
        if not self.disable and getattr(self, "_written", None) != self.n:
            self._ema_dt = lambda: None  # the last line shows the overall rate
            self.display()
        self.leave = False
        super().close()


def bar(iterable=None, *, desc: str | None = None, total: int | None = None, unit: str = "it",
        disable: bool = False, leave: bool = True, **kwargs):
    """A progress bar (tqdm's interface) of the kind that fits here (see :func:`mode`).

    ``leave`` applies to widget and terminal bars; in lines mode a finished loop always leaves
    its one line."""
    kind = mode()
    common = dict(desc=desc, total=total, unit=unit, disable=disable or kind == "off", **kwargs)
    if kind == "widget":
        from tqdm.notebook import tqdm as widget_tqdm

        return widget_tqdm(iterable, leave=leave, **common)
    if kind == "lines":
        kernel = in_kernel()  # a kernel's stdout: plain text saved in the notebook, its last line only
        return LineBar(iterable, file=common.pop("file", sys.stdout if kernel else sys.stderr),
                       interval=float("inf") if kernel else LINE_INTERVAL, **common)
    return std.tqdm(iterable, leave=leave, **common)


def library_bar(*args, **kwargs):
    """A model library's bar (transformers' loading weights, a GGUF file's dequantization): :func:`bar`,
    but off in a notebook run headless, whose saved outputs keep what the notebook computed."""
    kwargs["disable"] = kwargs.get("disable", False) or (mode() == "lines" and in_kernel())
    return bar(*args, **kwargs)


def _library_bar(factory, args, kwargs):
    """transformers' bars (loading weights, ...) made by :func:`library_bar`, so that they fit too."""
    from tqdm import auto

    if factory is not auto.tqdm or len(args) > 1:  # progress bars switched off, or an unusual call
        return factory(*args, **kwargs)
    return library_bar(*args, **kwargs)


def route_library_bars() -> None:
    """Let transformers make its progress bars through :func:`bar` (a widget in JupyterLab,
    lines in a headless run); called when this module is imported."""
    from transformers.utils import logging as hf_logging

    if hasattr(hf_logging, "set_tqdm_hook"):
        hf_logging.set_tqdm_hook(_library_bar)


route_library_bars()
