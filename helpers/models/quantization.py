"""Quantization (bitsandbytes 4-bit NF4 and 8-bit): the configuration, a probe layer that
checks the backend computes sensible values on this machine, and the default dtype."""
from __future__ import annotations

import functools

import torch
from transformers import BitsAndBytesConfig

from .registry import Quant

def quantization_config(quant: Quant, compute_dtype=None):
    """The BitsAndBytesConfig for ``quant`` (None for full precision).

    4-bit is NF4 with bfloat16 compute, as Ide et al. loaded their 70B-class models.
    """
    if quant is None:
        return None
    if quant == "4bit":
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                  bnb_4bit_compute_dtype=compute_dtype or torch.bfloat16,
                                  bnb_4bit_use_double_quant=False)
    if quant == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    raise ValueError(f"quant must be None, '4bit' or '8bit', got {quant!r}")


class QuantizationUnavailableError(RuntimeError):
    """bitsandbytes cannot run the asked quantization on this machine, with what to do about it."""


# Relative error of a probe layer's output (quantized against float32) above which the
# backend counts as broken: NF4 gives about 0.09 on the probe, int8 about 0.007.
PROBE_TOLERANCE = {"4bit": 0.2, "8bit": 0.05}


@functools.lru_cache(maxsize=None)
def quantization_probe(quant: str, device: str) -> float:
    """Relative error of a 128 -> 64 linear layer quantized by bitsandbytes on ``device`` (its
    output against float32 on fixed random data); raises :class:`QuantizationUnavailableError`
    when bitsandbytes is missing, does not support the device, fails, or computes nonsense."""
    if quant not in PROBE_TOLERANCE:
        raise ValueError(f"quant must be '4bit' or '8bit', got {quant!r}")
    fix = "load with quant=None (full precision) or dtype=torch.bfloat16 (half precision) instead"
    try:
        import bitsandbytes as bnb
    except ImportError as err:
        raise QuantizationUnavailableError(f"{quant} quantization needs bitsandbytes ({err}); "
                                           f"pip install 'bitsandbytes>=0.45', or {fix}") from err
    kind = torch.device(device).type
    supported = set(getattr(bnb, "supported_torch_devices", ()))
    if kind not in supported:
        raise QuantizationUnavailableError(
            f"bitsandbytes {bnb.__version__} runs on {sorted(supported) or 'no device'}, not on {kind!r}; "
            f"upgrade bitsandbytes (>= 0.48 runs 4-bit and 8-bit on the CPU), or {fix}")
    g = torch.Generator().manual_seed(0)
    weight = torch.randn(64, 128, generator=g) / 128 ** 0.5  # [out, in]
    x = torch.randn(8, 128, generator=g)  # [8, in]
    try:
        if quant == "4bit":
            layer = bnb.nn.Linear4bit(128, 64, bias=False, compute_dtype=torch.bfloat16, quant_type="nf4")
            layer.weight = bnb.nn.Params4bit(weight.clone(), requires_grad=False, quant_type="nf4")
            x_in = x.to(torch.bfloat16)
        else:
            layer = bnb.nn.Linear8bitLt(128, 64, bias=False, has_fp16_weights=False)
            layer.weight = bnb.nn.Int8Params(weight.clone(), requires_grad=False, has_fp16_weights=False)
            x_in = x.to(torch.float16)
        with torch.no_grad():
            out = layer.to(device)(x_in.to(device)).float().cpu()  # quantized when moved to the device
    except Exception as err:  # noqa: BLE001 - any failure of the backend is the user's answer
        raise QuantizationUnavailableError(
            f"bitsandbytes {bnb.__version__} failed to run a {quant} layer on {kind!r} "
            f"({type(err).__name__}: {err}); {fix}") from err
    ref = x @ weight.T
    error = float((out - ref).norm() / ref.norm())
    if not error < PROBE_TOLERANCE[quant]:
        raise QuantizationUnavailableError(
            f"bitsandbytes {bnb.__version__} runs {quant} on {kind!r} but computes wrong values (relative "
            f"error {error:.3g} on a probe layer, expected < {PROBE_TOLERANCE[quant]}); {fix}")
    return error


def default_dtype(quant: Quant = None):
    """bfloat16 on CUDA (float16 without bfloat16 support); on the CPU float32, and bfloat16
    compute for 4-bit NF4 (as Ide et al. ran it)."""
    if torch.cuda.is_available():
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if quant == "4bit" else torch.float32
