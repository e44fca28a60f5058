"""Every script the datasets hold renders in the figures: a figure with labels in Latin, Cyrillic
(RuBLiMP), Chinese (CLiMP, SLING, ZhoBLiMP) and Japanese kana and kanji (JBLiMP) draws every glyph
(matplotlib warns "Glyph ... missing from font(s)" for one it cannot draw: an error here)."""
from __future__ import annotations

import warnings

import pytest

from helpers.plots import style

LABELS = {
    "latin": "The teachers walked quickly.",
    "cyrillic": "Руками обхватила широкие плечи Окота.",
    "chinese": "这些猫看见了我们。",
    "japanese": "太郎が昨日花子に会った人を探しているのだ。ヒトはカタカナ",
}


def test_the_figures_use_the_base_font_and_a_cjk_font():
    assert style.FONTS[0] == "DejaVu Sans" and len(style.FONTS) == 2 and style.FONTS[1] in style.CJK_FONTS
    assert list(style.matplotlib.rcParams["font.family"]) == style.FONTS


@pytest.mark.parametrize("script", list(LABELS))
def test_a_label_in_each_script_draws_every_glyph(script, tmp_path):
    text = LABELS[script]
    fig, ax = style.plt.subplots()
    ax.set_title(text)
    ax.set_xlabel(text)
    ax.bar([text[:6], text[6:12]], [1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a UserWarning from the Agg renderer
        fig.savefig(tmp_path / f"{script}.png")
    style.plt.close(fig)


def test_a_missing_glyph_is_caught_by_this_test(tmp_path):
    """The control: with the base font alone, a Chinese label warns (so the tests above can fail)."""
    fig, ax = style.plt.subplots()
    ax.set_title(LABELS["chinese"], fontfamily="DejaVu Sans")
    with pytest.warns(UserWarning, match="missing from font"):
        fig.savefig(tmp_path / "missing.png")
    style.plt.close(fig)
