"""Cost coefficients kept on disk, so that every process on a machine chooses the same modes.

``share="auto"`` picks each call's share mode from coefficients timed on the device
(:mod:`.cost_model`). Timings vary from run to run, and two modes' values differ in the last
float32 bits, so if every process timed the device itself, a shard job and the unsharded run
(or two runs of one notebook) could pick different modes and disagree in the last bits. The
first process to time a model on a device (with a dtype, thread count and torch version)
writes the coefficients under a file lock; every later process reads them. Delete the folder
(:func:`helpers.paths.calibrations`) to measure again.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import warnings
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import torch
from filelock import FileLock

from .cost_model import Coefficients
from .. import paths
from ..files import write_text


def device_name(device) -> str:
    """What the timing ran on: the GPU's name, or the CPU's model and core count."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{device.type}: {cpu} x{os.cpu_count()}"


def model_identity(model: torch.nn.Module, weights: str | None) -> str:
    """The model a timing belongs to: its weights' fingerprint, else its class and configuration."""
    if weights:
        return weights
    config = getattr(model, "config", None)
    text = config.to_json_string(use_diff=False) if hasattr(config, "to_json_string") else repr(config)
    return f"{type(model).__name__}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def key(model: torch.nn.Module, weights: str | None, device) -> dict:
    """Everything the coefficients depend on."""
    return {"model": model_identity(model, weights), "device": device_name(device),
            "dtype": str(next(model.parameters()).dtype), "threads": torch.get_num_threads(),
            "torch": torch.__version__}


def path_of(fields: dict) -> Path:
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:20]
    return paths.calibrations() / f"{digest}.json"


def stored(fields: dict, measure: Callable[[], Coefficients]) -> Coefficients:
    """The coefficients of ``fields`` from their file, or measured by ``measure`` and written
    (one process measures at a time; an unreadable file is measured again and replaced)."""
    path = path_of(fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.with_suffix(".lock"))):
        found = _read(path, fields)
        if found is not None:
            return found
        coefficients = measure()
        write_text(path, json.dumps({"key": fields, "coefficients": asdict(coefficients),
                                     "measured": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                                    indent=1, sort_keys=True))
        return coefficients


def _read(path: Path, fields: dict) -> Coefficients | None:
    if not path.is_file():
        return None
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
        if content["key"] != fields:
            raise ValueError(f"it holds the timing of {content['key']}")
        return Coefficients(**content["coefficients"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        warnings.warn(f"{path}: unreadable cost coefficients ({err}); measuring them again", stacklevel=3)
        return None
