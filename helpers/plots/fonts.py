"""Fonts for every script the datasets hold, and what cannot be drawn with them.

Glyphs come by fallback, in order: DejaVu Sans (matplotlib's own: Latin, Greek, Cyrillic), a Noto
font per script from Debian's fonts-noto-core (Devanagari for BHS's Hindi; Arabic, Hebrew,
Armenian, Georgian, the Indic scripts, Ethiopic, Thai... for MultiBLiMP's 101 languages), then a
CJK font for Chinese characters, kana and Hangul: WenQuanYi Micro Hei (fonts-wqy-microhei) or a Noto
CJK font. ``make system-deps`` installs both packages. Every figure starts with the base and CJK fonts
(:func:`use_script_fonts`); a text that needs a script font gets it when its figure is fitted
(:func:`fit_fonts`, called where figures are saved): a fallback list of all 27 script fonts would make
every figure twice as slow to draw. matplotlib shapes each text with libraqm
(HarfBuzz and FriBiDi, bundled with it since 3.11): Arabic letters join and run right to left,
Devanagari and the other Indic scripts form their conjuncts. A font installed after matplotlib built
its font cache is added here. :func:`undrawable` names the characters no font here draws.
"""
from __future__ import annotations

import functools
import warnings
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
    """Every font family a figure may use, in fallback order: the base font, each installed script
    font, then the first CJK font installed (found once per process)."""
    return list(_installed_fonts())


@functools.cache
def _installed_fonts() -> tuple[str, ...]:
    _register_missing()
    known = {f.name for f in font_manager.fontManager.ttflist}
    scripts = [family for family, _ in SCRIPT_FONTS.values() if family in known]
    return (BASE_FONT, *dict.fromkeys(scripts), *[name for name in CJK_FONTS if name in known][:1])


def base_fonts() -> list[str]:
    """The fonts every figure starts with: the base font and the CJK font (:func:`script_fonts`' ends)."""
    every = script_fonts()
    return [every[0], *[f for f in every[1:] if f in CJK_FONTS]]


def use_script_fonts() -> list[str]:
    """Set matplotlib's font family to :func:`base_fonts` (the figures of every notebook; :func:`fit_fonts`
    adds a script font to a text that needs one)."""
    fonts = base_fonts()
    matplotlib.rcParams["font.family"] = fonts
    return fonts


def fonts_for(text: str) -> list[str]:
    """The fonts that draw ``text``: the base fonts, with each script font a character of ``text``
    needs and they lack inserted before the CJK font."""
    base = base_fonts()
    missing = undrawable(text, base)
    if not missing:
        return base
    scripts, needed = [f for f in script_fonts()[1:] if f not in base], []
    for ch in missing:  # the first script font with each missing character (Devanagari's danda: Devanagari's)
        if not any(_font(f).get_char_index(ord(ch)) for f in needed):
            needed += [f for f in scripts if _font(f).get_char_index(ord(ch))][:1]
    return [base[0], *sorted(needed, key=scripts.index), *base[1:]]


def fit_fonts(fig) -> list[str]:
    """Give each text of ``fig`` whose characters the base fonts lack the script fonts it needs; the
    characters no installed font draws, which stay boxes."""
    from matplotlib.text import Text

    with warnings.catch_warnings():  # a layout pass with the base fonts: their missing glyphs are what is fitted
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.draw_without_rendering()  # every tick label made, as the figure will draw it
    lost, base = [], base_fonts()
    for text in fig.findobj(Text):
        content = text.get_text()
        if content and not content.isascii():
            fonts = fonts_for(content)
            if fonts != base:
                text.set_fontfamily(fonts)
            lost += undrawable(content, fonts)
    return list(dict.fromkeys(lost))


_COVERAGE: dict[str, FT2Font] = {}


def undrawable(text: str, fonts: list[str] | None = None) -> list[str]:
    """The characters of ``text`` (spaces and controls aside) that none of ``fonts`` (default: the
    figures' fonts, :func:`script_fonts`) has a glyph for: drawn as empty boxes."""
    families = fonts or script_fonts()
    return [ch for ch in dict.fromkeys(text) if not ch.isspace() and ch.isprintable()
            and not any(_font(f).get_char_index(ord(ch)) for f in families)]


def _font(family: str) -> FT2Font:
    """The font file of ``family``, opened once (to ask which characters it has)."""
    if family not in _COVERAGE:
        found = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        _COVERAGE[family] = FT2Font(found)
    return _COVERAGE[family]
