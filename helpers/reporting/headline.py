"""The headline of a scoring or reading notebook (and of ``make demo``): per method, the accuracy in
percent with its 95% interval and n, the expected accuracy where there are ties, the paired
difference from the best method, the paper's number where the dataset's paper has one, and the
caveats that change how to read them, in words (:mod:`helpers.analysis.headline` computes them).

    head = headline.of(scores, "02_readout", dataset)   # each model's languages from the registry
    head                                # the table in percent, its caveats under it
    report.table(head.table, "headline", note=head.note)   # fractions in the file, the note in its .md
    plots.phenomenon_heatmap(..., title=head.title("accuracy by phenomenon"))
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..analysis import headline as stats
from ..data import DATASETS
from ..models import REGISTRY
from . import paper_check

ACCURACY_MEASURES = ("accuracy", "template_mean")  # a paper's number comparable with the headline's accuracy


@dataclass
class Headline:
    """The headline's ``table`` (fractions, as files keep them), its ``caveats`` (sentences) and what
    the intervals and tests are (``method_note``)."""

    table: pd.DataFrame
    caveats: list[str] = field(default_factory=list)
    method_note: str = ""

    @property
    def note(self) -> str:
        """The caveats and how the numbers were computed, as the table's note."""
        return "\n".join([*(f"- {c}" for c in self.caveats), self.method_note])

    def title(self, text: str) -> str:
        """``text`` with the caveats' short forms, for a figure's title."""
        short = [c.split(":")[0] for c in self.caveats]
        return text if not short else f"{text}\n({'; '.join(short)})"

    def shown(self) -> pd.DataFrame:
        """The table as a person reads it: percent with one decimal, the interval as "low-high"."""
        t = self.table
        if t.empty:
            return t
        pct = lambda column: (100 * t[column]).round(1)  # noqa: E731
        out = pd.DataFrame({"model": t["model"], "method": t["method"], "n": t["pairs"],
                            "accuracy (%)": pct("accuracy"),
                            "95% CI": [f"{100 * lo:.1f}-{100 * hi:.1f}" for lo, hi in zip(t["ci_low"], t["ci_high"])],
                            "± stderr": pct("stderr")})
        if (t["ties"] > 0).any():
            out["ties"] = t["ties"]
            out["expected (%)"] = pct("expected")
        out["vs best"] = [_versus(r) for r in t.itertuples()]
        if t["paper"].notna().any():
            out["paper"] = t["paper"].fillna("")
        return out if t["model"].nunique() > 1 else out.drop(columns="model")

    def text(self) -> str:
        """The headline as plain text (``make demo``'s output)."""
        return self.shown().to_string(index=False) + "\n" + self.note

    def _repr_markdown_(self) -> str:
        return self.shown().to_markdown(index=False) + "\n\n" + self.note.replace("\n", "  \n")


def _versus(row) -> str:
    if row.method == row.versus or np.isnan(row.p_value):
        return "best" if row.method == row.versus else ""
    p = "p<0.001" if row.p_value < 0.001 else f"p={row.p_value:.2g}"  # a bootstrap's 2,000 resamples resolve no less
    return f"{100 * row.difference:+.1f} [{100 * row.diff_low:+.1f}, {100 * row.diff_high:+.1f}], {p} ({row.test})"


def _paper_numbers(notebook: str, dataset: str, table: pd.DataFrame) -> list[str | None]:
    """Per row of ``table``, the paper's number for its dataset and method: the one for the same model
    where a paper has it, else the dataset's released results' (BLiMP's GPT-2), never another model's
    row of a methods paper."""
    try:
        values = [v for v in paper_check.paper_values(notebook) if v.measure in ACCURACY_MEASURES
                  and set(v.select) == {"dataset", "method"} and v.select["dataset"] == dataset]
    except KeyError:  # a notebook without a paper check
        values = []
    out = []
    for row in table.itertuples():
        mine = [v for v in values if v.select["method"] == row.method]
        same = [v for v in mine if row.model in v.same_models]
        pick = (same or [v for v in mine if not v.same_models] or [None])[0]
        out.append(None if pick is None else f"{100 * pick.value:.1f} ({pick.paper_model}, {pick.paper})")
    return out


def _language_caveats(table: pd.DataFrame, dataset: str, dataset_languages, languages: dict) -> list[str]:
    out = []
    wanted = sorted(set(dataset_languages))
    for model in table["model"].unique():
        known = tuple(languages.get(model) or ())
        missing = [lang for lang in wanted if lang not in known]
        if known and missing:
            out.append(f"{model} is not trained on {', '.join(missing)}: it was trained on {', '.join(known)} text, "
                       f"so its accuracy on {dataset} is no judgement of its grammar there; it can still be far from "
                       "50%, because sentence length and shared words decide many pairs (see the length note)")
    return out


def of(scores: pd.DataFrame, notebook: str, dataset: str, *, languages: dict | None = None,
       dataset_languages=None, seed: int = 0) -> Headline:
    """The headline of ``scores`` (one dataset's rows of one or more models) for ``notebook``;
    ``languages``: each model's training languages (default: its registry entry's; a model the
    registry does not list: unknown, not said),
    ``dataset_languages``: the selection's (default: the scores' ``language`` column, else the
    dataset's registered language)."""
    table = stats.accuracy_table(scores, seed=seed)
    if table.empty:
        return Headline(table, ["no score of any method: nothing to report"])
    table["paper"] = _paper_numbers(notebook, dataset, table)
    if dataset_languages is None:
        dataset_languages = (scores["language"].dropna().astype(str).unique() if "language" in scores
                             else [DATASETS[dataset].language] if dataset in DATASETS else [])
    if languages is None:
        languages = {m: REGISTRY[m].languages for m in table["model"].unique() if m in REGISTRY}
    caveats = _language_caveats(table, dataset, dataset_languages, languages)
    identical, pairs = stats.identical_pairs(scores), int(table["pairs"].max())
    if identical:
        caveats.append(f"{identical} of {pairs} pairs are identical: their two sentences are the same string, so "
                       "every method ties on them (the expected accuracy counts each tie half); "
                       "drop_identical=True leaves them out")
    shares = stats.length_shares(scores)
    if stats.length_skewed(shares):
        caveats.append(f"length confound: the grammatical sentence has fewer tokens in {100 * shares['shorter']:.0f}% "
                       f"of pairs and more in {100 * shares['longer']:.0f}%, so methods that sum log-probabilities "
                       "(LP) partly measure length; notebooks/05_length_bias.ipynb reads accuracy with length matched")
    widest = float((table["ci_high"] - table["ci_low"]).max()) / 2
    note = (f"95% intervals: {WHICH}; with {pairs:,} pairs they reach ±{100 * widest:.1f} "
            "points, so smaller differences are noise. 'vs best': the difference from the best method on the "
            "same pairs, its paired-bootstrap 95% interval and the paired test's p.")
    if shares is not None and not stats.length_skewed(shares):
        note += (f" Lengths: the grammatical sentence is shorter in {100 * shares['shorter']:.0f}% of pairs, "
                 f"longer in {100 * shares['longer']:.0f}%.")
    return Headline(table, caveats, note)


WHICH = "Wilson's binomial interval where each pair is one decision; a bootstrap over pairs where a method " \
        "averages templates or A/B orders"


@dataclass
class Headlines:
    """One :class:`Headline` per dataset (07 reads several), shown one after another; ``table`` and
    ``note`` are theirs together, the table with a ``dataset`` column."""

    each: dict[str, Headline]

    @property
    def table(self) -> pd.DataFrame:
        frames = [h.table.assign(dataset=name) for name, h in self.each.items() if not h.table.empty]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def note(self) -> str:
        return "\n".join(f"{name}:\n{h.note}" for name, h in self.each.items())

    def title(self, text: str) -> str:
        """``text`` with every dataset's caveats' short forms, each once."""
        short = dict.fromkeys(c.split(":")[0] for h in self.each.values() for c in h.caveats)
        return text if not short else f"{text}\n({'; '.join(short)})"

    def _repr_markdown_(self) -> str:
        return "\n\n".join(f"**{name}**\n\n{h._repr_markdown_()}" for name, h in self.each.items())


def of_each(scores: pd.DataFrame, notebook: str, *, seed: int = 0) -> Headlines:
    """The headline of each dataset of ``scores`` (pair decisions of one or more models), in the
    order the datasets come (:func:`of` each)."""
    return Headlines({str(name): of(part, notebook, str(name), seed=seed)
                      for name, part in scores.groupby("dataset", sort=False, observed=True)})
