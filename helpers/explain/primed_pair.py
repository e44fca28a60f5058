"""One minimal pair judged without and with a priming prefix (Sinha et al. 2023), for 00's
teaching section: the prefix is the one 06 draws for that pair (same seed, same growth), and LP
is read as 06 reads it (the prefix, a space, the sentence; the prefix's own tokens not counted).

    shown = primed_pair(scorer, "blimp", "anaphor_gender_agreement", 3)
    shown.table        # no prefix / primed: LP of each sentence, margin, preferred sentence
    shown.flipped      # True when the prefix changes which sentence LP prefers
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd

from .. import data
from ..data import priming
from ..engine.interface import Scorer
from ..runner import decide


@dataclass(frozen=True)
class PrimedPair:
    """A pair, its prefix and the LP table of both conditions."""

    dataset: str
    paradigm: str
    pair_id: int
    good: str
    bad: str
    prefix_type: str
    prefix: str
    prefix_tokens: int
    prefix_sentences: int
    table: pd.DataFrame  # condition, lp_good, lp_bad, margin, prefers

    @property
    def flipped(self) -> bool:
        return bool(self.table["prefers"].nunique() > 1)


def _pair(dataset: str, paradigm: str, pair_id: int) -> pd.Series:
    pairs = data.load_processed(dataset)
    row = pairs[(pairs["paradigm"].astype(str) == paradigm) & (pairs["pair_id"] == pair_id)]
    if row.empty:
        known = pairs["paradigm"].astype(str)
        hint = (f"{paradigm} has pair ids {int(pairs[known == paradigm].pair_id.min())} to "
                f"{int(pairs[known == paradigm].pair_id.max())}" if (known == paradigm).any()
                else f"{paradigm!r} is not a paradigm of {dataset}")
        raise ValueError(f"no pair {pair_id} of {paradigm} in {dataset}: {hint}")
    return row.iloc[0]


def primed_pair(scorer: Scorer, dataset: str, paradigm: str, pair_id: int, prefix_type: str = "in_unacceptable",
                length: int = 800, seed: int = 0) -> PrimedPair:
    """Pair ``pair_id`` of ``paradigm`` scored alone and after its ``prefix_type`` prefix of
    ``length`` model tokens (06's draw with ``seed``)."""
    if prefix_type not in priming.PREFIX_TYPES:
        raise ValueError(f"prefix_type must be one of {', '.join(priming.PREFIX_TYPES)}, got {prefix_type!r}")
    row = _pair(dataset, paradigm, pair_id)
    target = pd.DataFrame([row])
    prefixes = priming.build_prefixes(target, priming.token_counter(scorer.tokenizer),
                                      pool=data.load_processed(dataset), prefix_types=[prefix_type], lengths=[length],
                                      seed=seed, max_positions=scorer.max_positions)
    chosen = prefixes.iloc[0]
    language = data.DATASETS[dataset].language
    rows = []
    for condition, context in (("no prefix", ""), (f"after {chosen.actual_length} tokens of {prefix_type}",
                                                     chosen.prefix)):
        # LP's own decision, through the runner's door (as 06 scores the pair under its prefix)
        lp = decide(scorer, [{"good": row["good"], "bad": row["bad"]}], ["lp"], language=language,
                    contexts=[context])[0].iloc[0]
        rows.append({"condition": condition, "lp_good": lp.score_good, "lp_bad": lp.score_bad,
                     "margin": lp.score_good - lp.score_bad,
                     "prefers": "tie" if lp.tie else "acceptable" if lp.correct else "unacceptable"})
    return PrimedPair(dataset, paradigm, int(pair_id), str(row["good"]), str(row["bad"]), prefix_type,
                      str(chosen.prefix), int(chosen.actual_length), int(chosen.n_sentences), pd.DataFrame(rows))


def margin_figure(shown: PrimedPair, model: str):
    """The LP margin (acceptable minus unacceptable) in both conditions, as two bars."""
    fig, ax = plt.subplots(figsize=(6.4, 2.0))
    margins = shown.table["margin"]
    colors = ["#2b7a3d" if m > 0 else "#b42318" for m in margins]
    ax.barh(range(len(margins)), margins, color=colors)
    ax.set_yticks(range(len(margins)), shown.table["condition"])
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("LP(acceptable) - LP(unacceptable), nats  (> 0: the acceptable sentence is preferred)")
    ax.set_title(f"{model}: {shown.good!r} vs {shown.bad!r}", fontsize=9)
    fig.tight_layout()
    return fig


def show_primed_pair(model: str, dataset: str, paradigm: str, pair_id: int, prefix_type: str = "in_unacceptable",
                     length: int = 800, seed: int = 0, scorers=None) -> PrimedPair | None:
    """00's section: the pair's table and margin figure in both conditions, the prefix's start, and
    one line saying whether the prefix flipped the judgment (a wrong input: a boxed message)."""
    from IPython.display import display

    from .scorers import ExplainError, Scorers
    from .view import figure_image, message

    try:
        scorer = (scorers or Scorers()).get(model)
        shown = primed_pair(scorer, dataset, paradigm, pair_id, prefix_type, length, seed)
    except (ExplainError, ValueError) as err:
        display(message(str(err)))
        return None
    display(figure_image(margin_figure(shown, model)))
    display(shown.table.round(3))
    start = shown.prefix[:240].rsplit(" ", 1)[0]
    print(f"prefix ({shown.prefix_sentences} sentences, {shown.prefix_tokens} tokens): {start} ...")
    verdict = ("the prefix flips the judgment: LP now prefers the unacceptable sentence" if shown.flipped
               and shown.table["prefers"].iloc[-1] == "unacceptable" else
               "the prefix flips the judgment" if shown.flipped else "the prefix does not flip the judgment here")
    display(message(f"{model}: {verdict}.", "note"))
    return shown
