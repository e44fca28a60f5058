"""What 00_quickstart displays: one pair explained (figure, sums, decision table) and a paradigm
browser, as live ipywidgets controls in JupyterLab or as plain outputs in a headless run
(papermill, nbconvert), where the notebook's parameters take the widgets' place.

Every control rescoring on change goes through :func:`pair_outputs` or
:func:`paradigm_outputs`; a wrong input comes back as a message in the output area (the
controls keep working), never as a traceback.
"""
from __future__ import annotations

import html
import io
import threading
import time

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Image, clear_output, display

from . import pair as explain
from .pair import DECISION_METHODS, PairExplanation
from .scorers import ExplainError, Scorers, model_choices
from ..plots.explain import pair_figure
from ..progress import frontend_renders_widgets
from ..methods.templates import IDE_TEMPLATE_IDS

TEMPLATES = IDE_TEMPLATE_IDS
# One redraw at a time, across every control of the kernel: ipykernel 7 may handle widget messages on
# more than one thread at once, and matplotlib's drawing is not thread-safe: two pairs typed in quick
# succession drew half a figure each (bars without title, axes or lower panels).
_REDRAW = threading.RLock()


def message(text: str, kind: str = "error") -> HTML:
    """A boxed message in the output area (kind "error" or "note")."""
    color = {"error": ("#fde8e8", "#b42318", "⚠"), "note": ("#eef4fb", "#1f4e79", "ℹ")}[kind]
    return HTML(f'<div class="qs-{kind}" style="background:{color[0]};color:{color[1]};padding:6px 10px;'
                f'border-radius:4px;margin:4px 0">{color[2]} {html.escape(text)}</div>')


def figure_image(fig) -> Image:
    """``fig`` as a PNG image (the figure is closed, so it is not shown twice)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return Image(data=buf.getvalue(), format="png")


def decision_html(ex: PairExplanation, headline: str):
    """The decision table, the headline method's row in bold."""
    table = explain.decision_table(ex)
    styled = (table.style.format({"score (acceptable)": "{:.4f}", "score (unacceptable)": "{:.4f}"})
              .apply(lambda row: ["font-weight:bold" if row["method"] == headline else ""] * len(row), axis=1)
              .hide(axis="index").set_table_attributes('class="qs-decisions"'))
    return styled


def sums_html(ex: PairExplanation, seconds: float) -> HTML:
    rows = ex.sums.set_index("side")
    parts = [f"<b>{label}</b> “{html.escape(rows.sentence[side])}”: LP {rows.lp[side]:.2f} nats = "
             f"{rows.surprisal[side]:.1f} bits over {rows.tokens[side]} tokens ({rows.words[side]} words)"
             + ("" if pd.isna(rows.word_lp[side]) else f"; corrected words' LP {rows.word_lp[side]:.2f} nats "
                "(LP + log-probability of a word boundary after the sentence)")
             for side, label in (("good", "acceptable"), ("bad", "unacceptable"))]
    return HTML('<div class="qs-sums">' + "<br>".join(parts) +
                f'<br><span style="color:#666">scored by {html.escape(ex.model)} in {seconds:.2f} s</span></div>')


def pair_outputs(good, bad, model, method: str = "lp", template: int = 1, scorers: Scorers | None = None
                 ) -> tuple[list, PairExplanation | None]:
    """What to display for one pair, and its explanation (None after a wrong input: then the
    outputs are the message saying what to do). ``scorers`` keeps the models loaded between
    calls (None: this call loads its own)."""
    if method not in DECISION_METHODS:
        return [message(f"Choose a method from {', '.join(DECISION_METHODS)}; {method!r} is not one.")], None
    started = time.perf_counter()
    try:
        scorers = scorers or Scorers()
        ex = explain.explain_pair(scorers.get(model), good, bad, template=template, instruct=scorers.instruct)
    except ExplainError as err:
        return [message(str(err))], None
    seconds = time.perf_counter() - started
    shown = [sums_html(ex, seconds), figure_image(pair_figure(ex, method)), decision_html(ex, method)]
    return [message(n, "note") for n in ex.notes] + shown, ex


def paradigm_outputs(model, dataset: str, paradigm: str | None, pairs: int, method: str = "lp",
                     template: int = 1, scorers: Scorers | None = None) -> tuple[list, explain.ParadigmView | None]:
    """What to display for a paradigm: its accuracy, its pairs and the hardest pair."""
    try:
        scorers = scorers or Scorers()
        view = explain.browse_paradigm(scorers.get(model), dataset, paradigm, pairs, method, template,
                                       instruct=scorers.instruct)
    except ExplainError as err:
        return [message(str(err))], None
    table = view.pairs.assign(correct=view.pairs.correct.map({True: "✓", False: "✗"}))
    styled = (table[["pair_id", "good", "bad", "score_good", "score_bad", "margin", "correct"]].style
              .format({"score_good": "{:.3f}", "score_bad": "{:.3f}", "margin": "{:+.3f}"})
              .hide(axis="index").set_table_attributes('class="qs-paradigm"'))
    right = int(view.pairs.correct.sum())
    head = HTML(f'<div class="qs-accuracy"><b>{html.escape(method)}</b> on {html.escape(view.paradigm)} '
                f"({html.escape(dataset)}): {right}/{len(view.pairs)} pairs right "
                f"({100 * view.accuracy:.0f}%). The hardest pair (lowest margin) is explained below.</div>")
    hard = view.hardest
    return [head, styled, figure_image(pair_figure(hard, method)), decision_html(hard, method)], view


class _Live:
    """Controls, an output area, and a callback that redraws it from the controls' values."""

    def __init__(self, controls: dict, scorers: Scorers):
        import ipywidgets as w

        self.scorers = scorers  # the models this control keeps loaded
        self.controls = controls
        for name, control in controls.items():
            control.add_class(f"qs-{name}")
            control.observe(self.refresh, names="value")
        self.out = w.Output()
        self.out.add_class(self.output_class)
        self.result = None

    output_class = "qs-output"

    def values(self) -> dict:
        return {name: c.value for name, c in self.controls.items()}

    def compute(self, **values) -> tuple[list, object]:
        raise NotImplementedError

    def refresh(self, change=None) -> None:
        with _REDRAW, self.out:
            clear_output(wait=True)
            display(message("scoring ...", "note"))
            try:
                shown, self.result = self.compute(**self.values())
            except Exception as err:  # noqa: BLE001 - a live control must survive any input; say what broke
                shown, self.result = [message(f"Unexpected {type(err).__name__}: {err}")], None
            clear_output(wait=True)
            for item in shown:
                display(item)


class PairExplorer(_Live):
    """Two text boxes, a model box (the registry as suggestions; any name may be typed), a
    method and a template selector; each change rescores the pair."""

    def __init__(self, good: str, bad: str, model: str, method: str = "lp", template: int = 1,
                 scorers: Scorers | None = None):
        import ipywidgets as w

        wide, label = w.Layout(width="640px"), {"description_width": "100px"}
        super().__init__({
            "good": w.Text(good, description="acceptable", continuous_update=False, layout=wide, style=label),
            "bad": w.Text(bad, description="unacceptable", continuous_update=False, layout=wide, style=label),
            "model": w.Combobox(value=model, options=model_choices(), ensure_option=False,
                                continuous_update=False, description="model", style=label,
                                placeholder="a registered name, a folder or org/name"),
            "method": w.Dropdown(options=list(DECISION_METHODS), value=method, description="method", style=label),
            "template": w.Dropdown(options=list(TEMPLATES), value=template, description="template", style=label),
        }, scorers or Scorers())
        c = self.controls
        self.widget = w.VBox([c["good"], c["bad"], w.HBox([c["model"], c["method"], c["template"]]), self.out])
        self.widget.add_class("qs-pair")

    def compute(self, good, bad, model, method, template):
        return pair_outputs(good, bad, model, method, template, self.scorers)


class ParadigmBrowser(_Live):
    """A dataset, a paradigm, how many pairs, a method and a model; each change rejudges."""

    output_class = "qs-paradigm-output"

    def __init__(self, model: str, dataset: str, paradigm: str | None, pairs: int, method: str = "lp",
                 template: int = 1, scorers: Scorers | None = None):
        import ipywidgets as w

        label = {"description_width": "100px"}
        names = explain.paradigms(dataset).paradigm.tolist()
        dataset_box = w.Dropdown(options=list(explain.BROWSER_DATASETS), value=dataset, description="dataset",
                                 style=label)
        super().__init__({
            "model": w.Combobox(value=model, options=model_choices(), ensure_option=False,
                                continuous_update=False, description="model", style=label),
            "dataset": dataset_box,
            "paradigm": w.Dropdown(options=names, value=paradigm or names[0], description="paradigm", style=label,
                                   layout=w.Layout(width="520px")),
            "pairs": w.IntSlider(value=pairs, min=2, max=50, description="pairs", continuous_update=False,
                                 style=label),
            "method": w.Dropdown(options=list(DECISION_METHODS), value=method, description="method", style=label),
        }, scorers or Scorers())
        dataset_box.unobserve(self.refresh, names="value")  # a new dataset first gets its paradigms
        dataset_box.observe(self._new_dataset, names="value")
        self.template = template
        c = self.controls
        self.widget = w.VBox([w.HBox([c["dataset"], c["paradigm"]]), w.HBox([c["model"], c["pairs"], c["method"]]),
                              self.out])
        self.widget.add_class("qs-paradigm")

    def _new_dataset(self, change) -> None:
        paradigm = self.controls["paradigm"]
        paradigm.unobserve(self.refresh, names="value")
        try:
            paradigm.options = explain.paradigms(change["new"]).paradigm.tolist()
            paradigm.value = paradigm.options[0]
        finally:
            paradigm.observe(self.refresh, names="value")
        self.refresh()

    def compute(self, model, dataset, paradigm, pairs, method):
        return paradigm_outputs(model, dataset, paradigm, pairs, method, self.template, self.scorers)


def _show(live_cls, compute, interactive: bool | None, args: tuple):
    if interactive is None:
        interactive = frontend_renders_widgets()
    if interactive:
        try:
            app = live_cls(*args)
        except ExplainError as err:
            display(message(str(err)))
            return None
        display(app.widget)
        app.refresh()
        return app.result
    shown, result = compute(*args)
    for item in shown:
        display(item)
    return result


def show_pair(good: str, bad: str, model: str, method: str = "lp", template: int = 1,
              interactive: bool | None = None, scorers: Scorers | None = None) -> PairExplanation | None:
    """Display the pair: live controls where a person's front end shows widgets (JupyterLab),
    else the outputs for these values. Returns the explanation of these values (None after a
    wrong input, whose message is displayed). ``scorers`` (one per notebook) keeps the models
    loaded across controls."""
    return _show(PairExplorer, pair_outputs, interactive, (good, bad, model, method, template, scorers))


def show_paradigm(model: str, dataset: str = "blimp", paradigm: str | None = None, pairs: int = 10,
                  method: str = "lp", template: int = 1, interactive: bool | None = None,
                  scorers: Scorers | None = None):
    """Display the paradigm browser (live or plain, as :func:`show_pair`); returns its view."""
    return _show(ParadigmBrowser, paradigm_outputs, interactive,
                 (model, dataset, paradigm, pairs, method, template, scorers))


def tokens_table(ex: PairExplanation | None) -> pd.DataFrame:
    """The per-token values of a pair as the quickstart saves them (empty after a wrong input)."""
    cols = ["side", "position", "token", "text", "word", "logprob", "surprisal", "differs"]
    return pd.DataFrame(columns=cols) if ex is None else ex.tokens[cols]
