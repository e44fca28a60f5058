"""Where a model's weights go: ``max_memory`` per device checked, the text forms of the
command line and notebook parameters parsed, and the device a (dispatched) module computes on."""
from __future__ import annotations

import torch
from accelerate.utils import convert_file_size_to_int

def check_placement(device_map, max_memory: dict | None, offload_folder) -> dict | None:
    """``max_memory`` checked and copied (accelerate rewrites it in place): keys are GPU indices,
    "cpu", "mps" or "disk", values bytes or sizes such as "20GiB"; "disk" needs an offload folder."""
    if max_memory is None:
        return None
    if not isinstance(max_memory, dict) or not max_memory:
        raise TypeError(f"max_memory must be a dict of device -> size, e.g. {{0: '20GiB', 'cpu': '60GiB'}}, "
                        f"got {max_memory!r}")
    if device_map is None or isinstance(device_map, dict):
        raise ValueError("max_memory applies to a computed placement: pass device_map='auto' (or 'balanced', "
                         "'balanced_low_0', 'sequential') with it, not a fixed device map or None")
    out = {}
    for key, size in max_memory.items():
        device = int(key) if isinstance(key, str) and key.isdigit() else key
        if not (isinstance(device, int) and device >= 0) and device not in ("cpu", "mps", "disk"):
            raise ValueError(f"max_memory key {key!r} is not a device: use GPU indices (0, 1, ...), 'cpu', "
                             "'mps' or 'disk'")
        try:
            out[device] = convert_file_size_to_int(size) if isinstance(size, str) else int(size)
        except (ValueError, TypeError) as err:
            raise ValueError(f"max_memory[{key!r}] = {size!r} is not a size: give bytes or e.g. '20GiB', "
                             f"'500MB'") from err
    if "disk" in out and offload_folder is None:
        raise ValueError("max_memory lets weights go to 'disk': pass offload_folder (a folder for the "
                         "offloaded weights)")
    return out


def parse_max_memory(items) -> dict | None:
    """``["0=20GiB", "cpu=60GiB"]`` or ``"0=20GiB,cpu=60GiB"`` (the command line's and a
    notebook parameter's forms) as ``{0: "20GiB", "cpu": "60GiB"}``; a dict is kept."""
    if not items:
        return None
    if isinstance(items, dict):
        return dict(items)
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    out = {}
    for item in items:
        key, sep, size = str(item).partition("=")
        if not sep or not key.strip() or not size.strip():
            raise ValueError(f"max memory {item!r} is not DEVICE=SIZE, e.g. 0=20GiB or cpu=60GiB")
        key = key.strip()
        out[int(key) if key.isdigit() else key] = size.strip()
    return out


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def load_options(quant="auto", dtype=None, device_map="auto", max_memory=None, offload_folder=None) -> dict:
    """:func:`load`'s precision and placement arguments from their text forms (command line,
    notebook parameters): quant "auto", "none", "4bit" or "8bit"; dtype "auto", "float32",
    "bfloat16" or "float16"; device_map "auto", "none", "balanced", ...; max_memory as
    ``0=20GiB,cpu=60GiB``."""
    quant = None if quant in (None, "none", "None", "null") else quant
    if quant not in (None, "auto", "4bit", "8bit"):
        raise ValueError(f"quant must be 'auto', 'none', '4bit' or '8bit', got {quant!r}")
    if isinstance(dtype, str):
        if dtype != "auto" and dtype not in DTYPES:
            raise ValueError(f"dtype must be 'auto' or one of {', '.join(DTYPES)}, got {dtype!r}")
        dtype = DTYPES.get(dtype)
    device_map = None if device_map in (None, "none", "None", "null") else device_map
    return {"quant": quant, "dtype": dtype, "device_map": device_map,
            "max_memory": parse_max_memory(max_memory), "offload_folder": offload_folder}


def execution_device(module) -> torch.device:
    """The device ``module`` computes on: the execution device of its accelerate hook when the
    model was dispatched with a device map (its weights may wait on the CPU or the disk, shown
    as "meta"), else the device of its first weight."""
    hook = getattr(module, "_hf_hook", None)
    for h in getattr(hook, "hooks", None) or [hook]:  # a SequentialHook holds several
        device = getattr(h, "execution_device", None)
        if device is not None:
            return torch.device(device)
    for tensor in module.parameters():
        return tensor.device
    for tensor in module.buffers():
        return tensor.device
    return torch.device("cpu")
