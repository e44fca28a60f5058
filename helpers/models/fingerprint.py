"""What identifies loaded weights, so that stored scores of a retrained model are never
mistaken for its new ones."""
from __future__ import annotations

import hashlib
from pathlib import Path

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
