"""Every script the datasets hold renders in the figures: a figure with labels in each script draws
every glyph (matplotlib warns "Glyph ... missing from font(s)" for one it cannot draw: an error
here), shaped where the script needs it (Devanagari conjuncts, Arabic joining), and a figure whose
text no installed font draws says so."""
from __future__ import annotations

import warnings

import pytest
from fontTools import unicodedata
from matplotlib.ft2font import FT2Font
from matplotlib import font_manager

from helpers.plots import fonts, style
from helpers.reporting.outputs import say_undrawable

# one sentence per script: the datasets' languages (BLiMP and the rest in Latin, RuBLiMP Cyrillic, CLiMP,
# SLING and ZhoBLiMP Chinese, JBLiMP Japanese, BHS Hindi, MultiBLiMP's Greek, Arabic, Hebrew, Armenian,
# Georgian, Bengali, Tamil, ...)
LABELS = {
    "Latn": "The teachers walked quickly.",
    "Cyrl": "Руками обхватила широкие плечи Окота.",
    "Hani": "这些猫看见了我们。",
    "Jpan": "太郎が昨日花子に会った人を探しているのだ。ヒトはカタカナ",
    "Hang": "나는 어제 책을 읽었다.",
    "Grek": "Οι δάσκαλοι περπάτησαν γρήγορα.",
    "Deva": "लड़के ने क्षत्रिय की किताब पढ़ी।",
    "Arab": "قرأ الأولاد الكتاب.",
    "Hebr": "הילדים קראו את הספר.",
    "Armn": "Երեխաները կարդացին գիրքը։",
    "Geor": "ბავშვებმა წიგნი წაიკითხეს.",
    "Beng": "ছেলেরা বইটি পড়েছিল।",
    "Taml": "குழந்தைகள் புத்தகத்தைப் படித்தார்கள்.",
    "Telu": "పిల్లలు పుస్తకం చదివారు.",
    "Gujr": "છોકરાઓએ પુસ્તક વાંચ્યું.",
    "Mlym": "കുട്ടികൾ പുസ്തകം വായിച്ചു.",
    "Sinh": "ළමයි පොත කියෙව්වා.",
    "Ethi": "ልጆቹ መጽሐፉን አነበቡ።",
    "Thai": "เด็กๆ อ่านหนังสือ",
}


def test_the_figures_use_the_base_font_a_font_per_script_and_a_cjk_font():
    assert style.FONTS == ["DejaVu Sans", style.FONTS[-1]] and style.FONTS[-1] in style.CJK_FONTS  # every figure
    every = fonts.script_fonts()  # make system-deps installs them all
    assert {family for family, _ in fonts.SCRIPT_FONTS.values()} <= set(every) and every[-1] == style.FONTS[-1]
    assert list(style.matplotlib.rcParams["font.family"]) == style.FONTS
    # a text gets the script fonts it needs, and only those
    assert fonts.fonts_for("Hello") == style.FONTS
    assert fonts.fonts_for(LABELS["Deva"] + LABELS["Taml"]) == ["DejaVu Sans", "Noto Sans Devanagari",
                                                                "Noto Sans Tamil", style.FONTS[-1]]


@pytest.mark.parametrize("script", list(LABELS))
def test_a_label_in_each_script_draws_every_glyph(script, tmp_path):
    text = LABELS[script]
    assert fonts.undrawable(text) == []
    fig, ax = style.plt.subplots()
    ax.set_title(text)
    ax.set_xlabel(text)
    ax.bar([text[:6], text[6:12]], [1, 2])
    assert fonts.fit_fonts(fig) == []  # as a saved figure is fitted (helpers.reporting.outputs.save_figure)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a UserWarning from the Agg renderer
        fig.savefig(tmp_path / f"{script}.png")
    style.plt.close(fig)


@pytest.mark.parametrize("script,text,glyphs", [
    ("Deva", "क्ष", 1),   # ka + virama + ssa: one conjunct glyph, not three letters
    ("Arab", "لا", 1),    # lam + alef: one ligature
])
def test_text_is_shaped(script, text, glyphs):
    family = fonts.SCRIPT_FONTS[script][0]
    font = FT2Font(font_manager.findfont(family, fallback_to_default=False))
    font.set_size(12, 72)
    font.set_text(text)
    assert font.get_num_glyphs() == glyphs < len(text)
    assert {unicodedata.script(ch) for ch in text} == {script}


def test_a_missing_glyph_is_caught_and_said(tmp_path):
    """The control: with the base font alone, a Chinese or Hindi label warns (so the tests above can
    fail), and a figure whose text no installed font draws says so under itself."""
    for text in (LABELS["Hani"], LABELS["Deva"]):
        fig, ax = style.plt.subplots()
        ax.set_title(text, fontfamily="DejaVu Sans")
        with pytest.warns(UserWarning, match="missing from font"):
            fig.savefig(tmp_path / "missing.png")
        style.plt.close(fig)
    assert fonts.undrawable("ab 中", ["DejaVu Sans"]) == ["中"]
    fig, ax = style.plt.subplots()
    ax.set_title("Linear B: \U00010000")  # a script no font here holds
    with pytest.warns(UserWarning, match="no installed font draws"):
        say_undrawable(fig)
    assert any("shown as boxes" in t.get_text() for t in fig.texts)
    style.plt.close(fig)
