"""Fonts for every script the datasets hold, and what cannot be drawn with them.

Glyphs come by fallback, in order: DejaVu Sans (matplotlib's own: Latin, Greek, Cyrillic), a Noto
font per script from Debian's fonts-noto-core (Devanagari for BHS's Hindi; Arabic, Hebrew,
Armenian, Georgian, the Indic scripts, Ethiopic, Thai... for MultiBLiMP's 101 languages), then a
CJK font for Chinese characters, kana and Hangul: WenQuanYi Micro Hei (fonts-wqy-microhei) or a Noto
CJK font. ``make system-deps`` installs both packages. matplotlib shapes each text with libraqm
(HarfBuzz and FriBiDi, bundled with it since 3.11): Arabic letters join and run right to left,
Devanagari and the other Indic scripts form their conjuncts. A font installed after matplotlib built
its font cache is added here. :func:`undrawable` names the characters no font here draws.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

BASE_FONT = "DejaVu Sans"
# ISO 15924 script -> (family, file) of fonts-noto-core, for the scripts the datasets and the papers' data hold
SCRIPT_FONTS = {
    "Deva": ("Noto Sans Devanagari", "NotoSansDevanagari-Regular.ttf"),
    "Beng": ("Noto Sans Bengali", "NotoSansBengali-Regular.ttf"),
    "Guru": ("Noto Sans Gurmukhi", "NotoSansGurmukhi-Regular.ttf"),
    "Gujr": ("Noto Sans Gujarati", "NotoSansGujarati-Regular.ttf"),
    "Orya": ("Noto Sans Oriya", "NotoSansOriya-Regular.ttf"),
    "Taml": ("Noto Sans Tamil", "NotoSansTamil-Regular.ttf"),
    "Telu": ("Noto Sans Telugu", "NotoSansTelugu-Regular.ttf"),
    "Knda": ("Noto Sans Kannada", "NotoSansKannada-Regular.ttf"),
    "Mlym": ("Noto Sans Malayalam", "NotoSansMalayalam-Regular.ttf"),
    "Sinh": ("Noto Sans Sinhala", "NotoSansSinhala-Regular.ttf"),
    "Arab": ("Noto Sans Arabic", "NotoSansArabic-Regular.ttf"),
    "Hebr": ("Noto Sans Hebrew", "NotoSansHebrew-Regular.ttf"),
    "Syrc": ("Noto Sans Syriac", "NotoSansSyriac-Regular.ttf"),
    "Armn": ("Noto Sans Armenian", "NotoSansArmenian-Regular.ttf"),
    "Geor": ("Noto Sans Georgian", "NotoSansGeorgian-Regular.ttf"),
    "Ethi": ("Noto Sans Ethiopic", "NotoSansEthiopic-Regular.ttf"),
    "Thai": ("Noto Sans Thai", "NotoSansThai-Regular.ttf"),
    "Laoo": ("Noto Sans Lao", "NotoSansLao-Regular.ttf"),
    "Khmr": ("Noto Sans Khmer", "NotoSansKhmer-Regular.ttf"),
    "Mymr": ("Noto Sans Myanmar", "NotoSansMyanmar-Regular.ttf"),
    "Tibt": ("Noto Serif Tibetan", "NotoSerifTibetan-Regular.ttf"),
    "Mong": ("Noto Sans Mongolian", "NotoSansMongolian-Regular.ttf"),
    "Copt": ("Noto Sans Coptic", "NotoSansCoptic-Regular.ttf"),
    "Glag": ("Noto Sans Glagolitic", "NotoSansGlagolitic-Regular.ttf"),
    "Orkh": ("Noto Sans Old Turkic", "NotoSansOldTurkic-Regular.ttf"),
    "Cans": ("Noto Sans Canadian Aboriginal", "NotoSansCanadianAboriginal-Regular.ttf"),
    "Yiii": ("Noto Sans Yi", "NotoSansYi-Regular.ttf"),
}
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", "Droid Sans Fallback")
CJK_FONT_FILES = ("wqy-microhei.ttc", "NotoSansCJK-Regular.ttc", "DroidSansFallbackFull.ttf")
INSTALL = "Debian fonts-noto-core and fonts-wqy-microhei (`make system-deps`)"


def _register_missing() -> None:
    """Add the script and CJK fonts installed after matplotlib built its font cache."""
    known = {f.name for f in font_manager.fontManager.ttflist}
    wanted = {file for family, file in SCRIPT_FONTS.values() if family not in known}
    if not known.intersection(CJK_FONTS):
        wanted |= set(CJK_FONT_FILES)
    if wanted:
        for path in font_manager.findSystemFonts():
            if Path(path).name in wanted:
                font_manager.fontManager.addfont(path)


def script_fonts() -> list[str]:
    """The font families every figure uses, in fallback order: the base font, each installed script
    font, then the first CJK font installed."""
    _register_missing()
    known = {f.name for f in font_manager.fontManager.ttflist}
    scripts = [family for family, _ in SCRIPT_FONTS.values() if family in known]
    return [BASE_FONT, *dict.fromkeys(scripts), *[name for name in CJK_FONTS if name in known][:1]]


def use_script_fonts() -> list[str]:
    """Set matplotlib's font family to :func:`script_fonts` (the figures of every notebook)."""
    fonts = script_fonts()
    matplotlib.rcParams["font.family"] = fonts
    return fonts


_COVERAGE: dict[str, FT2Font] = {}


def undrawable(text: str, fonts: list[str] | None = None) -> list[str]:
    """The characters of ``text`` (spaces and controls aside) that none of ``fonts`` (default: the
    figures' fonts, :func:`script_fonts`) has a glyph for: drawn as empty boxes."""
    families = fonts or script_fonts()
    for family in families:
        if family not in _COVERAGE:
            found = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
            _COVERAGE[family] = FT2Font(found)
    missing = []
    for ch in dict.fromkeys(text):
        if ch.isspace() or not ch.isprintable():
            continue
        if not any(_COVERAGE[f].get_char_index(ord(ch)) for f in families):
            missing.append(ch)
    return missing
