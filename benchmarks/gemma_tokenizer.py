"""A real 262,144-token tokenizer for the 262k benchmarks: Gemma 4's, from the vocabulary file that
llama.cpp keeps for its tokenizer tests (``models/ggml-vocab-gemma-4.gguf``), which the source
distribution of ``llama-cpp-python`` on PyPI ships (``vendor/llama.cpp/models/``).

The file holds Gemma 4's tokens, merges and token types (no weights); :func:`gemma4_tokenizer`
builds a byte-fallback BPE from them with the ``tokenizers`` library (spaces as "▁", no prefix
space, control and user-defined tokens special, as the GGUF says) and :func:`llama_cpp_cases` reads
llama.cpp's own expected ids for 46 test strings (the ``.inp``/``.out`` files beside it), which the
tokenizer reproduces exactly (``tests/test_gemma_tokenizer.py``).

    python benchmarks/gemma_tokenizer.py   # fetch, build, check against llama.cpp's ids
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path

SDIST = "llama-cpp-python==0.3.36"
SDIST_FILE = "llama_cpp_python-0.3.36.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
MEMBER = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-gemma-4.gguf"
CACHE = Path(__file__).resolve().parent.parent / "data" / "cache" / "gemma4-vocab"
CONTROL, USER_DEFINED = 3, 4  # GGUF token types (gguf.TokenType)


def vocab_file() -> Path:
    """The GGUF vocabulary file, fetched once with ``pip download`` and checked by sha256."""
    target = CACHE / Path(MEMBER).name
    if target.exists() and target.with_suffix(".gguf.out").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / SDIST_FILE
    if not sdist.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
                        "-d", str(CACHE), SDIST], check=True)
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        sdist.unlink()
        raise RuntimeError(f"{SDIST_FILE} has sha256 {digest}, expected {SDIST_SHA256}: deleted; run again")
    with tarfile.open(sdist) as tar:
        for suffix in ("", ".inp", ".out"):
            (CACHE / Path(MEMBER + suffix).name).write_bytes(tar.extractfile(MEMBER + suffix).read())
    sdist.unlink()
    return target


def gemma4_tokenizer():
    """Gemma 4's tokenizer as a ``PreTrainedTokenizerFast`` (``<bos>`` 2, ``<eos>`` 1, ``<pad>`` 0)."""
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers
    from transformers import PreTrainedTokenizerFast

    fields = GGUFReader(vocab_file()).fields

    def strings(key):
        return [bytes(fields[key].parts[i]).decode("utf-8") for i in fields[key].data]

    tokens = strings("tokenizer.ggml.tokens")
    types = [int(fields["tokenizer.ggml.token_type"].parts[i][0]) for i in fields["tokenizer.ggml.token_type"].data]
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, byte_fallback=True,
                               unk_token="<unk>", fuse_unk=False))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, kind in zip(tokens, types) if kind in (CONTROL, USER_DEFINED)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<unk>")


def llama_cpp_cases() -> list[tuple[str, list[int]]]:
    """llama.cpp's test strings for this vocabulary and the ids it expects for each."""
    path = vocab_file()
    texts = path.with_suffix(".gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    ids = path.with_suffix(".gguf.out").read_text(encoding="utf-8").split("\n")
    return [(text, [int(x) for x in line.split()]) for text, line in zip(texts, ids)]


if __name__ == "__main__":
    tokenizer = gemma4_tokenizer()
    cases = llama_cpp_cases()
    wrong = [text for text, ids in cases if tokenizer(text, add_special_tokens=False)["input_ids"] != ids]
    print(f"{len(tokenizer):,} tokens; llama.cpp's {len(cases)} test strings: {len(cases) - len(wrong)} exact")
    sys.exit(1 if wrong else 0)
