"""A bitsandbytes output layer (a model that quantizes its head) read in float32: its weight
dequantized once, where the float32 copy fits; else the module's own compute-dtype logits, said
once (:class:`helpers.engine.projection.Projection` decides once per head, paths
"float32-dequantized" and "quantized-module")."""
from __future__ import annotations

import warnings

import torch

from ..models.placement import execution_device

SHARE_OF_FREE = 0.25  # the float32 copy may take at most this share of the memory free on the head's device


def dequantized(head: torch.nn.Module) -> torch.Tensor:
    """The head's weight [vocab, width] in float32 on its device: NF4/FP4 through its quant_state,
    LLM.int8 through its row scales (bitsandbytes' own dequantization)."""
    import bitsandbytes.functional as bnbf

    weight = head.weight
    if getattr(weight, "quant_state", None) is not None:
        return bnbf.dequantize_4bit(weight.data, weight.quant_state).float()
    return bnbf.int8_vectorwise_dequant(weight.CB, weight.SCB).float()


def free_bytes(device: torch.device) -> int:
    """Memory free on ``device`` now (CUDA: the driver's count; the CPU: the available RAM)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    import psutil

    return int(psutil.virtual_memory().available)


def dequantized_fits(head: torch.nn.Module, vocab: int) -> bool:
    """Whether ``head``'s float32 copy fits :data:`SHARE_OF_FREE` of its device's free memory; when
    it does not, a warning that the logits are the module's compute dtype."""
    width = int(getattr(head, "in_features", 0))
    fits = vocab * width * 4 <= SHARE_OF_FREE * free_bytes(execution_device(head))
    if not fits:
        warnings.warn(f"the quantized output layer ({vocab:,} x {width:,}) does not fit in float32 beside "
                      "the model here: its logits are the module's compute dtype (bfloat16), recorded as head_path "
                      "'quantized-module'; free memory, or load the model with its head unquantized", stacklevel=3)
    return fits
