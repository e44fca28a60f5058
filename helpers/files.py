"""Atomic file writes: write beside the target, flush it to the disk (fsync), then rename over
it, so that a reader, an interrupted run or a crash never sees half a file. A full disk is a
:class:`NoSpaceError` naming the folder, the space free and the space the file needs."""
from __future__ import annotations

import errno
import os
import shutil
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


class DamagedFileError(ValueError):
    """A file that cannot be read whole: truncated, or a part whose checksum does not match."""


def damaged(path, err: BaseException, fix: str) -> DamagedFileError:
    """The one-line error for a damaged file: the file, the reader's error, and what to do."""
    return DamagedFileError(f"{path} is damaged ({type(err).__name__}: {err}); {fix}")


class NoSpaceError(OSError):
    """The disk of a file being written is full (ENOSPC, or EDQUOT: a quota); nothing is left half-written."""

    def __str__(self) -> str:
        return self.strerror


def no_space_error(target: Path, needs: int | Callable[[], int] | None, err: OSError) -> NoSpaceError:
    """The one-line error for a full disk while writing ``target`` (``needs``: its size in bytes, or
    a function that counts them, where known)."""
    folder = target.parent
    needs = needs() if callable(needs) else needs
    try:
        free = f"{size_text(shutil.disk_usage(folder).free)} free"
    except OSError:
        free = "free space unknown"
    size = size_text(needs) if needs else "more"
    return NoSpaceError(errno.ENOSPC, f"no space left in {folder} while writing {target.name} ({free}; it needs "
                                      f"{size}): free space there (or point HELPERS_OUTPUTS_DIR elsewhere) and run "
                                      "again; files already finished are kept")


def size_text(n: int) -> str:
    """A byte count for people: 850 bytes, 12.3 kB, 4.1 MB, 2.0 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def is_no_space(err: BaseException) -> bool:
    """Whether an error is a full disk or quota (pyarrow's write errors carry no errno, only the text)."""
    if not isinstance(err, OSError) or isinstance(err, NoSpaceError):
        return False
    return err.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(err)


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries, to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(target: str | os.PathLike, directory: bool = False,
                needs: int | Callable[[], int] | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``target`` (a file, or a folder with ``directory``);
    when the block finishes without error it is flushed to the disk and replaces ``target`` (a
    folder there is renamed aside first and removed after, so that a reader never sees a half-built
    one), else it is removed. A cache that several processes may build at once is built through
    :func:`built_once`. A full disk raises :class:`NoSpaceError` (``needs``: the bytes the file
    takes, or a function counting them, for its message)."""
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
        for path in sorted(tmp.rglob("*")) if directory else [tmp]:
            _fsync(path)
        aside = None
        if directory and target.is_dir():  # renamed aside, not removed: a reader's open files stay whole
            aside = target.with_name(f".{target.name}-old-{uuid.uuid4().hex[:8]}")
            os.replace(target, aside)
        os.replace(tmp, target)
        _fsync(target.parent)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
    except BaseException as err:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        if is_no_space(err):
            raise no_space_error(target, needs, err) from err
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


def built_once(target: str | os.PathLike, build: Callable[[Path], None], broken: Callable[[Path], str | None],
               what: str) -> Path:
    """The folder ``target``, built by ``build(folder)`` once, whatever the number of processes
    asking at once: under a file lock beside it (``.<name>.lock``), into a temporary folder renamed
    into place (:func:`atomic_path`), so that no reader sees a half-built one. ``broken(folder)``
    says what is wrong with a folder there (None: it is whole); one whose marker says built but
    whose files are missing or unreadable is rebuilt, with one line saying so."""
    from filelock import FileLock

    target = Path(target)
    if target.is_dir() and broken(target) is None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.with_name(f".{target.name}.lock"))):
        if target.exists():
            problem = broken(target)
            if problem is None:
                return target  # another process built it while this one waited
            print(f"{what} {target} is broken ({problem}): building it again", file=sys.stderr)
        with atomic_path(target, directory=True) as tmp:
            build(tmp)
    return target
