"""Loading a model for scoring.

:func:`load` turns a registry name, a Hugging Face id or a local folder into a
:class:`LoadedModel`: the model and tokenizer ready for scoring (eval mode, pad token set,
right padding), in full precision, bfloat16, 4-bit NF4 or 8-bit (bitsandbytes, on CUDA or the
CPU where its backend runs), on one device or split across devices (``device_map`` with
``max_memory`` per device).
"""
from __future__ import annotations

import os
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import torch
from huggingface_hub import try_to_load_from_cache
from transformers import AutoConfig, AutoTokenizer, GgufConfig

from ..settings import DTYPES
from . import gguf as gguf_files
from .fingerprint import weights_fingerprint
from .kinds import AUTO_CLASSES, model_kind
from .instruct import instruct_decision
from .placement import check_placement, execution_device, refuse_if_too_large
from .quantization import default_dtype, quantization_config, quantization_probe
from .registry import REVISION_MARK, ModelNotFoundError, ModelSpec, Quant, _spec, resolve, with_revision
from .locate import locate
from .weight_files import check_weight_files

@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A model ready for scoring and everything that identifies it: its registry spec, the
    Hugging Face model and tokenizer, quantization, and a fingerprint of its weights.

    Score files take their provenance from :meth:`provenance`; nothing is stored on the
    library objects themselves.
    """

    spec: ModelSpec
    model: object  # transformers PreTrainedModel
    tokenizer: object  # a fast tokenizer
    quant: Quant = None
    weights: str | None = None
    gguf: gguf_files.GGUFCheckpoint | None = None  # the GGUF file the weights were dequantized from
    _decided: dict = field(default_factory=dict, repr=False)  # what was decided once (instruct under "auto")

    @classmethod
    def wrap(cls, model, tokenizer, spec: ModelSpec | None = None, name: str | None = None) -> "LoadedModel":
        """A model and tokenizer built or loaded by other means (tests, notebooks)."""
        if spec is None:
            hf_id = getattr(model.config, "_name_or_path", "") or "unnamed"
            spec = _spec(name or Path(hf_id).name or "unnamed", hf_id, languages=("en", "zh"), local=True)
        return cls(spec, model, tokenizer, None, None)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def start(self) -> str:
        """The registry's document-start convention (what ``start="auto"`` takes): "bos-else-eos",
        "none", "minicons" or a literal token string."""
        return self.spec.start

    @property
    def dtype(self) -> str:
        return str(self.model.dtype).removeprefix("torch.")

    @property
    def is_instruct(self) -> bool:
        """Whether prompts use the chat template by default: the registry entry's kind, else what marks
        an instruct checkpoint (:func:`.instruct.instruct_decision`), said once; ``instruct=`` overrides."""
        if self.spec.kind != "auto":
            return self.spec.is_instruct
        if "instruct" not in self._decided:
            found, line = instruct_decision(self.spec.hf_id if not self.spec.local else self.spec.name, self.model,
                                            self.tokenizer)
            self._decided["instruct"] = found
            if getattr(self.tokenizer, "chat_template", None):  # a real choice: say it, with how to override it
                warnings.warn(line, stacklevel=2)
        return self._decided["instruct"]

    @property
    def kind(self) -> str:
        """The kind of model, which picks its scorer (helpers.engine.kinds): :func:`model_kind`."""
        return model_kind(self.spec, self.model.config, type(self.model).__name__)

    @property
    def input_device(self) -> torch.device:
        """Where token ids go: the input embedding's execution device."""
        return execution_device(self.model.get_input_embeddings())

    @property
    def output_device(self) -> torch.device:
        """Where logits come out: the output head's execution device."""
        return execution_device(self.model.get_output_embeddings())

    def provenance(self) -> dict:
        """What a score file records about the model that produced it."""
        return {"model_name": self.spec.name, "model_id": self.spec.hf_id, "revision": self.spec.revision,
                "weights": self.weights, "quant": self.quant, "dtype": self.dtype,
                **(self.gguf.provenance() if self.gguf else {})}


@dataclass(frozen=True, eq=False)
class Loadable:
    """A model checked by :func:`check_loadable` and not loaded yet: its spec (with the
    revision), where it loads from and whether offline, the quantization as used, and its
    configuration (which decides its :attr:`kind`). :func:`load` takes it without checking again."""

    spec: ModelSpec
    source: str
    offline: bool
    quant: Quant
    config: object
    checkpoint: gguf_files.GGUFCheckpoint | None = None  # a GGUF file, inspected
    trust_remote_code: bool = False  # asked for by the caller (the spec may say so too)

    @property
    def kind(self) -> str:
        return model_kind(self.spec, self.config)

    @property
    def read_options(self) -> dict:
        """transformers' arguments that read its files (revision, remote code, offline, GGUF file)."""
        return _read_options(self.spec, self.offline, self.trust_remote_code)


def _read_options(spec: ModelSpec, offline: bool, trust_remote_code: bool) -> dict:
    # code from a model's Hub repository runs only where its registry spec says so (or the caller asks)
    out = dict(revision=spec.revision, trust_remote_code=trust_remote_code or spec.trust_remote_code,
               local_files_only=offline)
    return out | ({"gguf_file": spec.gguf_file} if spec.gguf_file is not None else {})


def check_loadable(name_or_path, quant: Quant | Literal["auto"] = "auto", revision: str | None = None,
                   trust_remote_code: bool = False) -> Loadable:
    """What :func:`load` checks before it reads any weights: the model's spec (with ``revision``),
    where it loads from and whether offline, the quantization (``"auto"``: the spec's), probed on
    this machine, and the configuration (the model's kind). A clear error for an unknown model, a
    revision of a local model, a model or revision that is not in the local cache offline, a
    damaged GGUF file and a quantization that does not run here."""
    spec = resolve(name_or_path)
    if revision:
        if REVISION_MARK in spec.name and spec.revision != revision:
            raise ModelNotFoundError(f"{spec.name!r} names revision {spec.revision!r}, and revision {revision!r} was "
                                     "given too: give one of them")
        spec = with_revision(spec, revision)  # named <model>@<revision>: stored apart from the other revisions
    source, offline = locate(spec)
    check_weight_files(source)
    quant = spec.default_quant if quant == "auto" else quant
    if quant is not None and spec.gguf_file is not None:
        raise ValueError(f"{spec.name} is a GGUF checkpoint, which transformers dequantizes to the dtype asked for and "
                         f"cannot quantize again with bitsandbytes: pass quant='none' (or load the original weights "
                         f"in {quant})")
    if quant is not None:
        quantization_probe(quant, "cuda" if torch.cuda.is_available() else "cpu")
    checkpoint = None
    if spec.gguf_file is not None:  # checked (damage, architecture) before transformers reads any of it
        checkpoint = gguf_files.inspect(Path(source) / spec.gguf_file, spec.packaged.sha256 if spec.packaged else None)
    config = AutoConfig.from_pretrained(source, **_read_options(spec, offline, trust_remote_code))
    return Loadable(spec, source, offline, quant, config, checkpoint, trust_remote_code)


def load(name_or_path, quant: Quant | Literal["auto"] = "auto", dtype=None, device_map="auto",
         max_memory: dict | None = None, offload_folder: str | os.PathLike | None = None,
         trust_remote_code: bool = False, revision: str | None = None, tokenizer=None) -> LoadedModel:
    """Load a model and its tokenizer ready for scoring, as a :class:`LoadedModel`
    (``name_or_path`` may be a :class:`Loadable`, checked already with its quant and revision;
    ``tokenizer`` its :func:`load_tokenizer`, read already).

    ``quant="auto"`` takes the spec's default (4-bit NF4 from 30B parameters up);
    None loads full precision, "4bit" NF4, "8bit" LLM.int8 (bitsandbytes, on CUDA or on the
    CPU where a probe finds its backend working; else a clear error). ``dtype`` (a torch dtype
    or its name) defaults to bfloat16 on CUDA, float32 on the CPU (bfloat16 compute for 4-bit).
    ``device_map="auto"`` spreads the model over the GPUs (accelerate); on a machine without
    CUDA the model stays on the CPU unless ``max_memory`` is given. ``max_memory`` caps each
    device ({0: "20GiB", 1: "20GiB", "cpu": "60GiB", "disk": "200GiB"}): what does not fit
    goes to the next device, the CPU, then the disk (``offload_folder``).
    """
    max_memory = check_placement(device_map, max_memory, offload_folder)
    if isinstance(name_or_path, Loadable):
        if quant != "auto" or revision is not None:
            raise TypeError(f"{name_or_path.spec.name} was checked with its quant and revision already: "
                            "pass the model's name to load it with others")
        loadable = name_or_path if not trust_remote_code else replace(name_or_path, trust_remote_code=True)
    else:
        loadable = check_loadable(name_or_path, quant, revision, trust_remote_code)
    spec, source, quant, checkpoint = loadable.spec, loadable.source, loadable.quant, loadable.checkpoint
    if isinstance(dtype, str):  # a name, as helpers.settings.Settings gives it
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)} (or None: the device's), got {dtype!r}")
        dtype = getattr(torch, dtype)
    dtype = dtype or default_dtype(quant)
    if torch.cuda.is_available() and device_map == "auto" and max_memory is None and offload_folder is None:
        refuse_if_too_large(loadable, dtype)
    kwargs = loadable.read_options
    tokenizer = load_tokenizer(loadable) if tokenizer is None else tokenizer
    model_kwargs = dict(kwargs, dtype=dtype, quantization_config=quantization_config(quant, dtype))
    # "auto" without CUDA and without caps would place everything on the CPU anyway: loaded plainly
    if device_map is not None and (torch.cuda.is_available() or max_memory or device_map != "auto"):
        model_kwargs.update(device_map=device_map, max_memory=max_memory)
        if offload_folder is not None:
            model_kwargs["offload_folder"] = str(offload_folder)
    if checkpoint is not None:  # the configuration read already: transformers would parse the whole file again
        model_kwargs["config"] = loadable.config
        # plain weights in the dtype asked for on every machine (with the `kernels` package installed
        # transformers would otherwise keep quantized blocks and compute in its own kernels)
        model_kwargs["quantization_config"] = GgufConfig(dequantize=True)
    with gguf_files.routed_progress() if checkpoint is not None else nullcontext():
        model = AUTO_CLASSES[loadable.kind].from_pretrained(source, **model_kwargs)
    model.eval()
    model.requires_grad_(False)
    if checkpoint is not None:
        gguf_files.as_plain_weights(model)
        return LoadedModel(spec, model, tokenizer, None, fingerprint(loadable), checkpoint)
    return LoadedModel(spec, model, tokenizer, quant, fingerprint(loadable))


def load_tokenizer(loadable: Loadable):
    """The tokenizer of a checked model as the engine reads it, without its weights: fast (an
    error otherwise), its pad token set, padding on the right, a GGUF file's own chat template."""
    spec, checkpoint = loadable.spec, loadable.checkpoint
    tokenizer = AutoTokenizer.from_pretrained(loadable.source, **loadable.read_options)
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(f"{spec.name}: the engine needs a fast tokenizer (character offsets); "
                        "install `tokenizers` or convert the tokenizer")
    if checkpoint is not None and checkpoint.chat_template and not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = checkpoint.chat_template  # the file's own template (kept where transformers drops it)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "right"
    return tokenizer


def fingerprint(loadable: Loadable) -> str | None:
    """What identifies a checked model's weights, read from its files (:attr:`LoadedModel.weights`):
    a GGUF file's sha256, else :func:`weights_fingerprint` of its folder or Hub commit."""
    if loadable.checkpoint is not None:
        return loadable.checkpoint.sha256[:16]
    return weights_fingerprint(loadable.source, _hub_commit(loadable.spec))


def _hub_commit(spec: ModelSpec) -> str | None:
    """The Hub commit whose files were loaded (the cached snapshot's name), None for local models."""
    if spec.local:
        return None
    cached = try_to_load_from_cache(spec.hf_id, "config.json", revision=spec.revision)
    return Path(cached).parent.name if isinstance(cached, str) else None
