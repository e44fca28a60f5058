"""Checks that a model folder holds every weights file its shard index names, before
transformers reads any of them (a missing shard is then one clear line naming the file, not a
traceback from deep inside the loader)."""
from __future__ import annotations

import json
from pathlib import Path

from .registry import ModelNotFoundError

# the shard indexes save_pretrained writes: safetensors, and PyTorch's older pickles
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def missing_shards(folder: str | Path) -> tuple[str, list[str]] | None:
    """The first shard index in ``folder`` whose weights files are not all there: (index name,
    the missing files), or None when every listed file is present (or the model is not sharded)."""
    folder = Path(folder)
    for name in INDEX_FILES:
        index = folder / name
        if not index.is_file():
            continue
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (ValueError, KeyError, TypeError) as err:
            raise ModelNotFoundError(f"{index} is not a readable shard index ({type(err).__name__}: {err}): "
                                     "copy or download the model again") from err
        missing = sorted({f for f in weight_map.values() if not (folder / f).is_file()})
        if missing:
            return name, missing
    return None


def check_weight_files(folder: str | Path) -> None:
    """A :class:`ModelNotFoundError` when a local model folder lacks a weights shard its index names."""
    folder = Path(folder)
    if not folder.is_dir():
        return  # a Hub id: the Hub's loader fetches or finds every shard itself
    found = missing_shards(folder)
    if found:
        index, missing = found
        raise ModelNotFoundError(f"{folder} lacks the weights file(s) {', '.join(missing)} that {index} lists: "
                                 "copy or download the model again (a partial copy cannot be loaded)")
