"""MultiBLiMP's word-order pairs (Jumelet et al.; branch ``word_order`` of jumelet/multiblimp,
6ebca3d, not part of MultiBLiMP 1.0): a real sentence of a Universal Dependencies treebank
(``sen_str``, acceptable) and the same sentence with one dependent (the subject, the object or the
indirect object) moved to the other side of its head (``swapped_sen_str``), with the rule that moved
it (``leaf_rule``); at most 100 pairs per rule, tokens joined by single spaces. Read from the mirror,
``multiblimp-word-order/word_order/pairs/tight/<relation>/<Language name>.csv``: 46,148 pairs,
143 / 130 / 58 languages for nsubj / obj / iobj; 694 pairs hold one sentence twice (flagged
``identical``, guaranteed ties). Scored with MultiBLiMP's own rule (:mod:`helpers.data.linking`).
"""
from __future__ import annotations

import pandas as pd

from . import text_files
from .multiblimp_languages import language_tag
from .schema import DataFormatError, finalize_pairs, without_identical
from .sources import DataSource, resolve

FOLDER = "multiblimp-word-order/word_order/pairs/tight"
RELATIONS = ("nsubj", "obj", "iobj")  # the dependent moved: subject, object, indirect object
COLUMNS = ("sen_str", "swapped_sen_str", "leaf_rule")
EXPECTED = "a CSV file with the word-order release's columns sen_str, swapped_sen_str and leaf_rule"
# The file names' languages (Universal Dependencies' names) -> ISO 639-3 code, from UD's
# codes_and_flags.yaml (UniversalDependencies/docs-automation 0960a90: its "iso3"); Kurmanji and the
# two written Norwegians, which that table names otherwise, by their ISO 639-3 codes.
LANGUAGE_CODES = {
    "Abkhaz": "abk", "Afrikaans": "afr", "Akkadian": "akk", "Akuntsu": "aqz", "Albanian": "sqi", "Alemannic": "gsw",
    "Amharic": "amh", "Ancient Greek": "grc", "Ancient Hebrew": "hbo", "Apurina": "apu", "Arabic": "ara",
    "Armenian": "hye", "Azerbaijani": "aze", "Bambara": "bam", "Bavarian": "bar", "Beja": "bej", "Belarusian": "bel",
    "Bhojpuri": "bho", "Bokota": "sab", "Bororo": "bor", "Breton": "bre", "Bulgarian": "bul", "Buryat": "bxr",
    "Cantonese": "yue", "Cappadocian": "cpg", "Catalan": "cat", "Cebuano": "ceb", "Chinese": "cmn",
    "Classical Armenian": "xcl", "Classical Chinese": "lzh", "Coptic": "cop", "Croatian": "hrv", "Czech": "ces",
    "Danish": "dan", "Dutch": "nld", "Egyptian": "egy", "English": "eng", "Esperanto": "epo", "Estonian": "est",
    "Faroese": "fao", "Finnish": "fin", "French": "fra", "Frisian Dutch": "qfn", "Galician": "glg",
    "Georgian": "kat", "German": "deu", "Gheg": "aln", "Gothic": "got", "Greek": "ell", "Guajajara": "gub",
    "Gujarati": "guj", "Gwichin": "gwi", "Haitian Creole": "hat", "Hausa": "hau", "Hebrew": "heb",
    "Highland Puebla Nahuatl": "azz", "Hindi": "hin", "Hittite": "hit", "Hungarian": "hun", "Icelandic": "isl",
    "Ika": "arh", "Indonesian": "ind", "Irish": "gle", "Italian": "ita", "Japanese": "jpn", "Javanese": "jav",
    "Kangri": "xnr", "Karelian": "krl", "Karo": "arr", "Kazakh": "kaz", "Khoekhoe": "naq", "Khunsari": "kfm",
    "Kiche": "quc", "Komi Zyrian": "kpv", "Korean": "kor", "Kurmanji": "kmr", "Kyrgyz": "kir", "Latin": "lat",
    "Latvian": "lav", "Ligurian": "lij", "Lithuanian": "lit", "Livvi": "olo", "Low Saxon": "nds",
    "Macedonian": "mkd", "Madi": "jaa", "Maghrebi Arabic French": "qaf", "Makurap": "mpu", "Malayalam": "mal",
    "Maltese": "mlt", "Manx": "glv", "Marathi": "mar", "Mbya Guarani": "gun", "Middle French": "frm",
    "Moksha": "mdf", "Naga": "nmf", "Naija": "pcm", "Nayini": "nyq", "Neapolitan": "nap", "Nenets": "yrk",
    "Nheengatu": "yrl", "North Sami": "sme", "Northwest Gbaya": "gya", "Norwegian Bokmål": "nob",
    "Norwegian Nynorsk": "nno", "Occitan": "oci", "Odia": "ori", "Old Church Slavonic": "chu",
    "Old East Slavic": "orv", "Old French": "fro", "Old Turkish": "otk", "Ottoman Turkish": "ota", "Pashto": "pst",
    "Persian": "fas", "Pesh": "pay", "Phrygian": "xpg", "Polish": "pol", "Pomak": "qpm", "Portuguese": "por",
    "Romanian": "ron", "Russian": "rus", "Sanskrit": "san", "Scottish Gaelic": "gla", "Serbian": "srp",
    "Sindhi": "snd", "Sinhala": "sin", "Skolt Sami": "sms", "Slovak": "slk", "Slovenian": "slv", "Soi": "soj",
    "South Levantine Arabic": "ajp", "Spanish": "spa", "Spanish Sign Language": "ssp", "Swedish": "swe",
    "Tagalog": "tgl", "Tamil": "tam", "Tatar": "tat", "Telugu": "tel", "Thai": "tha", "Tswana": "tsn",
    "Tupinamba": "tpn", "Turkish": "tur", "Ukrainian": "ukr", "Umbrian": "xum", "Upper Sorbian": "hsb",
    "Urdu": "urd", "Uyghur": "uig", "Uzbek": "uzb", "Veps": "vep", "Vietnamese": "vie", "Welsh": "cym",
    "Western Armenian": "hyw", "Western Sierra Puebla Nahuatl": "nhi", "Wolof": "wol", "Xavante": "xav",
    "Xibe": "sjo", "Yakut": "sah", "Yoruba": "yor", "Yupik": "ess", "Zaar": "say"
}


def language_code(name: str, where) -> str:
    """The ISO 639-3 code of a file's language name; an error naming the file for an unknown one."""
    if name not in LANGUAGE_CODES:
        raise DataFormatError(f"{where}: the language {name!r} has no ISO 639-3 code here "
                              "(helpers/data/multiblimp_word_order.py, LANGUAGE_CODES): add it from Universal "
                              "Dependencies' codes_and_flags.yaml")
    return LANGUAGE_CODES[name]


def _read(path, relation: str) -> pd.DataFrame:
    raw = text_files.csv_frame(path, COLUMNS, EXPECTED)
    iso = language_code(path.stem, path)
    return pd.DataFrame({"dataset": "multiblimp_word_order", "language": language_tag(iso),
                         "paradigm": f"{iso}/{relation}", "phenomenon": relation, "field": "",
                         "pair_id": range(len(raw)), "good": raw["sen_str"].to_numpy(),
                         "bad": raw["swapped_sen_str"].to_numpy(), "rule": raw["leaf_rule"].to_numpy(),
                         "lang": iso, "language_name": path.stem})


def load(drop_identical: bool = False, source: DataSource | None = None) -> pd.DataFrame:
    """Every word-order pair (``drop_identical``: less the 694 that hold one sentence twice, 45,454): ``paradigm`` "<iso>/<relation>" (``eng/obj``), ``phenomenon`` the
    relation of the moved dependent (nsubj, obj, iobj), ``language`` the project's code of the
    language (ISO 639-1 where it has one); kept: ``rule`` (the release's ``leaf_rule``, the moves
    from leaf to head), ``lang`` (ISO 639-3) and ``language_name`` (the file's)."""
    source = resolve(source)
    frames = [_read(path, relation) for relation in RELATIONS for path in source.files(f"{FOLDER}/{relation}", "*.csv")]
    if not frames:
        raise DataFormatError(f"{source.path(FOLDER)}: no word-order .csv files. To fix: restore the folder from its "
                              "origin (data/sources.yaml lists it)")
    df = pd.concat(frames, ignore_index=True)
    for col in ("rule", "lang", "language_name"):
        df[col] = df[col].astype("string")
    return without_identical(finalize_pairs(df, str(source.path(FOLDER))), drop_identical)
