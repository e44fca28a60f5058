"""The output embedding then the model's logit transform, in float32 whatever the model's dtype:
hidden states [positions, width] to logits [positions, vocab], at the positions the engine reads.

How a head computes (:meth:`Projection.path`):

- "float32-output": a half-precision plain linear head on CUDA multiplies its own bf16/fp16
  operands with float32 output (``torch.mm(..., out_dtype=torch.float32)``): every product of two
  half-precision values is exact in float32 and cuBLAS adds them in float32 (reduced-precision
  reductions turned off for the call), so the logits are the float32 head's at the tensor cores'
  rate, with no float32 copy of the weight (the copy cost a float32 matrix product, about the
  time of the whole bf16 body on Llama 3 8B, and 4 GB on a 70B head: 128,256 x 8,192 float32 values).
- "float32-copy": a half-precision plain linear head elsewhere (the CPU has no such product)
  multiplies float32 copies of the hidden states and of its weight (the copy made once and kept).
- "float32-cast": the same where an accelerate hook places the head (a ``device_map`` over
  several devices, or offloaded to the CPU or the disk): the weight is loaded onto the head's
  execution device for the call (:meth:`Projection.ready`) and cast slice by slice, nothing kept.
- "float32-dequantized": a bitsandbytes head (NF4/FP4 or LLM.int8, where a model quantizes its
  output layer) multiplies float32 hidden states by its weight dequantized to float32 once (kept, as
  "float32-copy" keeps its copy), slice by slice, where that copy fits a quarter of the memory free
  on the head's device; else "quantized-module": the module itself in its compute dtype (bf16
  logits), with a warning. Its vocabulary size is the layer's ``out_features`` (the packed weight's
  shape is not the vocabulary's).
- "module": a float32 or float64 head, or another kind of layer, runs as the module, its output
  taken in float32.

A plain linear head, placed by a hook or not, and a dequantized one can be read a vocabulary slice at a time
(:meth:`Projection.columns`, :func:`helpers.engine.head.logprobs_at`).
"""
from __future__ import annotations

from contextlib import contextmanager

import torch

from ..models.placement import execution_device
from .logit_transform import LogitTransform
from .quantized_head import dequantized, dequantized_fits

HALF = (torch.bfloat16, torch.float16)


@contextmanager
def float32_reduction():
    """cuBLAS half-precision products reduced in float32 within the block (PyTorch allows
    reduced-precision split-K reductions by default)."""
    matmul = torch.backends.cuda.matmul
    kept = matmul.allow_bf16_reduced_precision_reduction, matmul.allow_fp16_reduced_precision_reduction
    matmul.allow_bf16_reduced_precision_reduction = matmul.allow_fp16_reduced_precision_reduction = False
    try:
        yield
    finally:
        matmul.allow_bf16_reduced_precision_reduction, matmul.allow_fp16_reduced_precision_reduction = kept


@contextmanager
def rounded_head():
    """Within the block, every head runs as the module in the model's dtype, its logits rounded
    to it as transformers computes them (the baseline of benchmarks/bench_bf16_head.py and of
    scripts/gpu_check.py, not a setting)."""
    Projection.float32 = False
    try:
        yield
    finally:
        Projection.float32 = True


class Projection:
    """``transform(head(hidden))`` in float32 (module docstring)."""

    float32 = True  # False only within :func:`rounded_head`

    def __init__(self, head: torch.nn.Module, transform: LogitTransform):
        self.head, self.transform = head, transform
        self.vocab = int(getattr(head, "out_features", None) or head.weight.shape[0])
        self._copy: tuple[torch.Tensor, torch.Tensor | None] | None = None  # "float32-copy"'s weights
        self._depth = 0  # nesting of :meth:`ready`
        self._no_output_dtype = False  # torch.mm took no out_dtype (torch before 2.8)
        self._dequantize: bool | None = None  # a quantized head: whether its float32 copy fits (decided once)

    @property
    def sliceable(self) -> bool:
        """Whether the head's rows can be read a slice at a time: a plain linear layer, or a quantized
        one dequantized to float32."""
        plain = type(self.head) is torch.nn.Linear and getattr(self.head, "weight", None) is not None
        return plain or self.path() == "float32-dequantized"

    @property
    def quantized(self) -> bool:
        """Whether the head is a bitsandbytes layer (4-bit with a quant_state, or 8-bit with its CB and SCB)."""
        weight = getattr(self.head, "weight", None)
        return getattr(weight, "quant_state", None) is not None or getattr(weight, "SCB", None) is not None

    @property
    def hooked(self) -> bool:
        return hasattr(self.head, "_hf_hook")

    def path(self) -> str:
        """How the head computes: "float32-output", "float32-copy", "float32-cast",
        "float32-dequantized", "quantized-module" or "module"."""
        if self.quantized:
            if self._dequantize is None:
                self._dequantize = dequantized_fits(self.head, self.vocab)
            return "float32-dequantized" if self.float32 and self._dequantize else "quantized-module"
        plain = type(self.head) is torch.nn.Linear and getattr(self.head, "weight", None) is not None
        if not (self.float32 and plain and self.head.weight.dtype in HALF):
            return "module"
        if self.on_cuda() and not self._no_output_dtype:
            return "float32-output"
        return "float32-cast" if self.hooked else "float32-copy"

    def on_cuda(self) -> bool:
        """Whether the head computes on a CUDA device (where a half-precision product can output float32)."""
        return execution_device(self.head).type == "cuda"

    @contextmanager
    def ready(self):
        """The head's weights on its execution device within the block: a hook's offloaded weights
        loaded once (re-entrant: only the outermost block loads and offloads them again)."""
        hook = getattr(self.head, "_hf_hook", None)
        if hook is None or not self.sliceable or self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth += 1
        hook.pre_forward(self.head)
        try:
            yield
        finally:
            hook.post_forward(self.head, None)
            self._depth -= 1

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.path() in ("module", "quantized-module"):
            return self.transform(self.head(hidden).float())
        with self.ready():
            return self.columns(self.prepared(hidden), 0, self.vocab)

    def prepared(self, hidden: torch.Tensor) -> torch.Tensor:
        """The hidden states as :meth:`columns` multiplies them: on the head's execution device,
        in float32 where the head's weight is cast or copied to float32."""
        hidden = hidden.to(execution_device(self.head))
        return hidden.float() if self.path() in ("float32-copy", "float32-cast", "float32-dequantized") else hidden

    def columns(self, hidden: torch.Tensor, start: int, stop: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """Float32 logits of vocabulary entries ``start`` to ``stop`` (the transform applied) for
        hidden states from :meth:`prepared` (within :meth:`ready` for a head placed by a hook). With
        ``out`` (a flat float32 scratch tensor of at least positions x slice values on the logits'
        device), float32 operands multiply into it and the logits are a view of it: a head read slice
        by slice allocates no new logits per slice (the same values)."""
        path, weight, bias = self.path(), self.head.weight, self.head.bias
        if path in ("float32-copy", "float32-dequantized"):  # ("float32-output" before a fallback: cast below)
            weight, bias = self._float32_copy()
        weight, bias = weight[start:stop], None if bias is None else bias[start:stop]
        if path == "float32-output" and hidden.dtype == weight.dtype:
            try:
                with float32_reduction():
                    part = torch.mm(hidden, weight.T, out_dtype=torch.float32)
                return self.transform(part if bias is None else part + bias.float())
            except (TypeError, NotImplementedError, RuntimeError) as err:  # torch before 2.8: no out_dtype
                if "out_dtype" not in str(err) and not isinstance(err, TypeError):
                    raise
                self._no_output_dtype = True  # from now on "float32-copy": this slice and every later one
                return self.columns(hidden, start, stop, out)
        if path in ("float32-cast", "float32-output", "float32-copy", "float32-dequantized"):  # operands in float32
            hidden, weight, bias = hidden.float(), weight.float(), None if bias is None else bias.float()
        if out is not None and hidden.dtype == weight.dtype == out.dtype == torch.float32 \
                and hidden.device == out.device and hidden.dim() == 2:
            logits = out[:hidden.shape[0] * (stop - start)].view(hidden.shape[0], stop - start)
            if bias is None:  # as torch.nn.functional.linear computes a 2-D input: mm, or addmm with a bias
                torch.mm(hidden, weight.T, out=logits)
            else:
                torch.addmm(bias, hidden, weight.T, out=logits)
            return self.transform.apply_(logits)
        return self.transform(torch.nn.functional.linear(hidden, weight, bias).float())

    def _float32_copy(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self._copy is None:
            bias = self.head.bias
            weight = dequantized(self.head) if self.quantized else self.head.weight.detach().float()
            self._copy = (weight, None if bias is None else bias.detach().float())
        return self._copy
