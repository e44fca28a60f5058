"""GGUF checkpoints (llama.cpp's one-file format): finding the file, reading what identifies it,
and refusing, before any weights are read, a file that is damaged or of an architecture
transformers cannot read.

transformers dequantizes a GGUF file's tensors into the dtype asked for
(``from_pretrained(folder, gguf_file=name)``); what is recorded of it is its sha256, its
quantization type (``general.file_type``, e.g. Q4_1) and its architecture.
"""
from __future__ import annotations

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import ModelNotFoundError

SUFFIX = ".gguf"
MAGIC = b"GGUF"


@dataclass(frozen=True)
class GGUFCheckpoint:
    """One GGUF file as the score files record it."""

    path: Path
    sha256: str
    file_type: str  # llama.cpp's name of general.file_type: "Q4_1", "Q8_0", "F16", ...
    architecture: str  # general.architecture: "llama", "qwen2", "gemma3", ...
    chat_template: str | None  # tokenizer.chat_template, when the file has one

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.path.name

    def provenance(self) -> dict:
        return {"gguf_sha256": self.sha256, "gguf_type": self.file_type}


def gguf_file_in(path: str | Path) -> Path | None:
    """The GGUF file that ``path`` names: the file itself, or the one ``.gguf`` file of a folder
    without a ``config.json``; None when ``path`` is neither. A folder of several GGUF files is
    an error that lists them."""
    path = Path(path).expanduser()
    if path.is_file():
        return path.resolve() if path.suffix.lower() == SUFFIX else None
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    found = sorted(p for p in path.iterdir() if p.suffix.lower() == SUFFIX and p.is_file())
    if len(found) > 1:
        raise ModelNotFoundError(f"the folder {path} holds {len(found)} GGUF files ({', '.join(p.name for p in found)}): "
                                 "pass the path of the one to load")
    return found[0].resolve() if found else None


def sha256_of(path: str | Path) -> str:
    """The file's sha256 (kept per path, size and modification time: a file read again is not hashed again)."""
    stat = Path(path).stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=32)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def inspect(path: str | Path, expected_sha256: str | None = None) -> GGUFCheckpoint:
    """What identifies the GGUF file at ``path``, checked: a :class:`ModelNotFoundError` that says
    what is wrong and what to do for a file that is not GGUF, is cut short or altered (its tensors
    run past its end, or its sha256 is not ``expected_sha256``), or holds an architecture that this
    transformers cannot read from GGUF."""
    path = Path(path)
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != MAGIC:
        raise ModelNotFoundError(f"{path} is not a GGUF file (it starts with {magic!r}, not {MAGIC!r}): "
                                 "pass a .gguf file written by llama.cpp's converter")
    sha256 = sha256_of(path)
    if expected_sha256 and sha256 != expected_sha256:
        raise ModelNotFoundError(f"{path} has sha256 {sha256}, not the {expected_sha256} its registry entry names: "
                                 "the file is damaged or another one; delete it and fetch it again")
    fields = _read_fields(path)
    architecture = fields.get("general.architecture") or "unknown"
    _check_architecture(path, architecture)
    return GGUFCheckpoint(path=path.resolve(), sha256=sha256, file_type=_file_type_name(fields.get("general.file_type")),
                          architecture=architecture, chat_template=fields.get("tokenizer.chat_template"))


def _read_fields(path: Path) -> dict:
    """The file's scalar metadata, after checking that its tensors lie inside the file."""
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path)
        end = max((t.data_offset + int(t.n_bytes) for t in reader.tensors), default=0)
    except Exception as err:  # noqa: BLE001 - the reader signals a damaged file in many ways
        raise ModelNotFoundError(f"{path} is not a readable GGUF file ({type(err).__name__}: {err}); it is "
                                 "probably cut short or altered: copy or download it again") from err
    size = path.stat().st_size
    if end > size:
        raise ModelNotFoundError(f"{path} is cut short: its tensors need {end:,} bytes and the file has {size:,}; "
                                 "copy or download it again")
    out = {}
    for key in ("general.architecture", "general.file_type", "tokenizer.chat_template"):
        field = reader.fields.get(key)
        if field is not None and field.data:
            out[key] = field.contents()
    return out


def _file_type_name(value) -> str:
    """llama.cpp's name of a ``general.file_type`` number ("Q4_1" for 3); "unknown" when absent."""
    from gguf import LlamaFileType

    if value is None:
        return "unknown"
    try:
        return LlamaFileType(int(value)).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    except ValueError:
        return f"file_type {value}"


def _check_architecture(path: Path, architecture: str) -> None:
    import transformers
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    readable = [a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer")]
    # transformers reads a few llama.cpp names under another (qwen2moe as qwen2_moe, t5encoder as t5...)
    if architecture.replace("moe", "_moe") in readable or architecture.removesuffix("encoder") in readable \
            or architecture in readable:
        return
    raise ModelNotFoundError(
        f"{path} holds a GGUF model of architecture {architecture!r}, which transformers {transformers.__version__} "
        f"cannot read from GGUF (it reads {', '.join(readable)}): load the model's original weights (a Hub id or "
        "a save_pretrained folder) instead")


def as_plain_weights(model) -> None:
    """Mark a model loaded from GGUF as what it is once loaded, plain weights in its dtype, so that
    ``save_pretrained`` writes a folder that loads without the GGUF file (transformers 5.24 keeps its
    GGUF quantizer on the model and refuses to save it)."""
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


@contextmanager
def routed_progress():
    """While a GGUF file loads, its dequantization bar drawn by :func:`helpers.progress.library_bar` (a line
    headless, a widget in JupyterLab): transformers' GGUF loader calls ``tqdm.auto`` directly, past
    the hook through which :mod:`helpers.progress` draws transformers' other bars."""
    from transformers import modeling_gguf_pytorch_utils as loader

    from ..progress import library_bar

    original = loader.tqdm
    loader.tqdm = library_bar
    try:
        yield
    finally:
        loader.tqdm = original
