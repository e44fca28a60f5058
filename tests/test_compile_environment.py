"""The compiler is never turned off behind a user's back: the Makefile's sweep, demo, report and
bench commands run with the environment the user gave make (``TORCHDYNAMO_DISABLE`` only when
the user set it), so FlexAttention compiles on CUDA in a sweep job; the cost model counts a flex
row as compiled only where it will be."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import paths
from helpers.engine import flex_rows

PRINTER = "import json, os, sys; open(os.environ['ENV_OUT'], 'w').write(json.dumps(dict(os.environ)))"


def environment_of(target: str, tmp_path, **given) -> dict:
    """The environment the command of the Makefile's ``target`` gets (the Python it runs, ``PY``,
    replaced by one that writes its environment), from a shell whose environment is the tests'
    without the suite's own compiler setting, plus ``given``."""
    printer = tmp_path / "printer.py"
    printer.write_text(PRINTER)
    out = tmp_path / f"{target}.json"
    env = {k: v for k, v in os.environ.items() if k != "TORCHDYNAMO_DISABLE"} | given | {"ENV_OUT": str(out)}
    subprocess.run(["make", "-s", "-o", ".venv/.setup-stamp", target, f"PY={sys.executable} {printer}"],
                   cwd=paths.ROOT, env=env, check=True, capture_output=True, timeout=60)
    return json.loads(out.read_text())


@pytest.mark.parametrize("target", ["sweep", "demo", "report", "bench"])
def test_make_leaves_the_compiler_on_for_sweeps_demos_reports_and_benchmarks(target, tmp_path):
    got = environment_of(target, tmp_path)
    assert "TORCHDYNAMO_DISABLE" not in got and got["HF_HUB_OFFLINE"] == "1"
    assert environment_of(target, tmp_path, TORCHDYNAMO_DISABLE="1")["TORCHDYNAMO_DISABLE"] == "1"  # the user's


def test_flex_rows_count_as_compiled_on_cuda_only_where_the_compiler_is_on(monkeypatch):
    monkeypatch.delenv("TORCHDYNAMO_DISABLE", raising=False)
    assert flex_rows.compiles("cuda") and not flex_rows.compiles("cpu")
    monkeypatch.setenv("TORCHDYNAMO_DISABLE", "1")
    assert not flex_rows.compiles("cuda")
