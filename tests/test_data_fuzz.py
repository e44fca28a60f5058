"""Every dataset reader and the manifest, fed damaged files (hypothesis): cut short, a flipped or
inserted byte, a line of garbage, Latin-1 and UTF-16 text, a dropped column or key, an empty file.
Each reader either reads the file or stops with one DataFormatError line that names the file and
says how to fix it, never a traceback from inside csv, json, zipfile or pandas. A UTF-8
byte-order mark and Windows line ends read the same as the plain file.

Each damaged file is read along the paths a user's file takes: listed in a manifest with its own
sha256 (a manifest the test writes) and with no manifest (a researcher's own files: the same
outcome); listed with the sha256 of the undamaged file (the mirror's copy corrupted: a
ChecksumError naming the file and where to restore it from); and not listed (UnlistedFileError).
The bases are small real files: the first lines of the mirror's files (or, for the corpora's
archives and the Hub datasets, files written here in their published layout)."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import zipfile
from itertools import islice
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import data as data_module
from helpers import paths
from helpers.data import (blimp, chinese, climp, corpora, english, hu_levy, hub_lock, jblimp, multiblimp, papers,
                          rublimp, syntaxgym)
from helpers.data.hub_catalog import HUB
from helpers.data.schema import DataFormatError
from helpers.data.sources import ChecksumError, DataSource, ManifestError, UnlistedFileError, read_manifest
from test_data_hub import write_blimp_nl, write_multiblimp, write_turblimp  # the Hub layouts as downloads leave them

# bounded so that the file runs in about a minute on two cores; derandomized: the same examples in every run
FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FUZZ_HUB = settings(FUZZ, max_examples=6)  # each example writes three copies of a Hub dataset
FUZZ_MANIFEST = settings(FUZZ, max_examples=40)
MUTATIONS = ("truncate", "bitflip", "garbage_line", "latin1", "utf16", "utf16_no_bom", "empty", "drop",
             "bom", "crlf")
BINARY_MUTATIONS = ("truncate", "bitflip", "empty")


def head(rel: str, lines: int) -> bytes:
    """The first ``lines`` lines of a file of the real mirror."""
    with open(paths.mirror() / rel, "rb") as f:
        return b"".join(islice(f, lines))


def small_suite() -> bytes:
    raw = json.loads((paths.mirror() / syntaxgym.SUITES / "number_prep.json").read_text(encoding="utf-8"))
    return json.dumps({**raw, "items": raw["items"][:2]}, indent=1).encode()


def zip_bytes(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in members.items():
            z.writestr(name, body)
    return buf.getvalue()


def tar_gz_bytes(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body.encode())
            tar.addfile(info, io.BytesIO(body.encode()))
    return buf.getvalue()


HL = "hu-levy-2023/datasets"
HUMAN = blimp.HUMAN_SUMMARY
BLIMP_FILE = "blimp/data/adjunct_island.jsonl"
# name -> (the files of a small mirror, the file damaged, the columns or keys it cannot do without, the reader)
READERS = {
    "blimp": ({BLIMP_FILE: lambda: head(BLIMP_FILE, 3), HUMAN: lambda: head(HUMAN, 4)}, BLIMP_FILE,
              ("sentence_good", "sentence_bad", "UID", "pairID", "field", "linguistics_term"),
              lambda s: blimp.load(source=s)),
    "blimp_human_agreement": ({BLIMP_FILE: lambda: head(BLIMP_FILE, 3), HUMAN: lambda: head(HUMAN, 4)}, HUMAN,
                              ("Condition", "total_mean"), lambda s: blimp.load(source=s)),
    "climp": ({f"{climp.FOLDER}/binding_gender_1000.csv": lambda: head(f"{climp.FOLDER}/binding_gender_1000.csv", 5)},
              f"{climp.FOLDER}/binding_gender_1000.csv", (), lambda s: climp.load(source=s)),
    "climp_headerless": ({f"{climp.FOLDER}/{climp.HEADERLESS}": lambda: head(f"{climp.FOLDER}/{climp.HEADERLESS}", 4)},
                         f"{climp.FOLDER}/{climp.HEADERLESS}", (), lambda s: climp.load(source=s)),
    "zhoblimp": ({f"{chinese.ZHOBLIMP}/BA_deletion.jsonl": lambda: head(f"{chinese.ZHOBLIMP}/BA_deletion.jsonl", 3)},
                 f"{chinese.ZHOBLIMP}/BA_deletion.jsonl", ("UID", "pairID", "sentence_good", "sentence_bad"),
                 lambda s: chinese.load_zhoblimp(source=s)),
    "sling": ({f"{chinese.SLING}/AlternativeQuestion/haishi_ma.jsonl":
               lambda: head(f"{chinese.SLING}/AlternativeQuestion/haishi_ma.jsonl", 3)},
              f"{chinese.SLING}/AlternativeQuestion/haishi_ma.jsonl", ("pair_ID", "sentence_good", "sentence_bad"),
              lambda s: chinese.load_sling(include_small=True, source=s)),
    "scamp": ({"scamp/scamp/scamp_plausible/adjunct_island.tsv": lambda: head("scamp/scamp/scamp_plausible/adjunct_island.tsv", 3)},
              "scamp/scamp/scamp_plausible/adjunct_island.tsv", (), lambda s: english.load_scamp(source=s)),
    "li": ({english.LI: lambda: head(english.LI, 4)}, english.LI, english.LI_COLUMNS,
           lambda s: english.load_li(source=s)),
    "cola": ({english.COLA.format(split="in_domain_dev"): lambda: head(english.COLA.format(split="in_domain_dev"), 3)},
             english.COLA.format(split="in_domain_dev"), (), lambda s: english.load_cola("in_domain_dev", source=s)),
    "wikitext": ({english.WIKITEXT: lambda: head(english.WIKITEXT, 12)}, english.WIKITEXT, (),
                 lambda s: english.wikitext_sentences(source=s)),
    "hl_p18": ({hu_levy.WORD_PREDICTION["p18"]: lambda: head(hu_levy.WORD_PREDICTION["p18"], 4)},
               hu_levy.WORD_PREDICTION["p18"], ("item_id", "prefix", "continuation"),
               lambda s: hu_levy.load_word_prediction("p18", source=s)),
    "hl_dtfit": ({hu_levy.DTFIT: lambda: head(hu_levy.DTFIT, 4)}, hu_levy.DTFIT,
                 ("item_id", "prefix", "good_continuation", "bad_continuation", "good_human_score"),
                 lambda s: hu_levy.load_word_comparison(source=s)),
    "hl_blimp": ({hu_levy.PAIRS["blimp"]: lambda: head(hu_levy.PAIRS["blimp"], 4)}, hu_levy.PAIRS["blimp"],
                 ("good_sentence", "bad_sentence", "blimp_UID", "item_id"),
                 lambda s: hu_levy.load_sentence_pairs("blimp", source=s)),
    "hl_mandarin": ({hu_levy.PAIRS["mandarin"]: lambda: head(hu_levy.PAIRS["mandarin"], 4)}, hu_levy.PAIRS["mandarin"],
                    ("good_sentence", "bad_sentence", "suite", "suite_broad", "item_id"),
                    lambda s: hu_levy.load_sentence_pairs("mandarin", source=s)),
    "syntaxgym_pairs": ({syntaxgym.PAIR_CORPUS: lambda: head(syntaxgym.PAIR_CORPUS, 4)}, syntaxgym.PAIR_CORPUS,
                        syntaxgym.PAIR_COLUMNS, lambda s: syntaxgym.load_pairs(source=s)),
    "syntaxgym_suites": ({f"{syntaxgym.SUITES}/number_prep.json": small_suite}, f"{syntaxgym.SUITES}/number_prep.json",
                         (), lambda s: syntaxgym.load_items(source=s)),
    "rublimp": ({f"{rublimp.FOLDER}/add_new_suffix.csv": lambda: head(f"{rublimp.FOLDER}/add_new_suffix.csv", 4)},
                f"{rublimp.FOLDER}/add_new_suffix.csv", tuple(rublimp.COLUMNS), lambda s: rublimp.load(source=s)),
    "jblimp": ({jblimp.FILES["validated"]: lambda: head(jblimp.FILES["validated"], 3)}, jblimp.FILES["validated"],
               ("ID", "paradigm", "phenomenon", "good_sentence", "bad_sentence"), lambda s: jblimp.load(source=s)),
    "corpus_zip": ({"corpora/en-nltk-data/abc.zip": lambda: zip_bytes(
        {"abc/rural.txt": "Farmers met on Monday.\n\nThe rain came late this year.\n"})},
        "corpora/en-nltk-data/abc.zip", (), lambda s: list(corpora.documents("abc", s))),
    "corpus_tar": ({"corpora/en-nltk-2008/corpora/reuters.tar.gz": lambda: tar_gz_bytes(
        {"reuters/training/1": "Shares rose &lt;5 pct.\n\nTrade was slow.\n"})},
        "corpora/en-nltk-2008/corpora/reuters.tar.gz", (), lambda s: list(corpora.documents("reuters", s))),
    "corpus_csv": ({"corpora/zh-sophonplus/waimai_10k.csv": lambda: "label,review\n1,很好吃\n0,太慢了\n".encode()},
                   "corpora/zh-sophonplus/waimai_10k.csv", (), lambda s: list(corpora.documents("waimai_reviews", s))),
}
BINARY = {"corpus_zip", "corpus_tar"}


def mutate(body: bytes, kind: str, draw, required: tuple[str, ...]) -> tuple[bytes, str | None]:
    """The damaged bytes, and the column or key dropped (for ``drop``)."""
    text = body.decode("utf-8", errors="replace")  # used for the text mutations only
    if kind == "truncate":
        return body[:draw(st.integers(1, len(body) - 1))], None
    if kind == "bitflip":
        at = draw(st.integers(0, len(body) - 1))
        return body[:at] + bytes([body[at] ^ (1 << draw(st.integers(0, 7)))]) + body[at + 1:], None
    if kind == "garbage_line":
        lines = text.split("\n")
        at = draw(st.integers(0, len(lines)))
        junk = draw(st.text(st.characters(codec="utf-8", exclude_characters="\n"), min_size=1, max_size=20))
        return "\n".join(lines[:at] + [junk] + lines[at:]).encode(), None
    if kind == "latin1":  # one byte that is not UTF-8 (é in Latin-1)
        at = draw(st.integers(0, len(body)))
        return body[:at] + b"\xe9" + body[at:], None
    if kind == "utf16":
        return text.encode("utf-16"), None
    if kind == "utf16_no_bom":
        return text.encode("utf-16-le"), None
    if kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"  \r\n\n"])), None
    if kind == "bom":
        return b"\xef\xbb\xbf" + body, None
    if kind == "crlf":
        return body.replace(b"\n", b"\r\n"), None
    return drop(text, draw, required)


def drop(text: str, draw, required: tuple[str, ...]) -> tuple[bytes, str | None]:
    """A column dropped from a CSV file (from every row) or a key from one JSON line."""
    if text.lstrip().startswith("{"):
        lines = [line for line in text.split("\n") if line.strip()]
        if not text.lstrip().startswith("{\""):  # one JSON document (a SyntaxGym suite): a top-level key
            doc = json.loads(text)
            key = draw(st.sampled_from(sorted(doc)))
            return json.dumps({k: v for k, v in doc.items() if k != key}).encode(), key
        at = draw(st.integers(0, len(lines) - 1))
        row = json.loads(lines[at])
        key = draw(st.sampled_from(sorted(row)))
        lines[at] = json.dumps({k: v for k, v in row.items() if k != key}, ensure_ascii=False)
        return ("\n".join(lines) + "\n").encode(), key
    delimiter = "\t" if "\t" in text.split("\n")[0] else ","
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    at = draw(st.integers(0, len(rows[0]) - 1))
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows([r[:at] + r[at + 1:] for r in rows])
    gone = rows[0][at] not in rows[0][:at] + rows[0][at + 1:]  # LI has LS_diff twice
    return out.getvalue().encode(), rows[0][at] if gone else None


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def outcome(read, source: DataSource):
    """("ok", result) or ("error", type, message): what a reader does with a source."""
    try:
        return ("ok", read(source))
    except DataFormatError as err:
        return ("error", type(err), str(err))


def same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a == b
    if isinstance(a[1], pd.DataFrame):
        pd.testing.assert_frame_equal(a[1], b[1])
        return True
    return a[1] == b[1]


def names_the_file(message: str, path: Path, root: Path) -> bool:
    """The message names the file (or, for a check across a dataset's files, the dataset's folder)."""
    folders = [p for p in path.parents if root in p.parents]
    return any(str(p) in message for p in (path, path.relative_to(root), *folders))


def manifest(root: Path, name: str, files: dict[str, bytes]) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"origins": {}, "files": {rel: {"sha256": sha(b)} for rel, b in files.items()}}))
    return path


@pytest.mark.parametrize("name", sorted(READERS))
@FUZZ
@given(data=st.data())
def test_a_damaged_file_is_read_or_named_with_its_fix(name, data):
    spec, target, required, read = READERS[name]
    kinds = BINARY_MUTATIONS if name in BINARY else MUTATIONS
    kind = data.draw(st.sampled_from(kinds), label="mutation")
    valid = {rel: make() for rel, make in spec.items()}
    damaged, dropped = mutate(valid[target], kind, data.draw, required)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {**valid, target: damaged}
        for rel, body in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(body)
        path = root / target
        listed = outcome(read, DataSource(root, root / "raw", manifest_file=manifest(root, "listed", files)))
        own = outcome(read, DataSource(root, root / "raw", manifest_file=None))
        assert same(listed, own), (listed[:2], own[:2])  # the checksum layer changes nothing once it passes
        if listed[0] == "error":
            message = listed[2]
            assert names_the_file(message, path, root) and "To fix" in message and "\n" not in message, message
        expected_error = {"latin1": "not UTF-8", "utf16": "UTF-16", "utf16_no_bom": "NUL bytes",
                          "empty": "the file is empty"}.get(kind)
        if name in BINARY and kind == "empty":
            expected_error = None  # an empty archive is an archive error, checked by the property above
        if expected_error or (kind == "drop" and dropped in required):
            assert listed[0] == "error" and (expected_error or dropped) in listed[2], (kind, dropped, listed[:2])
        if kind in ("bom", "crlf"):  # read as the plain file is
            (root / target).write_bytes(valid[target])
            plain = outcome(read, DataSource(root, root / "raw", manifest_file=None))
            assert same(listed, plain), (listed[:2], plain[:2])
            (root / target).write_bytes(damaged)
        # the mirror's copy corrupted: its recorded sha256 is the undamaged file's
        corrupted = DataSource(root, root / "raw", manifest_file=manifest(root, "recorded", valid))
        with pytest.raises(ChecksumError, match=rf"^{re.escape(str(path))}: sha256 .* To fix: restore it from "):
            read(corrupted)
        unlisted = DataSource(root, root / "raw", manifest_file=manifest(
            root, "unlisted", {rel: b for rel, b in valid.items() if rel != target}))
        with pytest.raises(UnlistedFileError, match=rf"^{re.escape(str(path))}: {re.escape(target)} is not listed .* To fix: "):
            read(unlisted)


HUB_TARGETS = {  # the dataset's writer (tests/test_data_hub.py), the damaged file, its required columns, options
    "multiblimp": (write_multiblimp, "eng/data.tsv", multiblimp.REQUIRED, {"languages": "eng"}),
    "blimp_nl": (write_blimp_nl, f"{HUB['blimp_nl'].configs[0]}/test-00000.jsonl", ("sentence_good", "sentence_bad"),
                 {}),
    "turblimp": (write_turblimp, f"data/{HUB['turblimp'].configs[0]}-00000-of-00001.parquet", (), {}),
}


@pytest.mark.parametrize("name", sorted(HUB_TARGETS))
@FUZZ_HUB
@given(data=st.data())
def test_a_damaged_hub_file_is_named_with_its_fix(name, data):
    """The Hub layout: the first read locks the copy with the damaged file in it (then the reader
    names it), and a file damaged after the copy was locked is a ChecksumError."""
    write, target, required, options = HUB_TARGETS[name]
    kinds = BINARY_MUTATIONS if target.endswith(".parquet") else MUTATIONS
    kind = data.draw(st.sampled_from(kinds), label="mutation")
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(hub_lock, "LOCKS", Path(tmp) / "hub_locks"):
        plain, fresh, locked = (DataSource(None, raw_dir=Path(tmp) / part) for part in ("plain", "fresh", "locked"))
        read = lambda s: data_module.load(name, source=s, **options)  # noqa: E731
        expected = outcome(read, plain) if write(plain.raw_dir) else None
        path = write(fresh.raw_dir) / target
        damaged, dropped = mutate(path.read_bytes(), kind, data.draw, required)
        path.write_bytes(damaged)
        got = outcome(read, fresh)  # the first read locks the copy, damaged file and all
        if got[0] == "error":
            assert str(path) in got[2] and "To fix" in got[2] and "\n" not in got[2], got[2]
        if kind in ("latin1", "utf16", "utf16_no_bom", "empty") and not target.endswith(".parquet"):
            assert got[0] == "error", (kind, got[:2])
        if kind == "drop" and dropped in required:
            assert got[0] == "error" and dropped in got[2], got[:2]
        if kind in ("bom", "crlf"):
            assert same(got, expected)
        path = write(locked.raw_dir) / target
        read(locked)  # locks the undamaged copy
        stat = path.stat()
        path.write_bytes(damaged)  # later, as a user's edit comes (the sha256 is cached per size and mtime)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        with pytest.raises(ChecksumError, match=rf"^{re.escape(str(path))}: sha256 .* differs from hub-lock.yaml .* "
                                                rf"python -m helpers.data --download {name}"):
            read(locked)


MANIFEST_TEXT = yaml.safe_dump({"origins": {}, "files": {BLIMP_FILE: {"sha256": "0" * 64, "bytes": 1}},
                                "papers": {"what": "numbers", "files": {"ide2024.csv": {"sha256": "1" * 64}}}})


@FUZZ_MANIFEST
@given(data=st.data())
def test_a_damaged_manifest_is_named_with_its_fix(data):
    """A manifest cut short, with a flipped byte, a line of garbage, another encoding, a line dropped
    or a sha256 replaced: it is read (and the files checked against it) or it is a ManifestError
    naming it and how to restore it."""
    kind = data.draw(st.sampled_from(MUTATIONS + ("sha",)), label="mutation")
    body = MANIFEST_TEXT.encode()
    if kind == "drop":
        lines = MANIFEST_TEXT.splitlines(keepends=True)
        at = data.draw(st.integers(0, len(lines) - 1))
        damaged = "".join(lines[:at] + lines[at + 1:]).encode()
    elif kind == "sha":
        damaged = MANIFEST_TEXT.replace("0" * 64, data.draw(st.text(max_size=70)).replace("'", "")).encode()
    else:
        damaged = mutate(body, kind, data.draw, ())[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / BLIMP_FILE).parent.mkdir(parents=True)
        (root / BLIMP_FILE).write_bytes(b"{}\n")
        manifest_file = root / "sources.yaml"
        manifest_file.write_bytes(damaged)
        try:
            source = DataSource(root, root / "raw", manifest_file=manifest_file)
            source.path(BLIMP_FILE)
            papers.verify(root / BLIMP_FILE, manifest_file)
        except ManifestError as err:
            message = str(err)
            assert message.startswith(str(manifest_file)) and "To fix" in message and "\n" not in message, message
            assert kind not in ("bom", "crlf"), message  # these read as the plain manifest
        except (ChecksumError, UnlistedFileError) as err:  # read: the file is checked against it
            assert str(err).startswith(str(root / BLIMP_FILE)), err
            assert kind not in ("latin1", "utf16", "utf16_no_bom", "empty"), err
        else:
            raise AssertionError(f"{kind}: a file whose sha256 the manifest does not hold was accepted")


def test_a_papers_file_changed_or_unlisted_is_named_with_its_fix(tmp_path):
    """The papers folder's files are checked as the mirror's: a changed one is a ChecksumError, an
    unlisted one an UnlistedFileError, both naming the file and the fix."""
    good = b"paper,metric,value\nide2024,accuracy,81.5\n"
    path = tmp_path / "ide2024.csv"
    path.write_bytes(good)
    manifest_file = tmp_path / "sources.yaml"
    manifest_file.write_text(yaml.safe_dump({"files": {}, "papers": {"files": {"ide2024.csv": {"sha256": sha(good)}}}}))
    assert papers.verify(path, manifest_file) == path
    path.write_bytes(good.replace(b"81.5", b"18.5"))
    with pytest.raises(ChecksumError, match=rf"^{re.escape(str(path))}: sha256 .* To fix: restore the papers folder"):
        papers.verify(path, manifest_file)
    other = tmp_path / "hu2025.csv"
    other.write_bytes(good)
    with pytest.raises(UnlistedFileError, match=r"hu2025.csv is not listed in sources.yaml.* To fix: run python -m "
                                                r"helpers.data --write"):
        papers.verify(other, manifest_file)


def test_the_manifest_errors_say_what_is_wrong(tmp_path):
    """Exact messages of the three ways a manifest is malformed."""
    cases = {"not: [yaml": "not valid YAML", "- a list\n": "expected a mapping with a 'files' mapping, got list",
             "files:\n  blimp/data/x.jsonl: {sha256: abc}\n": "the entry 'blimp/data/x.jsonl' of 'files' has no sha256 "
                                                              "of 64 hex digits ({'sha256': 'abc'})"}
    for k, (text, what) in enumerate(cases.items()):
        path = tmp_path / f"m{k}.yaml"
        path.write_text(text)
        with pytest.raises(ManifestError) as err:
            read_manifest(path)
        assert str(err.value).startswith(f"{path}: {what}") and str(err.value).endswith(
            "To fix: restore it (m%d.yaml is committed: git checkout m%d.yaml), or write it again from a complete "
            "mirror with python -m helpers.data --write" % (k, k)), str(err.value)
