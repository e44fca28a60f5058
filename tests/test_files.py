"""Atomic writes: the target appears whole or not at all, with the usual permissions."""
from __future__ import annotations

import os
import stat

import pytest

from helpers.files import atomic_path, write_text


def test_file_replaced_whole_with_umask_permissions(tmp_path):
    target = tmp_path / "a" / "out.txt"
    write_text(target, "first")
    old = os.umask(0o022)
    try:
        write_text(target, "second")
    finally:
        os.umask(old)
    assert target.read_text() == "second" and list(target.parent.iterdir()) == [target]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    write_text(target, "kept")
    with pytest.raises(RuntimeError, match="half-way"):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("half-way")
    assert target.read_text() == "kept" and list(tmp_path.iterdir()) == [target]


def test_directory_replaced_whole(tmp_path):
    target = tmp_path / "model"
    with atomic_path(target, directory=True) as tmp:
        (tmp / "weights").write_text("1")
    with atomic_path(target, directory=True) as tmp:
        (tmp / "weights").write_text("2")
    assert (target / "weights").read_text() == "2" and [p.name for p in tmp_path.iterdir()] == ["model"]
