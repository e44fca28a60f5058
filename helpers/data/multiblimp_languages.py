"""MultiBLiMP 1.0's 101 languages: ISO 639-3 code, name and number of pairs, and the ``languages``
option (which of them to read).

The table is the one in lm-evaluation-harness's ``lm_eval/tasks/multiblimp/README.md`` (copied
there from the Hub dataset card of jumelet/multiblimp): 101 languages, 121,305 pairs. Each code is
a config of the Hub dataset and a folder of its files (``<iso>/data.tsv``).
"""
from __future__ import annotations

import langcodes

from ..settings.lists import parse_list

# ISO 639-3 code -> (language, pairs), in the table's order (by language name)
LANGUAGES: dict[str, tuple[str, int]] = {
    "abk": ("Abkhazian", 40), "aqz": ("Akuntsu", 14), "sqi": ("Albanian", 243), "amh": ("Amharic", 112),
    "grc": ("Ancient Greek", 3695), "hbo": ("Ancient Hebrew", 983), "apu": ("Apurinã", 28), "hye": ("Armenian", 1415),
    "eus": ("Basque", 273), "bel": ("Belarusian", 2570), "ben": ("Bengali", 21), "bho": ("Bhojpuri", 34),
    "bor": ("Borôro", 241), "bre": ("Breton", 260), "bul": ("Bulgarian", 2458), "bua": ("Buriat", 103),
    "cat": ("Catalan", 2284), "chu": ("Church Slavonic", 4166), "xcl": ("Classical Armenian", 1623),
    "ces": ("Czech", 4256), "dan": ("Danish", 50), "nld": ("Dutch", 2331), "egy": ("Egyptian (Ancient)", 22),
    "eng": ("English", 770), "myv": ("Erzya", 464), "est": ("Estonian", 2575), "fao": ("Faroese", 232),
    "fin": ("Finnish", 2570), "fra": ("French", 2548), "glg": ("Galician", 753), "kat": ("Georgian", 204),
    "deu": ("German", 2298), "aln": ("Gheg Albanian", 677), "got": ("Gothic", 1579), "guj": ("Gujarati", 7),
    "heb": ("Hebrew", 2330), "azz": ("H-P Nahuatl", 207), "hin": ("Hindi", 1447), "hit": ("Hittite", 50),
    "hun": ("Hungarian", 845), "isl": ("Icelandic", 2801), "gle": ("Irish", 28), "ita": ("Italian", 2999),
    "quc": ("K'iche'", 131), "xnr": ("Kangri", 86), "krl": ("Karelian", 260), "kxh": ("Karo (Ethiopia)", 120),
    "kaz": ("Kazakh", 173), "kir": ("Kirghiz", 185), "koi": ("Komi-Permyak", 43), "kpv": ("Komi-Zyrian", 320),
    "lat": ("Latin", 3149), "lav": ("Latvian", 3032), "lij": ("Ligurian", 254), "lit": ("Lithuanian", 1180),
    "olo": ("Livvi", 190), "nds": ("Low German", 1774), "mkd": ("Macedonian", 39), "mar": ("Marathi", 460),
    "frm": ("Middle French", 294), "ell": ("Modern Greek", 1096), "mdf": ("Moksha", 82), "yrl": ("Nhengatu", 720),
    "pcm": ("Nigerian Pidgin", 26), "kmr": ("Northern Kurdish", 544), "sme": ("Northern Sami", 2536),
    "fro": ("Old French", 1976), "orv": ("Old Russian", 4615), "ota": ("Ottoman Turkish", 99),
    "fas": ("Persian", 2553), "xpg": ("Phrygian", 50), "pol": ("Polish", 3272), "por": ("Portuguese", 3048),
    "ron": ("Romanian", 2056), "rus": ("Russian", 3832), "san": ("Sanskrit", 4442), "gla": ("Scottish Gaelic", 66),
    "hbs": ("Serbo-Croatian", 3286), "sms": ("Skolt Sami", 263), "slk": ("Slovak", 4145), "slv": ("Slovenian", 4483),
    "spa": ("Spanish", 2541), "arb": ("Standard Arabic", 1215), "swe": ("Swedish", 201), "tam": ("Tamil", 382),
    "ttc": ("Tektiteko", 69), "tpn": ("Tupinambá", 9), "tur": ("Turkish", 1742), "uig": ("Uighur", 758),
    "ukr": ("Ukrainian", 2744), "hsb": ("Upper Sorbian", 186), "urd": ("Urdu", 550), "urb": ("Urubú-Kaapor", 13),
    "uzb": ("Uzbek", 50), "vep": ("Veps", 187), "wbp": ("Warlpiri", 12), "cym": ("Welsh", 1120),
    "hyw": ("Western Armenian", 1153), "wol": ("Wolof", 705), "sah": ("Yakut", 144), "nhi": ("Tenango Nahuatl", 38),
}
ALL = "all"


def language_codes(languages) -> tuple[str, ...]:
    """The ISO 639-3 codes that ``languages`` names ("all", "rus,pol" or a list), sorted; an
    unknown code is an error that lists the known ones with their names."""
    known = ", ".join(f"{c} ({name})" for c, (name, _) in sorted(LANGUAGES.items()))
    try:
        codes = parse_list(languages, sorted(LANGUAGES), what="MultiBLiMP language",
                                convert=lambda code: code.lower())
    except ValueError as err:
        message = str(err).split("; choose from")[0]
        raise ValueError(f"{message}: give ISO 639-3 codes (e.g. 'rus,pol') or 'all'. "
                         f"MultiBLiMP's 101 languages: {known}") from None
    return tuple(sorted(set(codes)))


def canonical(languages) -> str:
    """One spelling of a selection: "all" for every language, else the sorted codes joined by commas."""
    codes = language_codes(languages)
    return ALL if len(codes) == len(LANGUAGES) else ",".join(codes)


def language_tag(code: str) -> str:
    """The code the project names a language by (the table's ``language`` column, a model's
    ``languages``): the shortest ISO 639 code, i.e. ISO 639-1 where the language has one
    (``langcodes.standardize_tag``: eng -> en, rus -> ru; arb stays arb), else the ISO 639-3 code.
    A code whose standard tag needs a script (hbs, Serbo-Croatian -> sr-Latn) keeps its own."""
    tag = langcodes.standardize_tag(code)
    return code if "-" in tag else tag


def expected_pairs(codes) -> int:
    """The number of pairs the dataset card counts for these languages."""
    return sum(LANGUAGES[c][1] for c in codes)
