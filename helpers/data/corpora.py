"""Plain-text iterators over the mirror's English and Chinese text corpora.

Used for unigram tables and to train the demo models. Each source yields documents
(paragraphs of running text) cleaned of its format: Brown's word/tag pairs, the
tokenized, lower-cased movie reviews, hard-wrapped Gutenberg and Reuters lines, the
one-character-per-line MSRA file, review CSVs.
"""
from __future__ import annotations

import csv
import io
import re
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .. import paths
from ..files import atomic_path
from . import text_files
from .schema import DataFormatError
from .sources import DataSource, resolve

# what a damaged archive or CSV file raises inside zipfile, tarfile, gzip and csv (zipfile: RuntimeError for a
# member flagged encrypted, NotImplementedError for an unknown compression method, ValueError for bad fields)
UNREADABLE = (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, csv.Error, OSError, RuntimeError,
              NotImplementedError, ValueError)


@dataclass(frozen=True)
class Corpus:
    name: str
    language: str
    path: str  # relative to the mirror: a file, or a folder when ``pattern`` is set
    license: str
    reader: Callable[[Path], Iterator[str]]  # one file -> its documents
    pattern: str = ""  # the files of the folder ``path`` to read, in sorted order

    def files(self, source: DataSource | None = None) -> list[Path]:
        """The corpus's checksummed files in ``source``."""
        source = resolve(source)
        return source.files(self.path, self.pattern) if self.pattern else [source.path(self.path)]


_SPACE_BEFORE = re.compile(r" ([.,;:!?%)\]}]|'s|'re|'ve|'ll|'d|n't|'m)(?=\s|$)")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")


def detokenize(text: str) -> str:
    """Undo PTB-style spacing: "word ." -> "word.", "`` x ''" -> '"x"'."""
    text = text.replace("`` ", '"').replace("``", '"').replace(" ''", '"').replace("''", '"')
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def truecase_line(text: str) -> str:
    """Capitalise a lower-cased sentence's first letter and the pronoun "i"."""
    text = re.sub(r"(?<![\w'])i(?=[\s']|$)", "I", text)
    return text[:1].upper() + text[1:]


def _paragraphs(text: str) -> Iterator[str]:
    for block in re.split(r"\n\s*\n", text):
        para = re.sub(r"\s+", " ", block).strip()
        if len(para) > 1:
            yield para


def _zip_members(path: Path, pattern: str) -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            if re.search(pattern, name) and not name.endswith("/"):
                yield name, z.read(name).decode("utf-8", errors="replace")


def _zip_paragraphs(pattern: str):
    def read(path: Path) -> Iterator[str]:
        for _, text in _zip_members(path, pattern):
            yield from _paragraphs(text)
    return read


def _brown(path: Path) -> Iterator[str]:
    for _, text in _zip_members(path, r"brown/c[a-r]\d\d$"):
        for para in re.split(r"\n\s*\n", text):
            words = [w.rsplit("/", 1)[0] for w in para.split()]
            if words:
                yield detokenize(" ".join(words))


def _lowercased_lines(pattern: str):
    def read(path: Path) -> Iterator[str]:
        for _, text in _zip_members(path, pattern):
            lines = [truecase_line(detokenize(line)) for line in text.splitlines() if line.strip()]
            if lines:
                yield " ".join(lines)
    return read


def _gutenberg(path: Path) -> Iterator[str]:
    yield from _paragraphs(path.read_text(encoding="latin-1"))


def _reuters(path: Path) -> Iterator[str]:
    texts = {}
    with tarfile.open(path) as tar:
        for member in tar:  # sequential: random access into a .tar.gz re-reads the stream
            if member.isfile() and re.search(r"reuters/(training|test)/\d+$", member.name):
                texts[member.name] = tar.extractfile(member).read().decode("latin-1").replace("&lt;", "<")
    for name in sorted(texts):
        yield from _paragraphs(texts[name])


def _msra(path: Path) -> Iterator[str]:
    """MSRA NER: one character (and its tag) per line, sentences separated by blank lines."""
    with zipfile.ZipFile(path) as z:
        for name in sorted(n for n in z.namelist() if not n.endswith("/")):
            chars: list[str] = []
            for line in io.TextIOWrapper(z.open(name), encoding="utf-8", errors="replace"):
                line = line.strip()
                if not line:
                    if chars:
                        yield "".join(chars)
                        chars = []
                    continue
                chars.append(line.split()[0])
            if chars:
                yield "".join(chars)


def _review_csv(column: str):
    def read(path: Path) -> Iterator[str]:
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as z:
                name = next((n for n in z.namelist() if n.endswith(".csv")), None)
                if name is None:
                    raise zipfile.BadZipFile("the archive holds no .csv file")
                handle = io.TextIOWrapper(z.open(name), encoding="utf-8-sig", errors="replace")
                rows = list(csv.DictReader(handle))
        else:
            rows = [row for _, row in text_files.csv_records(path, (column,), f"a CSV file with a {column} column")[1]]
        for row in rows:
            text = (row.get(column) or "").strip()
            if text:
                yield text
    return read


E, N = "corpora/en-nltk-data", "corpora/en-nltk-2008/corpora"
GUTENBERG = f"{N}/gutenberg"
ENGLISH = [
    Corpus("gutenberg", "en", GUTENBERG, "public domain", _gutenberg, pattern="*.txt"),
    Corpus("brown", "en", f"{E}/brown.zip", "non-commercial (NLTK: may be used for non-commercial purposes)", _brown),
    Corpus("reuters", "en", f"{N}/reuters.tar.gz", "research use (Reuters-21578)", _reuters),
    Corpus("abc", "en", f"{E}/abc.zip", "none given", _zip_paragraphs(r"abc/\w+\.txt$")),
    Corpus("state_union", "en", f"{E}/state_union.zip", "public domain", _zip_paragraphs(r"state_union/.+\.txt$")),
    Corpus("inaugural", "en", f"{E}/inaugural.zip", "public domain", _zip_paragraphs(r"inaugural/.+\.txt$")),
    Corpus("genesis", "en", f"{E}/genesis.zip", "public domain", _zip_paragraphs(r"genesis/english-(kjv|web)\.txt$")),
    Corpus("webtext", "en", f"{E}/webtext.zip", "none given", _zip_paragraphs(r"webtext/\w+\.txt$")),
    Corpus("movie_reviews", "en", f"{E}/movie_reviews.zip", "CC-BY 4.0", _lowercased_lines(r"movie_reviews/(pos|neg)/.+\.txt$")),
    Corpus("subjectivity", "en", f"{E}/subjectivity.zip", "CC-BY 4.0", _lowercased_lines(r"subjectivity/.+\.5000$")),
]
CHINESE = [
    Corpus("msra_ner", "zh", "corpora/zh-sophonplus/dh_msra.zip", "none stated", _msra),
    Corpus("online_shopping", "zh", "corpora/zh-sophonplus/online_shopping_10_cats.zip", "none stated", _review_csv("review")),
    Corpus("hotel_reviews", "zh", "corpora/zh-sophonplus/ChnSentiCorp_htl_all.csv", "none stated", _review_csv("review")),
    Corpus("waimai_reviews", "zh", "corpora/zh-sophonplus/waimai_10k.csv", "none stated", _review_csv("review")),
]
CORPORA = {c.name: c for c in ENGLISH + CHINESE}


def documents(name: str, source: DataSource | None = None) -> Iterator[str]:
    """The documents of one corpus, cleaned to running text."""
    if name not in CORPORA:
        raise KeyError(f"unknown corpus {name!r}; choose from {sorted(CORPORA)}")
    corpus = CORPORA[name]
    for path in corpus.files(source):
        try:
            yield from corpus.reader(path)
        except DataFormatError:
            raise  # already names the file and the fix
        except UNREADABLE as err:
            raise text_files.problem(path, f"not readable ({type(err).__name__}: {err})",
                                     f"the {name} corpus's {Path(corpus.path).suffix or 'text'} file as its origin "
                                     "publishes it") from None


def language_documents(language: str, source: DataSource | None = None) -> Iterator[tuple[str, str]]:
    """(corpus name, document) for every corpus of ``language`` ("en" or "zh")."""
    for c in ENGLISH + CHINESE:
        if c.language == language:
            for doc in documents(c.name, source):
                yield c.name, doc


def corpus_text_file(language: str, source: DataSource | None = None) -> Path:
    """The corpora of ``language`` as one cached text file (a document per line), e.g. for
    unigram tables with a model's tokenizer. Built once into data/cache/ from ``source``."""
    languages = sorted({c.language for c in ENGLISH + CHINESE})
    if language not in languages:
        raise ValueError(f"the mirror has no corpora of language {language!r} (only {', '.join(languages)}): "
                         f"pass unigram_corpus= a text file of {language!r} text (a document per line) "
                         "or a Hugging Face dataset name")
    path = paths.CACHE / f"corpus_{language}.txt"
    if path.is_file():
        return path
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for _, doc in language_documents(language, source):
            f.write(doc.replace("\n", " ") + "\n")
    return path
