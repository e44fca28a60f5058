"""SyntaxGym region scoring (Hu et al. 2020; Gauthier et al. 2020) as methods.

An item of ``syntaxgym_items`` has conditions made of numbered regions and its suite's
prediction formulas. Each condition is one request: the priming context (if any) and, as the
target, the space after it and the condition's sentence as SyntaxGym joins it (non-empty
regions, one space apart). A region's surprisal is the sum of ``-log2 p`` over the tokens mapped to it by
character offsets: a token belongs to the region of its first non-space character, a
whitespace-only token to the region after it, so a word's leading space counts with the word
as in SyntaxGym's aligner; an empty region has surprisal 0. Units are bits (SyntaxGym's; all 34
suites use the metric "sum"). An item passes when every prediction of its suite that states a
direction holds (``pass_context.syntaxgym_pass``: "directional", the reading of Hu et al. 2020's
released results, or "strict": every prediction, ``=`` ones too, which fgd_hierarchy's second
prediction makes practically impossible; :mod:`.syntaxgym_pass`). ``=`` holds within
SyntaxGym's tolerance (:mod:`helpers.data.syntaxgym_formulas`).

- ``syntaxgym``: the plain sum over a region's tokens, as the papers computed it.
- ``syntaxgym_word``: the corrected region surprisal of Pimentel & Meister (2024) and Oh &
  Schuler (2024) for tokenizers that mark word beginnings (:mod:`.word_boundary`): a region
  gains the probability that a word starts after it and loses the one that a word started
  where it begins, both read in the scoring pass itself (``word_boundary`` requests). For
  other tokenizers it equals the plain sum (column ``word_boundary``: "bow" or "none").

Score files hold ``score`` (1.0 pass, 0.0 fail), ``prediction_<i>`` per formula (1.0 holds, 0.0
not; NaN past the suite's count), ``counted_predictions`` (the numbers of those that decide the
pass, e.g. "1"; the configuration records ``syntaxgym_pass``), ``region_surprisal`` (JSON
{condition: {region: bits}}, enough to recompute every verdict) and ``sentences`` (JSON
{condition: text}).
"""
from __future__ import annotations

import json
import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..data.syntaxgym import join_regions
from ..data.syntaxgym_formulas import Prediction, parse
from .prompt_text import with_context
from ..engine.interface import Request, Scored
from .base import Family, Method
from .syntaxgym_pass import counted, item_passes
from .word_boundary import corrected_spans

LN2 = math.log(2.0)


def token_regions(sentence: str, spans: list, offsets, shift: int) -> tuple[list[int], int]:
    """The region index of each token (offsets in context+sentence, the sentence starting at
    ``shift``), and how many tokens cover characters of more than one region."""
    owner = np.full(len(sentence), -1)
    for r, span in enumerate(spans):
        if span is not None:
            owner[span[0]:span[1]] = r
    out, across = [], 0
    for start, end in offsets:
        inside = owner[max(start - shift, 0):max(end - shift, 0)]
        regions = inside[inside >= 0]
        out.append(int(regions[0]) if len(regions) else -1)
        across += len(set(regions.tolist())) > 1
    following = next((r for r in range(len(spans) - 1, -1, -1) if spans[r] is not None), -1)
    for t in range(len(out) - 1, -1, -1):  # whitespace-only tokens go with the region after them
        following = out[t] = out[t] if out[t] >= 0 else following
    return out, across


def _request(head: str, sentence: str, word_boundary: bool = False) -> Request:
    """The context, and the space after it with the sentence: a whitespace token before the
    sentence's first word is scored with that word (as every later word's leading space is)."""
    context = head.rstrip()
    return Request(context, head[len(context):] + sentence, word_boundary=word_boundary)


def _item_conditions(item) -> list[dict]:
    if "conditions" not in item:
        raise KeyError("the syntaxgym methods score SyntaxGym suite items (select the dataset 'syntaxgym_items'); "
                       f"this item has columns {sorted(item)}")
    if str(item.get("metric", "sum")) != "sum":
        raise ValueError(f"suite {item.get('suite')!r} uses the metric {item['metric']!r}; only 'sum' is implemented")
    return json.loads(item["conditions"])


class SyntaxGymFamily(Family):
    """Region surprisals of every condition of an item, and its suite's predictions."""

    template_set = None
    takes = ("syntaxgym_pass",)

    def __init__(self, name: str, corrected: bool):
        self.name, self.corrected = name, corrected

    def score_sides(self, sides):
        return ("item",)

    def requests(self, item, template, context, pass_context, state):
        head = with_context(context, "", pass_context.language)
        boundary = self.corrected and "token_mass" in pass_context.scorer.features  # its tokenizer marks word beginnings
        return [_request(head, join_regions([c for _, c in cond["regions"]])[0], boundary)
                for cond in _item_conditions(item)]

    def table(self, items, template, contexts, scored, pass_context, states):
        plans = [[_Condition.build(cond, s, with_context(context, "", pass_context.language))
                  for cond, s in zip(_item_conditions(item), results)]
                 for item, context, results in zip(items, contexts, scored)]
        parsed: dict[str, Prediction] = {}
        rows = []
        for item, plan, results in zip(items, plans, scored):
            plain, corrected = {}, {}
            for c, s in zip(plan, results):
                bits = -np.asarray(s.logprobs, dtype=np.float64) / LN2
                regions = [c.tokens_of(r) for r in range(len(c.cond["regions"]))]
                word = -corrected_spans(s, regions) / LN2 if s.boundary_logmass is not None else None
                for r, ((number, _), idx) in enumerate(zip(c.cond["regions"], regions)):
                    key = (c.cond["condition"], int(number))
                    plain[key] = float(bits[idx].sum()) if idx else 0.0
                    corrected[key] = float(word[r]) if word is not None else plain[key]
            surprisal = corrected if self.corrected else plain
            predictions = [parsed.setdefault(f, parse(f)) for f in json.loads(item["predictions"])]
            verdicts = [p.holds(surprisal) for p in predictions]
            decisive = counted(predictions, pass_context.syntaxgym_pass)
            row = {"pass": item_passes(verdicts, decisive), "n_predictions": len(verdicts),
                   "counted_predictions": ",".join(str(i + 1) for i in decisive),
                   **{f"prediction_{i + 1}": float(v) for i, v in enumerate(verdicts)},
                   "region_surprisal": _as_json(surprisal),
                   "sentences": json.dumps({c.cond["condition"]: c.sentence for c in plan}),
                   "n_tokens": int(sum(r.n_tokens for r in results)),
                   "tokens_across_regions": int(sum(c.across for c in plan))}
            if self.corrected:
                scheme = "bow" if all(s.boundary_logmass is not None for s in results) else "none"
                row.update(region_surprisal_plain=_as_json(plain), word_boundary=scheme)
            rows.append(row)
        table = pd.DataFrame(rows)
        width = max(r["n_predictions"] for r in rows)
        return table.reindex(columns=[*[c for c in table.columns if not c.startswith("prediction_")],
                                      *[f"prediction_{i + 1}" for i in range(width)]])


class _Condition(NamedTuple):
    """One condition of an item as scored: its sentence, region spans and token owners."""

    cond: dict
    sentence: str
    spans: list
    owner: list[int]  # region index of each target token
    across: int  # tokens covering more than one region
    head: str  # the context and its separator

    @classmethod
    def build(cls, cond: dict, scored: Scored, head: str) -> _Condition:
        sentence, spans = join_regions([c for _, c in cond["regions"]])
        owner, across = token_regions(sentence, spans, scored.offsets, len(head))
        return cls(cond, sentence, spans, owner, across, head)

    def tokens_of(self, region: int) -> list[int]:
        return [t for t, o in enumerate(self.owner) if o == region]


def _as_json(surprisal: dict) -> str:
    nested: dict[str, dict[str, float]] = {}
    for (cond, region), value in surprisal.items():
        nested.setdefault(cond, {})[str(region)] = value
    return json.dumps(nested)


def _passed(table: pd.DataFrame, side: str) -> pd.Series:
    return table["pass"].astype(float)


PLAIN, WORD = SyntaxGymFamily("syntaxgym", corrected=False), SyntaxGymFamily("syntaxgym_word", corrected=True)
_COMMON = {"unit": "bits", "metric": "sum", "token_to_region": "first non-space character (leading space with the word)",
           "equality": "|a-b| <= 1e-3 + 1e-5|b| (SyntaxGym)"}
SYNTAXGYM = [
    Method("syntaxgym", PLAIN, "SyntaxGym: an item passes when its suite's predictions hold (those with < or > by "
           "default; option syntaxgym_pass) (region surprisal = sum of its tokens' surprisals, in bits)", _passed,
           options={**_COMMON, "surprisal": "plain"}, needs=("continuation",)),
    Method("syntaxgym_word", WORD, "SyntaxGym with corrected region surprisal (word-boundary probability moved "
           "to the word it ends; Pimentel & Meister 2024, Oh & Schuler 2024)", _passed,
           options={**_COMMON, "surprisal": "word", "correction": "bow: + log B(end) - log B(start); "
                    "B = mass of word-initial tokens (and eos after the text); B = 1 at the text start"},
           needs=("continuation", "token_mass")),
]
