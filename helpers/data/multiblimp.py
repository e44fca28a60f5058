"""MultiBLiMP 1.0 (Jumelet, Weissweiler, Nivre & Bisazza, TACL 2026): subject-verb and
subject-participle agreement pairs in 101 languages, built from Universal Dependencies treebanks,
read from the Hub dataset jumelet/multiblimp (one config and folder per language, ``<iso>/data.tsv``)."""
from __future__ import annotations

import pandas as pd

from . import hub
from .hub_catalog import spec_of
from .hub_pairs import read_files, release_columns
from .multiblimp_languages import ALL, LANGUAGES, language_codes, language_tag
from .schema import finalize_pairs
from .sources import DataNotFoundError, DataSource, resolve

REQUIRED = ("sen", "wrong_sen", "phenomenon", "lang")
# the release's phenomenon codes: subject-verb (SV) or subject-participle (SP) agreement in number (#),
# person (P) or gender (G)


def language_table(code: str, files, name: str = "multiblimp") -> pd.DataFrame:
    """One language's pairs: ``pair_id`` is the row's position in its file."""
    raw = read_files(files, REQUIRED, "MultiBLiMP")
    phenomenon = raw["phenomenon"].astype(str)
    table = pd.DataFrame({"dataset": name, "language": language_tag(code), "paradigm": code + "/" + phenomenon,
                          "phenomenon": phenomenon, "field": "", "pair_id": range(len(raw)),
                          "good": raw["sen"], "bad": raw["wrong_sen"]})
    return pd.concat([table, release_columns(raw, {"sen", "wrong_sen", "phenomenon"})], axis=1)


MIRRORED_FOLDER = "multiblimp-partial/hf_cache"  # the Hub's <iso>/data.tsv of a few languages (data/sources.yaml)


def mirrored(codes, source: DataSource) -> dict[str, list]:
    """code -> its file, for the languages of ``codes`` whose Hub file the mirror (or data/raw/)
    holds under :data:`MIRRORED_FOLDER` (checksummed like every mirror file)."""
    return {c: [source.path(f"{MIRRORED_FOLDER}/{c}/data.tsv")] for c in codes
            if source.has(f"{MIRRORED_FOLDER}/{c}/data.tsv")}


def load(languages=ALL, source: DataSource | None = None) -> pd.DataFrame:
    """MultiBLiMP's pairs in ``languages``: "all" (the default: the benchmark as published,
    101 languages, 121,305 pairs on the dataset card), or ISO 639-3 codes ("rus,pol" or a list).
    A language is read from a downloaded Hub copy, else from the mirror's copy of its Hub file
    (:data:`MIRRORED_FOLDER`: eng, ell, nld and tur, 5,939 pairs), else downloaded; offline, a
    missing language is an error that names it, the mirrored ones and the command that fetches it.
    ``language`` is the project's code of the language (ISO 639-1 where it has one: eng -> en,
    see ``multiblimp_languages.language_tag``), ``paradigm`` "<iso>/<phenomenon>" (``rus/SV-#``)
    so that scores group by language and agreement type, ``phenomenon`` the release's agreement
    type (SV-#, SV-P, SV-G, SP-#, SP-P, SP-G: subject-verb or subject-participle agreement in
    number, person or gender); kept: ``lang`` (the ISO 639-3 code) and the release's other columns
    (e.g. ``verb``, ``wrong_verb``, ``child_idx``, ``head_idx``, ``metadata``)."""
    codes, source = language_codes(languages), resolve(source)
    downloaded = hub.present("multiblimp", codes, source)
    found = {} if downloaded is not None else mirrored(codes, source)
    rest = tuple(c for c in codes if c not in found)
    if rest:
        try:
            found |= hub.find("multiblimp", rest, source)
        except DataNotFoundError as err:
            have = sorted(mirrored(tuple(LANGUAGES), source))
            if not have:
                raise
            raise DataNotFoundError(f"{err} Offline, the mirror holds MultiBLiMP's {', '.join(have)} only "
                                    f"({MIRRORED_FOLDER}): pass languages=\"{','.join(have)}\" to read those.") from None
    frames = [language_table(code, found[code]) for code in codes]
    where = f"{spec_of('multiblimp').repo_id} ({', '.join(codes) if len(codes) < 6 else f'{len(codes)} languages'})"
    return finalize_pairs(pd.concat(frames, ignore_index=True), where)
