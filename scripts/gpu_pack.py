"""What a GPU machine lacks for scripts/gpu_check.py besides wheels: the processed BLiMP table and
the few files of the data mirror the check reads (Ide et al.'s templates, WikiText-103's test
file), packed here into data/processed and ``.gpu_mirror/`` (ignored by git) to carry with the
repository. On the GPU machine, where no mirror is beside the repository, the check reads the
packed one (:func:`use_packed`). The dry run's test reads only the packed files, so a step that
comes to need another file fails there first.

    python scripts/gpu_pack.py     # then carry .whl, .gpu_mirror and data/processed
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import data, paths  # noqa: E402

PACKED = ROOT / ".gpu_mirror"
MIRROR_FILES = (*(f"ide2024-templates/templates_ll/template_blimp_single_{i}.txt" for i in range(1, 6)),
                *(f"ide2024-templates/prompts/blimp/template_blimp_yn_{i}.json" for i in range(1, 6)),
                "wikitext103-test/wikitext-raw_test.raw")


def pack(into: Path = PACKED) -> list[Path]:
    """Prepare BLiMP into the processed folder and copy :data:`MIRROR_FILES` from the mirror into
    ``into``; the files copied."""
    source = paths.mirror()
    if source is None:
        raise SystemExit(f"no data mirror here: set {paths.MIRROR_ENV} to one (see data/SOURCES.md)")
    data.load_processed("blimp")
    copied = []
    for relative in MIRROR_FILES:
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / relative, target)
        copied.append(target)
    return copied


def use_packed(folder: Path = PACKED) -> None:
    """Read the packed mirror where none is configured or beside the repository."""
    if paths.mirror() is None and folder.is_dir():
        os.environ[paths.MIRROR_ENV] = str(folder)


if __name__ == "__main__":
    files = pack()
    size = sum(f.stat().st_size for f in files) + data.processed_path("blimp").stat().st_size
    print(f"packed {len(files)} mirror files into {PACKED} and {data.processed_path('blimp')} "
          f"({size / 2**20:.1f} MiB): carry .whl, .gpu_mirror and data/processed")
