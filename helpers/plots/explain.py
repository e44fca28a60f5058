"""The quickstart's figure: surprisal of one minimal pair per word (the two sentences' words
lined up, the differing ones highlighted; corrected for word boundaries where the model gives
the correction, the plain sum of each word's tokens marked beside) and per token."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .fonts import INSTALL, fit_fonts, undrawable
from .style import FONTS  # noqa: F401 - the figures' fonts set up (helpers.plots.style)


GOOD, BAD, HIGHLIGHT = "#3b75af", "#e1812c", "#fff2b3"


def _labels(texts: list[str]) -> tuple[list[str], str | None]:
    """Tick labels, and a note when some of their characters cannot be drawn with the figures'
    fonts (:func:`helpers.plots.fonts.undrawable`): then labels are positions."""
    missing = undrawable("".join(texts))  # by every installed font: fit_fonts gives each label its own
    if missing:
        return [f"#{i + 1}" for i in range(len(texts))], (f"no installed font draws {''.join(missing[:5])!r} "
                                                          f"(install {INSTALL}): ticks show positions")
    return texts, None


def pair_figure(ex, headline: str = "lp") -> Figure:
    """Three panels of ``ex`` (a :class:`helpers.explain.pair.PairExplanation`): per-word
    surprisal of both sentences on aligned columns (differing words shaded), then per-token
    surprisal of the acceptable and of the unacceptable sentence. A matplotlib Figure, not
    registered with pyplot (``display(fig)`` or ``fig.savefig`` shows it)."""
    cols = ex.columns
    good_tokens = ex.tokens[ex.tokens.side == "good"]
    bad_tokens = ex.tokens[ex.tokens.side == "bad"]
    width = max(7.0, 0.55 * max(len(cols), len(good_tokens), len(bad_tokens)) + 2)
    # a Figure of its own, outside pyplot's global state: the live controls draw from widget callbacks,
    # which pyplot's figure registry and the inline backend's hooks are not safe to share with
    fig = Figure(figsize=(width, 7.2))
    axes = fig.subplots(3, 1, gridspec_kw={"height_ratios": [1.2, 1, 1]})
    notes = []

    ax = axes[0]
    x = np.arange(len(cols))
    for i, differs in enumerate(cols.differs):
        if differs:
            ax.axvspan(i - 0.5, i + 0.5, color=HIGHLIGHT, zorder=0)
    corrected = bool(cols.good_corrected.notna().any())  # NaN where the scorer gives no word boundaries
    good_bits, bad_bits = (cols.good_corrected, cols.bad_corrected) if corrected else (cols.good_surprisal,
                                                                                       cols.bad_surprisal)
    ax.bar(x - 0.2, good_bits.fillna(0), 0.4, color=GOOD, label="acceptable")
    ax.bar(x + 0.2, bad_bits.fillna(0), 0.4, color=BAD, label="unacceptable")
    if corrected:  # the plain sum of each word's tokens, beside its corrected bar
        ax.scatter(np.r_[x - 0.2, x + 0.2], np.r_[cols.good_surprisal, cols.bad_surprisal], marker="_", s=150,
                   color="black", zorder=3, label="sum of its tokens")
    texts = [g if not d else f"{g or '–'}\n{b or '–'}" for g, b, d in zip(cols.good_text, cols.bad_text, cols.differs)]
    labels, note = _labels(texts)
    notes += [note] if note else []
    ax.set_xticks(x, labels)
    for tick, differs in zip(ax.get_xticklabels(), cols.differs):
        tick.set_fontweight("bold" if differs else "normal")
    ax.set_ylabel("surprisal (bits)")
    ax.set_title("per word, corrected for word boundaries (Pimentel & Meister 2024; shaded: the words that differ)"
                 if corrected else "per word (shaded: the words that differ)", fontsize=10, loc="left")
    ax.legend(fontsize=8, loc="upper right")

    for ax, tokens, color, side in ((axes[1], good_tokens, GOOD, "acceptable"), (axes[2], bad_tokens, BAD, "unacceptable")):
        x = np.arange(len(tokens))
        for i, differs in enumerate(tokens.differs):
            if differs:
                ax.axvspan(i - 0.5, i + 0.5, color=HIGHLIGHT, zorder=0)
        ax.bar(x, tokens.surprisal, 0.7, color=color)
        labels, _ = _labels([t.strip() or "␣" for t in tokens.text])  # a token of spaces: ␣
        ax.set_xticks(x, labels, rotation=45 if len(tokens) > 12 else 0, ha="right" if len(tokens) > 12 else "center")
        total = tokens.surprisal.sum()
        ax.set_title(f"per token, {side}: {total:.1f} bits in {len(tokens)} tokens (LP {tokens.logprob.sum():.2f})",
                     fontsize=10, loc="left")
        ax.set_ylabel("surprisal (bits)")
    top = max(float(np.nanmax(ex.tokens.surprisal)), float(np.nanmax(ex.words.surprisal)))
    for ax, n in zip(axes, (len(cols), len(good_tokens), len(bad_tokens))):
        ax.set_xlim(-0.6, n - 0.4)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in axes[1:]:
        ax.set_ylim(0, top * 1.05)
    verdict = ex.decision(headline)
    said = (f"{headline} scores both sentences the same (a tie counts as wrong) ✗" if verdict == "tie" else
            f"{headline} prefers the {verdict} sentence {'✓' if verdict == 'acceptable' else '✗'}")
    fig.suptitle(f"{ex.model}: {said}", fontsize=12, x=0.01, ha="left")
    if notes:
        fig.text(0.01, 0.005, "; ".join(notes), fontsize=8, color="0.4")
    fig.tight_layout()
    fit_fonts(fig)  # a sentence in a script the base fonts lack: its font
    return fig
