"""Which text the unigram tables of SLOR and BF-unigram are counted over.

Hu et al. (2025) estimate unigram frequencies from 1M items of FineWeb sample-10BT; offline
we count the mirror's corpora of the language. :func:`resolve_unigram_corpus` turns the
``unigram_corpus`` parameter into one text file for ``helpers.runner.run_methods``:

- ``None``: the mirror's corpora of the language (``data/cache/corpus_<language>.txt``);
- a path to a text file: that file;
- a Hugging Face dataset name (``"HuggingFaceFW/fineweb"``, a config after a colon,
  ``"HuggingFaceFW/fineweb:sample-10BT"``): its first ``limit`` items, streamed with the
  ``datasets`` library into a cached text file whose name spells the dataset, config, split
  and item count.

Every score file records ``unigram_source = "<kind>:<name>:<file name>:<bytes>"``, e.g.
``mirror:en:corpus_en.txt:<bytes>``, ``file:/path/corpus.txt:<bytes>`` or
``hub:HuggingFaceFW/fineweb:sample-10BT:hf__HuggingFaceFW__fineweb__sample-10BT__train__1000000.txt:<bytes>``.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .corpora import corpus_text_file
from ..files import atomic_path
from ..progress import bar as progress_bar

PAPER_CORPUS = "HuggingFaceFW/fineweb:sample-10BT"
PAPER_ITEMS = 1_000_000
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(:[\w.-]+)?$|^[A-Za-z0-9][\w.-]*$")


class CorpusError(ValueError):
    """A streamed dataset that does not give the text asked for."""


@dataclass(frozen=True)
class UnigramCorpus:
    """A unigram corpus as one text file (a document per line) and what it is."""

    path: Path
    kind: str  # "mirror", "file" or "hub"
    name: str  # the mirror language, the file path, or "<dataset>[:<config>]"

    @property
    def source(self) -> str:
        """What the score files record as ``unigram_source``: "<kind>:<name>:<file>:<bytes>"."""
        return f"{self.kind}:{self.name}:{self.path.name}:{self.path.stat().st_size}"


def hub_text_file(name: str, *, split: str = "train", limit: int = PAPER_ITEMS, text_field: str = "text",
                  cache_dir: str | Path | None = None, progress: bool = True, **load_options) -> Path:
    """The first ``limit`` items of Hugging Face dataset ``name`` (``"owner/name[:config]"``)
    as one cached text file, streamed with ``datasets`` (network access needed the first
    time; the file is reused after). ``load_options`` go to ``datasets.load_dataset``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of items, got {limit!r}")
    dataset, _, config = name.partition(":")
    stem = "__".join(re.sub(r"[^\w.-]+", "_", part) for part in [*dataset.split("/"), config or "default", split])
    if load_options:  # e.g. data_files: part of what the file holds
        stem += "__" + hashlib.sha256(json.dumps(load_options, sort_keys=True, default=str).encode()).hexdigest()[:10]
    path = Path(cache_dir or paths.CACHE / "unigram_corpora") / f"hf__{stem}__{limit}.txt"
    if path.is_file():
        return path
    try:
        import datasets
    except ImportError as err:  # optional: only this path needs it
        raise ImportError("streaming a Hugging Face dataset needs the `datasets` package: pip install datasets") from err
    try:
        stream = datasets.load_dataset(dataset, config or None, split=split, streaming=True, **load_options)
        written = 0
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
            for row in progress_bar(itertools.islice(stream, limit), total=limit, desc=f"streaming {name}",
                                    disable=not progress):
                if text_field not in row:
                    raise CorpusError(f"{name} items have no field {text_field!r} (fields: {sorted(row)}): "
                                      "pass text_field=")
                text = " ".join(str(row[text_field]).split())
                if text:
                    out.write(text + "\n")
                    written += 1
            if not written:
                raise CorpusError(f"{name} ({split}) gave no text: check the name, config and split")
    except CorpusError:
        raise
    except Exception as err:  # the Hub unreachable, offline mode, an unknown dataset
        raise RuntimeError(f"could not stream {name!r} ({split}) from the Hugging Face Hub: {err}. Without "
                           "network access (HF_HUB_OFFLINE=1) pass unigram_corpus=None (the mirror's corpora) "
                           "or a text file") from err
    return path


def resolve_unigram_corpus(corpus: str | Path | None, language: str, *, limit: int = PAPER_ITEMS,
                           split: str = "train", text_field: str = "text", cache_dir: str | Path | None = None,
                           progress: bool = True, **load_options) -> UnigramCorpus:
    """The text file of the ``unigram_corpus`` parameter (see the module docstring)."""
    if corpus is None or corpus == "":
        return UnigramCorpus(corpus_text_file(language), "mirror", language)
    path = Path(corpus).expanduser()
    if path.is_file():
        return UnigramCorpus(path.resolve(), "file", str(path.resolve()))
    text = str(corpus)
    if path.suffix in (".txt", ".text", ".gz") or ("/" in text and not _HUB_NAME.match(text)) or path.is_dir():
        raise FileNotFoundError(f"unigram corpus {text!r} is not a text file; give a text file (a document per "
                                f"line), a Hugging Face dataset name such as {PAPER_CORPUS!r}, or None for the "
                                "mirror's corpora")
    if not _HUB_NAME.match(text):
        raise ValueError(f"unigram corpus {text!r} is neither a file nor a dataset name like {PAPER_CORPUS!r}")
    file = hub_text_file(text, split=split, limit=limit, text_field=text_field, cache_dir=cache_dir,
                         progress=progress, **load_options)
    return UnigramCorpus(file, "hub", text)
