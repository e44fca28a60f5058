"""Where a model's weights go: ``max_memory`` per device checked (its text forms are parsed by
:class:`helpers.settings.Settings`), and the device a (dispatched) module computes on."""
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


# Of the GPUs' memory, what the weights may take (activations, the cache and the CUDA context need the rest).
WEIGHTS_SHARE = 0.9
BYTES_PER_WEIGHT = {"4bit": 0.5, "8bit": 1.0}


def weight_count(config, kind: str) -> int:
    """How many weights a model holds, counted on an empty model built from its configuration
    (nothing read or allocated)."""
    from accelerate import init_empty_weights

    from .kinds import AUTO_CLASSES

    with init_empty_weights():
        model = AUTO_CLASSES[kind].from_config(config)
    return sum(p.numel() for p in model.parameters())


def weight_bytes(count: int, dtype: torch.dtype, quant: str | None) -> int:
    """The bytes of ``count`` weights in ``dtype`` (or quantized)."""
    return int(count * (BYTES_PER_WEIGHT.get(quant) or torch.finfo(dtype).bits / 8))


def too_large(name: str, sizes: dict[str, int], precision: str, gpu_bytes: int) -> str | None:
    """The refusal of a model whose weights in ``precision`` (a key of ``sizes``: the dtype's name,
    "8bit", "4bit") exceed :data:`WEIGHTS_SHARE` of ``gpu_bytes``, naming the sizes and the
    ``quant=`` that fits; None when they fit."""
    room = WEIGHTS_SHARE * gpu_bytes
    if sizes[precision] <= room:
        return None
    gib = 2**30
    fits = [q for q in ("8bit", "4bit") if q in sizes and sizes[q] <= room]
    listed = ", ".join(f"{p} {size / gib:.1f} GiB" for p, size in sizes.items())
    advice = (f"load it with quant={fits[0]!r}" if fits else "no quantization fits either: use more GPUs")
    return (f"{name}'s weights take {sizes[precision] / gib:.1f} GiB in {precision}, more than the GPUs here hold "
            f"({gpu_bytes / gib:.1f} GiB, of which {WEIGHTS_SHARE:.0%} for weights; {listed}): {advice}, or ask "
            "for offloading to the CPU and disk explicitly (max_memory={0: '70GiB', 'cpu': '200GiB'} and "
            "offload_folder=...; slow)")


def refuse_if_too_large(loadable, dtype: torch.dtype) -> None:
    """Before loading on CUDA with the default placement: a model whose weights would not fit the
    GPUs is refused (:func:`too_large_refusal`), not offloaded to the CPU without a word."""
    gpus = sum(torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count()))
    if refusal := too_large_refusal(loadable, dtype, gpus):
        raise MemoryError(refusal)


def too_large_refusal(loadable, dtype: torch.dtype, gpu_bytes: int) -> str | None:
    """The refusal of ``loadable`` (a Hub model, a registry entry with its quantization, a local
    folder or a GGUF file, dequantized to ``dtype`` on loading) whose weights in its precision
    would not fit ``gpu_bytes`` (:func:`~helpers.models.placement.too_large`); None when they fit."""
    count = weight_count(loadable.config, loadable.kind)
    sizes = {str(dtype).removeprefix("torch."): weight_bytes(count, dtype, None),
             **{q: weight_bytes(count, dtype, q) for q in ("8bit", "4bit")}}
    precision = loadable.quant or str(dtype).removeprefix("torch.")
    return too_large(loadable.spec.name, sizes, precision, gpu_bytes)
