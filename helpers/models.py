"""Model registry and loading.

A short name (``llama3``, ``gpt2``, ``tiny-llama``...) maps to a :class:`ModelSpec`;
:func:`load` turns a name, a Hugging Face id or a local folder into a model and a
tokenizer ready for scoring (eval mode, pad token set, right padding), in full precision,
bfloat16, 4-bit NF4 or 8-bit (bitsandbytes, on CUDA or the CPU where its backend runs), on
one device or split across devices (``device_map`` with ``max_memory`` per device).
"""
from __future__ import annotations

import functools
import hashlib
import os
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import torch
from huggingface_hub import constants as hub_constants
from huggingface_hub import try_to_load_from_cache
from accelerate.utils import convert_file_size_to_int
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer, BitsAndBytesConfig

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
    architecture: Literal["causal", "seq2seq"] = "causal"  # seq2seq: scored by helpers.seq2seq

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
# Hu & Levy (2023)'s encoder-decoders; instruction-tuned but without a chat template: base-model prompts.
_SPECS += [_spec(f"flan-t5-{size}", f"google/flan-t5-{size}", billions=b, architecture="seq2seq",
                 notes="encoder-decoder (helpers.seq2seq): Hu & Levy 2023's Flan-T5")
           for size, b in (("small", 0.077), ("large", 0.783), ("xl", 2.85))]
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
_SPECS.append(_spec("tiny-t5", "tiny-t5", languages=("en", "zh"), local=True, tiny=True, architecture="seq2seq",
                    notes="random weights, Flan-T5's layout, for tests"))

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


def default_dtype(quant: Quant = None):
    """bfloat16 on CUDA (float16 without bfloat16 support); on the CPU float32, and bfloat16
    compute for 4-bit NF4 (as Ide et al. ran it)."""
    if torch.cuda.is_available():
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if quant == "4bit" else torch.float32


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

    @property
    def is_seq2seq(self) -> bool:
        """An encoder-decoder (scored by helpers.seq2seq.Seq2SeqScorer)."""
        return bool(getattr(self.model.config, "is_encoder_decoder", False))

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
                "weights": self.weights, "quant": self.quant, "dtype": self.dtype}


def load(name_or_path, quant: Quant | Literal["auto"] = "auto", dtype=None, device_map="auto",
         max_memory: dict | None = None, offload_folder: str | os.PathLike | None = None,
         trust_remote_code: bool = False, revision: str | None = None) -> LoadedModel:
    """Load a model and its tokenizer ready for scoring, as a :class:`LoadedModel`.

    ``quant="auto"`` takes the spec's default (4-bit NF4 from 30B parameters up);
    None loads full precision, "4bit" NF4, "8bit" LLM.int8 (bitsandbytes, on CUDA or on the
    CPU where a probe finds its backend working; else a clear error). ``dtype`` defaults to
    bfloat16 on CUDA, float32 on the CPU (bfloat16 compute for 4-bit).
    ``device_map="auto"`` spreads the model over the GPUs (accelerate); on a machine without
    CUDA the model stays on the CPU unless ``max_memory`` is given. ``max_memory`` caps each
    device ({0: "20GiB", 1: "20GiB", "cpu": "60GiB", "disk": "200GiB"}): what does not fit
    goes to the next device, the CPU, then the disk (``offload_folder``).
    """
    spec = resolve(name_or_path)
    if revision:
        spec = replace(spec, revision=revision)
    max_memory = check_placement(device_map, max_memory, offload_folder)
    source, offline = _locate(spec)
    quant = spec.default_quant if quant == "auto" else quant
    if quant is not None:
        quantization_probe(quant, "cuda" if torch.cuda.is_available() else "cpu")
    dtype = dtype or default_dtype(quant)
    kwargs = dict(revision=spec.revision, trust_remote_code=trust_remote_code, local_files_only=offline)
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError(f"{spec.name}: the engine needs a fast tokenizer (character offsets); "
                        "install `tokenizers` or convert the tokenizer")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "right"
    model_kwargs = dict(kwargs, dtype=dtype, quantization_config=quantization_config(quant, dtype))
    # "auto" without CUDA and without caps would place everything on the CPU anyway: loaded plainly
    if device_map is not None and (torch.cuda.is_available() or max_memory or device_map != "auto"):
        model_kwargs.update(device_map=device_map, max_memory=max_memory)
        if offload_folder is not None:
            model_kwargs["offload_folder"] = str(offload_folder)
    is_seq2seq = getattr(AutoConfig.from_pretrained(source, **kwargs), "is_encoder_decoder", False)
    model = (AutoModelForSeq2SeqLM if is_seq2seq else AutoModelForCausalLM).from_pretrained(source, **model_kwargs)
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
