"""Atomic file writes: write beside the target, then rename over it, so that a reader or
an interrupted run never sees half a file."""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def atomic_path(target: str | os.PathLike, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``target`` (a file, or a folder with ``directory``);
    when the block finishes without error it replaces ``target``, else it is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        tmp.chmod(0o777 & ~_umask())
    else:
        # a fresh name beside the target (not mkstemp: its files are private, 0600, whatever the umask)
        tmp = target.with_name(f".{target.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        if directory and target.is_dir():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)
