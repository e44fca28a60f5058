"""Progress bars: whole lines with the rate and the time left where no person watches (one per
loop, not one per update), widgets in a notebook front end, and the choice overridable."""
from __future__ import annotations

import io
import re
import time

import pytest

from helpers import progress

FINAL = re.compile(r"^scoring: 100%\|#+\| 500/500 \[\d\d:\d\d<00:00, +[\d.]+seq/s\]$")
RUNNING = re.compile(r"^slow: +(\d+)%\|[# \d]*\| (\d+)/40 \[\d\d:\d\d<(\d\d):(\d\d), +[\d.]+it/s\]$")


def test_a_fast_loop_leaves_one_line_with_its_rate():
    out = io.StringIO()
    bar = progress.LineBar(total=500, desc="scoring", unit="seq", file=out, ascii=True, leave=False)
    for _ in range(500):
        bar.update()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and FINAL.match(lines[0]), out.getvalue()
    assert "\r" not in out.getvalue()


def test_a_long_loop_adds_a_line_per_interval_with_the_time_left():
    out = io.StringIO()
    for _ in progress.LineBar(range(40), desc="slow", file=out, ascii=True, interval=0.4):
        time.sleep(0.05)  # 2 s in all: about 4 lines while running, then the last one
    lines = out.getvalue().splitlines()
    parsed = [RUNNING.match(line) for line in lines]
    assert all(parsed) and 3 <= len(lines) <= 7, lines
    assert parsed[-1].group(1) == "100" and parsed[-1].group(2) == "40"
    first = parsed[0]
    assert int(first.group(2)) < 40 and int(first.group(3)) * 60 + int(first.group(4)) >= 1  # the time left
    done = [int(p.group(2)) for p in parsed]
    assert done == sorted(set(done))  # no line repeats a count


def test_the_kind_of_bar_follows_where_it_runs(monkeypatch):
    monkeypatch.delenv(progress.MODE_ENV, raising=False)
    assert progress.mode() == "lines"  # pytest: no kernel, stderr captured (not a terminal)
    assert isinstance(progress.bar(range(3)), progress.LineBar)
    monkeypatch.setenv(progress.MODE_ENV, "off")
    assert progress.bar(range(3)).disable
    monkeypatch.setenv(progress.MODE_ENV, "terminal")
    assert type(progress.bar(range(3))).__name__ == "tqdm"
    monkeypatch.setenv(progress.MODE_ENV, "widget")
    from tqdm.notebook import tqdm_notebook

    assert isinstance(progress.bar(range(3), disable=True), tqdm_notebook)
    monkeypatch.setenv(progress.MODE_ENV, "fancy")
    with pytest.raises(ValueError, match="HELPERS_PROGRESS='fancy': choose one of widget, terminal, lines, off"):
        progress.mode()


def test_transformers_bars_are_made_here(monkeypatch):
    from transformers.utils import logging as hf_logging

    monkeypatch.setenv(progress.MODE_ENV, "lines")
    out = io.StringIO()
    bar = hf_logging.tqdm(range(5), desc="Loading weights", file=out)
    assert isinstance(bar, progress.LineBar)
    list(bar)
    assert out.getvalue().count("\n") == 1 and out.getvalue().startswith("Loading weights: 100%")


def test_a_notebook_run_headless_saves_no_library_bar_and_no_stale_tick(monkeypatch):
    from transformers.utils import logging as hf_logging

    monkeypatch.setenv(progress.MODE_ENV, "lines")
    monkeypatch.setattr(progress, "in_kernel", lambda: True)  # papermill's kernel: what it prints is saved
    out = io.StringIO()
    assert hf_logging.tqdm(range(5), desc="Loading weights", file=out).disable  # transformers' bar: off
    ours = progress.bar(range(3), desc="scoring", file=out)
    assert ours.mininterval == float("inf")  # no line while it runs, however long
    list(ours)
    assert out.getvalue().count("\n") == 1 and out.getvalue().startswith("scoring: 100%")
