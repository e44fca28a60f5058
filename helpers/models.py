"""Model registry and loading.

A short name (``llama3``, ``gpt2``, ``tiny-llama``...) maps to a :class:`ModelSpec`;
:func:`load` turns a name, a Hugging Face id or a local folder into a model and a
tokenizer ready for scoring (eval mode, pad token set, right padding).
"""
from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import torch
from huggingface_hub import constants as hub_constants
from huggingface_hub import try_to_load_from_cache
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

from .paths import ROOT
from .zoo.tiny import ensure as ensure_tiny

Quant = Literal["4bit", "8bit"] | None
# Models of this size (billions of parameters) and more load in 4-bit NF4 by
# default, as Ide et al. (2024) ran them.
QUANTIZE_FROM_BILLIONS = 30.0


@dataclass(frozen=True)
class ModelSpec:
    """What the project needs to know about a model besides its weights."""

    name: str
    hf_id: str
    kind: Literal["base", "instruct"] = "base"
    languages: tuple[str, ...] = ("en",)
    billions: float = 0.0
    # "auto": the tokenizer's BOS, else its EOS; or a literal token string.
    start_token: str = "auto"
    revision: str | None = None
    local: bool = False  # hf_id is a folder (relative to the repo root) or a tiny model
    tiny: bool = False  # built on demand by helpers.zoo.tiny
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def default_quant(self) -> Quant:
        return "4bit" if self.billions >= QUANTIZE_FROM_BILLIONS else None

    @property
    def is_instruct(self) -> bool:
        return self.kind == "instruct"


def _spec(name, hf_id, kind="base", languages=("en",), billions=0.0, **kw) -> ModelSpec:
    return ModelSpec(name=name, hf_id=hf_id, kind=kind, languages=tuple(languages), billions=billions, **kw)


_SPECS = [
    _spec("llama3", "meta-llama/Meta-Llama-3-70B", billions=70.6),
    _spec("llama3-instruct", "meta-llama/Meta-Llama-3-70B-Instruct", "instruct", billions=70.6),
    _spec("llama3-8b", "meta-llama/Meta-Llama-3-8B", billions=8.0),
    _spec("llama3-8b-instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "instruct", billions=8.0),
    _spec("mixtral", "mistralai/Mixtral-8x7B-v0.1", billions=46.7),
    _spec("mixtral-instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1", "instruct", billions=46.7,
          notes="chat template has no system role: the system text goes in front of the user message"),
    _spec("qwen2", "Qwen/Qwen2-57B-A14B", languages=("en", "zh"), billions=57.4,
          notes="tokenizer has no BOS: sequences start with <|endoftext|>"),
    _spec("qwen2-instruct", "Qwen/Qwen2-57B-A14B-Instruct", "instruct", ("en", "zh"), 57.4),
    _spec("qwen2-7b", "Qwen/Qwen2-7B", languages=("en", "zh"), billions=7.6),
    _spec("qwen2-7b-instruct", "Qwen/Qwen2-7B-Instruct", "instruct", ("en", "zh"), 7.6),
    _spec("gpt2", "openai-community/gpt2", billions=0.124),
    _spec("gpt2-xl", "openai-community/gpt2-xl", billions=1.56),
    _spec("opt-125m", "facebook/opt-125m", billions=0.125),
    _spec("opt-350m", "facebook/opt-350m", billions=0.35),
    _spec("opt-1.3b", "facebook/opt-1.3b", billions=1.3),
    _spec("opt-2.7b", "facebook/opt-2.7b", billions=2.7),
    _spec("opt-6.7b", "facebook/opt-6.7b", billions=6.7),
    _spec("gpt2-chinese", "uer/gpt2-chinese-cluecorpussmall", languages=("zh",), billions=0.102,
          start_token="[CLS]", notes="BERT-style tokenizer without BOS/EOS; sequences start with [CLS] as its authors do"),
    _spec("llama3-chinese-8b", "hfl/llama-3-chinese-8b", languages=("zh", "en"), billions=8.0),
]
# The project's own small models, trained offline from the mirror's corpora (helpers.zoo.demo_training).
_SPECS += [
    _spec("demo-en", "data/models/demo-en", languages=("en",), billions=0.0055, local=True,
          notes="trained by this project; the offline default for English"),
    _spec("demo-zh", "data/models/demo-zh", languages=("zh",), billions=0.003, local=True,
          notes="trained by this project; the offline default for Chinese"),
]
DEFAULT_MODEL = {"en": "demo-en", "zh": "demo-zh"}
# Random-weight test models, built offline in seconds (see helpers.zoo.tiny).
for _arch in ("llama", "qwen2", "mixtral", "gpt2"):
    _SPECS.append(_spec(f"tiny-{_arch}", f"tiny-{_arch}", languages=("en", "zh"), local=True, tiny=True,
                        notes="random weights, for tests"))
    _SPECS.append(_spec(f"tiny-{_arch}-instruct", f"tiny-{_arch}-instruct", "instruct", ("en", "zh"),
                        local=True, tiny=True, notes="random weights, Llama-3-style chat template"))

REGISTRY: dict[str, ModelSpec] = {s.name: s for s in _SPECS}


class ModelNotFoundError(LookupError):
    """A model name, id or folder that cannot be loaded, with what to do about it."""


def registry_table() -> str:
    """The registry as aligned text lines (for errors and the CLI)."""
    lines = [f"{'name':<24}{'kind':<10}{'lang':<8}{'quant':<7}hf id"]
    for s in REGISTRY.values():
        lines.append(f"{s.name:<24}{s.kind:<10}{','.join(s.languages):<8}{s.default_quant or '-':<7}{s.hf_id}")
    return "\n".join(lines)


def resolve(name_or_path: str | os.PathLike) -> ModelSpec:
    """The spec of a registered name, a local folder, or a Hugging Face id ("org/name")."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"model must be a registry name, a folder or a Hugging Face id, got {type(name_or_path).__name__}")
    key = str(name_or_path)
    if key in REGISTRY:
        return REGISTRY[key]
    path = Path(key).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(
                f"the folder {path} holds no model (no config.json). Pass a folder written by "
                "save_pretrained, or a registered name:\n" + registry_table())
        return _spec(path.name, str(path.resolve()), local=True, languages=("en", "zh"))
    if "/" in key and not key.startswith((".", "/", "~")):
        return _spec(key, key, languages=("en", "zh"))
    raise ModelNotFoundError(
        f"unknown model {key!r}: not a registered name, not a folder, not a Hugging Face id (org/name). "
        "Registered models:\n" + registry_table())


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


def _hub_reachable(timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


def _locate(spec: ModelSpec) -> tuple[str, bool]:
    """Where to load from and whether to stay offline; fails at once with no copy and no network."""
    if spec.tiny:
        return str(ensure_tiny(spec.name)), True
    if spec.local:
        path = Path(spec.hf_id)
        if not path.is_absolute():
            path = ROOT / path
        if not (path / "config.json").is_file():
            how = (f" Train it with: python -m helpers train-demo --language {spec.languages[0]} --out {spec.hf_id}"
                   if spec.name.startswith("demo-") else "")
            raise ModelNotFoundError(f"model {spec.name!r} should be in {path}, which holds no model.{how}")
        return str(path), True
    offline = bool(hub_constants.HF_HUB_OFFLINE)  # huggingface_hub's own reading of HF_HUB_OFFLINE
    cached = try_to_load_from_cache(spec.hf_id, "config.json", revision=spec.revision)
    if isinstance(cached, str):
        return spec.hf_id, offline
    if offline or not _hub_reachable():
        why = "HF_HUB_OFFLINE is set" if offline else "the Hugging Face Hub cannot be reached"
        raise ModelNotFoundError(
            f"{spec.name!r} ({spec.hf_id}) is not in the local Hugging Face cache and {why}. "
            f"Download it where the Hub is reachable (huggingface-cli download {spec.hf_id}), "
            "copy the cache here (HF_HOME), or pass a local folder written by save_pretrained.")
    return spec.hf_id, False


def default_dtype():
    if torch.cuda.is_available():
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


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
    def start_token(self) -> str:
        """The document-start policy: "auto" (BOS, else EOS) or a literal token string."""
        return self.spec.start_token

    @property
    def dtype(self) -> str:
        return str(self.model.dtype).removeprefix("torch.")

    @property
    def is_instruct(self) -> bool:
        return self.spec.is_instruct

    def provenance(self) -> dict:
        """What a score file records about the model that produced it."""
        return {"model_name": self.spec.name, "model_id": self.spec.hf_id, "revision": self.spec.revision,
                "weights": self.weights, "quant": self.quant, "dtype": self.dtype}


def load(name_or_path, quant: Quant | Literal["auto"] = "auto", dtype=None, device_map="auto",
         trust_remote_code: bool = False, revision: str | None = None) -> LoadedModel:
    """Load a model and its tokenizer ready for scoring, as a :class:`LoadedModel`.

    ``quant="auto"`` takes the spec's default (4-bit NF4 from 30B parameters up);
    None loads full precision. ``dtype`` defaults to bfloat16 on CUDA, float32 on CPU.
    ``device_map="auto"`` spreads the model over the GPUs (accelerate); on a machine
    without CUDA the model stays on the CPU.
    """
    spec = resolve(name_or_path)
    if revision:
        spec = replace(spec, revision=revision)
    source, offline = _locate(spec)
    quant = spec.default_quant if quant == "auto" else quant
    if quant is not None and not torch.cuda.is_available():
        raise RuntimeError(f"{quant} quantization (bitsandbytes) needs a CUDA GPU and none is visible; "
                           "load with quant=None on this machine")
    dtype = dtype or default_dtype()
    kwargs = dict(revision=spec.revision, trust_remote_code=trust_remote_code, local_files_only=offline)
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(f"{spec.name}: the engine needs a fast tokenizer (character offsets); "
                        "install `tokenizers` or convert the tokenizer")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "right"
    model_kwargs = dict(kwargs, dtype=dtype, quantization_config=quantization_config(quant, dtype))
    if torch.cuda.is_available() and device_map is not None:
        model_kwargs["device_map"] = device_map
    model = AutoModelForCausalLM.from_pretrained(source, **model_kwargs)
    model.eval()
    model.requires_grad_(False)
    return LoadedModel(spec, model, tokenizer, quant,
                       weights_fingerprint(source, getattr(model.config, "_commit_hash", None)))


def weights_fingerprint(source, commit: str | None = None) -> str | None:
    """What identifies the loaded weights, so that stored scores of a retrained model are
    not mistaken for its new ones: the Hub commit, or for a local folder a hash of its weight
    files (their content up to 1 GiB in all, else their names, sizes and modification times)."""
    folder = Path(source)
    if not folder.is_dir():
        return commit
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt", ".gguf"))
    digest = hashlib.sha256()
    small = sum(p.stat().st_size for p in files) <= 2**30
    for p in files:
        digest.update(p.name.encode())
        if small:
            digest.update(p.read_bytes())
        else:
            digest.update(f"{p.stat().st_size}:{p.stat().st_mtime_ns}".encode())
    return digest.hexdigest()[:16] if files else commit
