"""Direct probability vs metalinguistic prompts (Hu & Levy 2023).

Four tasks, each with the Direct measurement (log-probs of the string itself) and three
metalinguistic prompts (MetaQuestionSimple, MetaInstruct, MetaQuestionComplex):

- word prediction (exp. 1, P18 and News): log-prob of the true final word;
- word comparison (exp. 2, DTFit): log p(plausible word) - log p(implausible word), with the
  prompt listing both options in both orders;
- sentence judgment (exp. 3a): log p(Yes) - log p(No) for each sentence on its own (balanced
  accuracy), and the minimal-pair accuracy from the Yes log-prob differential;
- sentence comparison (exp. 3b): preference for the acceptable sentence from log p("1") vs
  log p("2"), both orders averaged.

Internal consistency is the Pearson r between the Direct differential and each prompt's
differential, per task.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .prompting import balanced_accuracy
from .scoring import Request, Scorer
from .templates import HL_PROMPTS, hu_levy_prompts

ANSWERS = {"en": ("Yes", "No"), "zh": ("是", "否")}


def prompt(task: str, language: str, name: str) -> str:
    """A Hu & Levy prompt text; a clear error when the paper has none for that language."""
    prompts = hu_levy_prompts()
    if (task, language, name) not in prompts:
        have = sorted({(t, lang) for t, lang, _ in prompts})
        raise KeyError(f"Hu & Levy have no {name} prompt for {task} in {language!r}; available: {have}")
    return prompts[(task, language, name)]


def _split(template: str, **slots) -> tuple[str, str]:
    """Fill every slot but {continuation}; return (text before it, text after it)."""
    filled = template
    for key, value in slots.items():
        filled = filled.replace("{" + key + "}", value)
    before, _, after = filled.partition("{continuation}")
    return before, after


def _score(scorer: Scorer, requests: list[Request], desc: str) -> np.ndarray:
    return np.array([s.total for s in scorer.score(requests, desc=desc)])


def word_prediction(scorer: Scorer, items: pd.DataFrame, language: str = "en") -> pd.DataFrame:
    """Log-prob of the true final word after the prefix, directly and inside each prompt."""
    space = " " if language == "en" else ""
    out = items[["item_id", "prefix", "continuation"]].copy()
    out["direct"] = _score(scorer, [Request(p, space + c) for p, c in zip(items.prefix, items.continuation)], "direct")
    for name in HL_PROMPTS:
        tpl = prompt("word_prediction", language, name)
        reqs = []
        for p, c in zip(items.prefix, items.continuation):
            if "{full_sentence}" in tpl:  # the word ends the prompt, after its prefix
                before = tpl.replace("{full_sentence}", p + space)
                reqs.append(Request(before, c))
            else:
                before, _ = _split(tpl, prefix=p)
                reqs.append(Request(before, c))
        out[name] = _score(scorer, reqs, name)
    return out


def word_comparison(scorer: Scorer, items: pd.DataFrame, language: str = "en") -> pd.DataFrame:
    """log p(plausible) - log p(implausible) after the prefix; prompts list both words, in
    both orders (the two differentials are averaged)."""
    space = " " if language == "en" else ""
    out = items[["item_id", "prefix", "good_continuation", "bad_continuation"]].copy()
    good = [Request(p, space + w) for p, w in zip(items.prefix, items.good_continuation)]
    bad = [Request(p, space + w) for p, w in zip(items.prefix, items.bad_continuation)]
    out["direct"] = _score(scorer, good, "direct") - _score(scorer, bad, "direct")
    for name in HL_PROMPTS:
        tpl = prompt("word_comparison", language, name)
        diffs = []
        for good_first in (True, False):
            reqs_g, reqs_b = [], []
            for p, g, b in zip(items.prefix, items.good_continuation, items.bad_continuation):
                w1, w2 = (g, b) if good_first else (b, g)
                if "{full_sentence}" in tpl:
                    head = tpl.replace("{w1}", w1).replace("{w2}", w2).replace("{full_sentence}", p + space)
                    reqs_g.append(Request(head, g))
                    reqs_b.append(Request(head, b))
                else:
                    before, _ = _split(tpl, prefix=p, w1=w1, w2=w2)
                    reqs_g.append(Request(before, g))
                    reqs_b.append(Request(before, b))
            diffs.append(_score(scorer, reqs_g, name) - _score(scorer, reqs_b, name))
        out[name] = (diffs[0] + diffs[1]) / 2
    return out


def sentence_judgment(scorer: Scorer, pairs: pd.DataFrame, language: str = "en") -> pd.DataFrame:
    """Per pair: Direct LP of each sentence, and per prompt log p(Yes) and log p(No) for each."""
    yes, no = ANSWERS[language]
    out = pairs[["paradigm", "pair_id", "good", "bad"]].copy()
    for side in ("good", "bad"):
        out[f"direct_{side}"] = _score(scorer, [Request("", s) for s in pairs[side]], "direct")
    for name in HL_PROMPTS:
        tpl = prompt("sentence_judgment", language, name)
        for side in ("good", "bad"):
            heads = [_split(tpl, sentence=s)[0] for s in pairs[side]]
            readouts = scorer.next_token(heads, [yes, no], desc=name)
            out[f"{name}_yes_{side}"] = [r.logprobs[yes] for r in readouts]
            out[f"{name}_no_{side}"] = [r.logprobs[no] for r in readouts]
    return out


def sentence_comparison(scorer: Scorer, pairs: pd.DataFrame, language: str = "en") -> pd.DataFrame:
    """Per pair: Direct LP differential, and per prompt the preference for the acceptable
    sentence, log p(its number) - log p(the other number), averaged over both orders."""
    out = pairs[["paradigm", "pair_id", "good", "bad"]].copy()
    good = _score(scorer, [Request("", s) for s in pairs.good], "direct")
    bad = _score(scorer, [Request("", s) for s in pairs.bad], "direct")
    out["direct"] = good - bad
    for name in HL_PROMPTS:
        tpl = prompt("sentence_comparison", language, name)
        prefs = []
        for good_first in (True, False):
            heads = []
            for g, b in zip(pairs.good, pairs.bad):
                s1, s2 = (g, b) if good_first else (b, g)
                heads.append(_split(tpl, s1=s1, s2=s2)[0])
            readouts = scorer.next_token(heads, ["1", "2"], desc=name)
            lp1, lp2 = np.array([r.logprobs["1"] for r in readouts]), np.array([r.logprobs["2"] for r in readouts])
            prefs.append(lp1 - lp2 if good_first else lp2 - lp1)
        out[f"{name}_good_first"], out[f"{name}_bad_first"] = prefs
        out[name] = (prefs[0] + prefs[1]) / 2
    return out


def _r(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(stats.pearsonr(x, y)[0])


def summarize(task: str, table: pd.DataFrame) -> pd.DataFrame:
    """Per prompt (Direct first): the task's accuracy measure and internal consistency."""
    rows = []
    if task == "word_prediction":
        for name in ["direct", *HL_PROMPTS]:
            rows.append({"prompt": name, "mean_logprob": table[name].mean(),
                         "consistency_r": 1.0 if name == "direct" else _r(table["direct"], table[name])})
    elif task in ("word_comparison", "sentence_comparison"):
        for name in ["direct", *HL_PROMPTS]:
            rows.append({"prompt": name, "accuracy": (table[name] > 0).mean(),
                         "consistency_r": 1.0 if name == "direct" else _r(table["direct"], table[name])})
    elif task == "sentence_judgment":
        direct = table["direct_good"] - table["direct_bad"]
        rows.append({"prompt": "direct", "balanced_accuracy": float("nan"),
                     "pair_accuracy": (direct > 0).mean(), "consistency_r": 1.0})
        for name in HL_PROMPTS:
            labels = [True] * len(table) + [False] * len(table)
            said_yes = list(table[f"{name}_yes_good"] > table[f"{name}_no_good"]) + \
                list(table[f"{name}_yes_bad"] > table[f"{name}_no_bad"])
            diff = table[f"{name}_yes_good"] - table[f"{name}_yes_bad"]
            rows.append({"prompt": name, "balanced_accuracy": balanced_accuracy(labels, said_yes),
                         "pair_accuracy": (diff > 0).mean(), "consistency_r": _r(direct, diff)})
    else:
        raise ValueError(f"unknown task {task!r}")
    return pd.DataFrame(rows).assign(task=task)


TASKS = {  # stimulus set -> (task, language)
    "hl_p18": ("word_prediction", "en"), "hl_news": ("word_prediction", "en"), "hl_dtfit": ("word_comparison", "en"),
    "hl_blimp": ("sentence_judgment+sentence_comparison", "en"),
    "hl_syntaxgym": ("sentence_judgment+sentence_comparison", "en"),
    "hl_mandarin": ("sentence_judgment+sentence_comparison", "zh"),
}
RUNNERS = {"word_prediction": word_prediction, "word_comparison": word_comparison,
           "sentence_judgment": sentence_judgment, "sentence_comparison": sentence_comparison}


def run_experiments(scorer: Scorer, sets, limit: int | None = None) -> tuple[dict, pd.DataFrame]:
    """Run every task of each stimulus set; returns ({(set, task): item table}, summary)."""
    from . import data

    items, summaries = {}, []
    for name in sets:
        if name not in TASKS:
            raise KeyError(f"unknown Hu & Levy stimulus set {name!r}; choose from {sorted(TASKS)}")
        tasks, language = TASKS[name]
        stimuli = data.load(name)
        stimuli = stimuli if limit is None else stimuli.head(int(limit))
        for task in tasks.split("+"):
            table = RUNNERS[task](scorer, stimuli, language)
            items[(name, task)] = table
            summaries.append(summarize(task, table).assign(stimuli=name, items=len(table)))
    return items, pd.concat(summaries, ignore_index=True)
