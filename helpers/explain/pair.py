"""One minimal pair explained, for teaching (notebook 00_quickstart).

:func:`explain_pair` scores both sentences once and returns their per-token and per-word
surprisal (words found from the tokens' character offsets; the words that differ between
the sentences marked; each word's surprisal also corrected for word boundaries, Pimentel &
Meister 2024, from the word-level LP's pass: :mod:`.word_surprisal`), the sums, and the
decision of LP, MeanLP, PenLP, in-template LP and Yes/No, each computed by the registered method (:mod:`helpers.methods`) exactly as the runner
computes it. :func:`browse_paradigm` judges a few pairs of a BLiMP or CLiMP paradigm and
explains the hardest one. A wrong input (an empty sentence, one longer than the model's
context, an unknown model) raises :class:`ExplainError`, whose message says what to do.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import methods as registry
from ..data.selection import select
from ..engine.interface import Request, Scorer, adds_start_token
from ..settings import Settings
from ..runner import decide
from .scorers import ExplainError
from .word_surprisal import corrected_by_word
from .words import align_words, group_tokens, language_of

DECISION_METHODS = ("lp", "meanlp", "penlp", "intemplate_lp", "yesno")
BROWSER_DATASETS = ("blimp", "climp")
LN2 = math.log(2)


@dataclass
class PairExplanation:
    """Everything the quickstart shows about one pair (surprisal in bits, log-probs in nats)."""

    good: str
    bad: str
    model: str
    template: int
    tokens: pd.DataFrame  # side, position, token, text, start, end, word, logprob, surprisal, differs
    # side, word, text, start, end, n_tokens, logprob, surprisal, corrected_logprob, corrected_surprisal, differs
    words: pd.DataFrame
    columns: pd.DataFrame  # the aligned words: good/bad word index, text, surprisal, corrected surprisal, differs
    sums: pd.DataFrame  # per side: LP (nats), surprisal (bits), tokens, words, word_lp (corrected words' sum, nats)
    decisions: pd.DataFrame  # method, description, score_good, score_bad, correct, tie
    notes: list[str]

    @property
    def language(self) -> str:
        """"zh" for a pair with Chinese characters, else "en"."""
        return language_of(self.good + self.bad)

    def decision(self, method: str) -> str:
        """"acceptable", "unacceptable" or "tie": the sentence ``method`` prefers."""
        row = self.decisions.set_index("method").loc[method]
        return "tie" if row.tie else ("acceptable" if row.correct else "unacceptable")


# ------------------------------------------------------------------ inputs
def check_sentence(text, what: str) -> str:
    """``text`` stripped of surrounding spaces; an ExplainError when it is not a sentence."""
    if not isinstance(text, str):
        raise ExplainError(f"The {what} sentence must be text, not {type(text).__name__}. Type a sentence.")
    text = text.strip()
    if not text:
        raise ExplainError(f"The {what} sentence is empty. Type a sentence in the '{what}' box.")
    return text


def _check_length(scorer: Scorer, text: str, what: str) -> None:
    limit = scorer.max_positions
    if not limit:
        return
    n = len(scorer.tokenizer(text, add_special_tokens=False)["input_ids"]) + adds_start_token(scorer.record())
    if n > limit:
        raise ExplainError(f"The {what} sentence is {n:,} tokens long, but {scorer.name} reads at most "
                           f"{limit:,} tokens (its context). Shorten the sentence.")


# ------------------------------------------------------------------ judging
def judge(scorer: Scorer, items: list[dict], methods=DECISION_METHODS, template: int = 1,
          language: str | None = None, instruct: bool | None = None) -> tuple[pd.DataFrame, dict]:
    """Every method's decision on every pair of ``items`` (dicts with "good" and "bad"), through the
    runner's door without writing files (:func:`helpers.runner.decide`: each family's pass and each
    method's rows as a score file holds them), template ``template`` for templated and prompt
    methods. Returns rows (item, method, description, score_good, score_bad, correct, tie) and the
    scored results per family name (for the token view). ``instruct``: prompts in the chat
    template (None: the model's own, LoadedModel.is_instruct)."""
    language = language or language_of(items[0]["good"])
    settings = Settings(instruct=instruct, use_outlines=False, progress=False, templates=(template,))
    try:
        rows, scored = decide(scorer, items, list(methods), settings, language=language)
    except ValueError as err:
        raise ExplainError(f"{', '.join(methods)} cannot score this pair with {scorer.name}: {err}") from None
    missing = [m for m in methods if m not in set(rows.method)]
    if missing:
        raise ExplainError(f"{', '.join(missing)}: there is no template {template} for language {language!r}; "
                           "choose a template from 1 to 5")
    order = {m: k for k, m in enumerate(methods)}
    frame = rows.assign(description=rows.method.map(lambda m: registry.get(m).description), order=rows.method.map(order))
    frame = frame.sort_values(["item", "order"], kind="stable").reset_index(drop=True)
    return frame[["item", "method", "description", "score_good", "score_bad", "correct", "tie"]], \
        {family: found for (family, _), found in scored.items()}


# ------------------------------------------------------------------ one pair
def _word_pass(scorer: Scorer, good: str, bad: str) -> tuple[list | None, str | None]:
    """Both sentences scored with their word-boundary masses (the word-level LP's pass), or None
    and why not (a scorer or tokenizer without them)."""
    try:
        return scorer.score([Request("", good, word_boundary=True), Request("", bad, word_boundary=True)]), None
    except ValueError as err:
        return None, f"Per-word surprisal is not corrected for word boundaries: {err}"


def _side_tables(side: str, text: str, scored, word_scored=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    words, of_token = group_tokens(text, scored.offsets)
    lp = np.asarray(scored.logprobs, dtype=np.float64)
    tokens = pd.DataFrame({
        "side": side, "position": range(len(lp)), "token": scored.tokens, "token_id": scored.token_ids,
        "text": [text[s:e] for s, e in scored.offsets], "start": [s for s, _ in scored.offsets],
        "end": [e for _, e in scored.offsets], "word": of_token, "logprob": lp, "surprisal": -lp / LN2})
    per_word = tokens.groupby("word").agg(n_tokens=("logprob", "size"), logprob=("logprob", "sum"))
    word_frame = pd.DataFrame({"side": side, "word": range(len(words)), "text": [text[s:e] for s, e in words],
                               "start": [s for s, _ in words], "end": [e for _, e in words]})
    word_frame = word_frame.join(per_word, on="word")
    word_frame["surprisal"] = -word_frame.logprob / LN2
    corrected = np.full(len(words), np.nan)
    if word_scored is not None:  # the same text and tokenizer: the same tokens and words
        corrected = corrected_by_word(word_scored, group_tokens(text, word_scored.offsets)[1], len(words))
    word_frame["corrected_logprob"] = corrected
    word_frame["corrected_surprisal"] = -corrected / LN2
    return tokens, word_frame


def explain_pair(scorer: Scorer, good, bad, methods=DECISION_METHODS, template: int = 1,
                 instruct: bool | None = None) -> PairExplanation:
    """Per-token and per-word surprisal of both sentences, their sums, and each method's decision.

    The token view comes from the LP pass (each sentence alone after the document-start token,
    as ``python -m helpers score`` scores it); the corrected word surprisal from the word-level
    LP's pass (``score --words``), where the scorer offers it (else NaN, and a note)."""
    good, bad = check_sentence(good, "acceptable"), check_sentence(bad, "unacceptable")
    if good == bad:
        raise ExplainError("The two sentences are the same. A minimal pair differs in a word or two: "
                           "change one of them.")
    for text, what in ((good, "acceptable"), (bad, "unacceptable")):
        _check_length(scorer, text, what)
    methods = list(dict.fromkeys(["lp", *methods]))  # the LP pass gives the token view
    decisions, scored = judge(scorer, [{"good": good, "bad": bad}], methods, template, instruct=instruct)
    (sg, sb), = scored["sentence"]
    word_scored, why_not = _word_pass(scorer, good, bad)
    wsg, wsb = word_scored or (None, None)
    tg, wg = _side_tables("good", good, sg, wsg)
    tb, wb = _side_tables("bad", bad, sb, wsb)
    columns = align_words(wg.text.tolist(), wb.text.tolist())
    wg["differs"] = wg.word.isin({g for g, _, d in columns if d and g is not None})
    wb["differs"] = wb.word.isin({b for _, b, d in columns if d and b is not None})
    tg["differs"] = tg.word.map(wg.set_index("word").differs)
    tb["differs"] = tb.word.map(wb.set_index("word").differs)
    aligned = pd.DataFrame(
        [{"good_word": g, "bad_word": b, "good_text": wg.text[g] if g is not None else "",
          "bad_text": wb.text[b] if b is not None else "",
          "good_surprisal": wg.surprisal[g] if g is not None else np.nan,
          "bad_surprisal": wb.surprisal[b] if b is not None else np.nan,
          "good_corrected": wg.corrected_surprisal[g] if g is not None else np.nan,
          "bad_corrected": wb.corrected_surprisal[b] if b is not None else np.nan, "differs": d}
         for g, b, d in columns])
    sums = pd.DataFrame([{"side": side, "sentence": text, "lp": float(t.logprob.sum()),
                          "surprisal": float(t.surprisal.sum()), "tokens": len(t), "words": len(w),
                          "word_lp": float(w.corrected_logprob.sum(min_count=len(w)))}
                         for side, text, t, w in (("good", good, tg, wg), ("bad", bad, tb, wb))])
    notes = [why_not] if why_not else []
    if scorer.languages and language_of(good + bad) not in scorer.languages:
        notes.append(f"{scorer.name} was trained on {', '.join(scorer.languages)} text; these sentences look "
                     f"{'Chinese' if language_of(good + bad) == 'zh' else 'English'}.")
    return PairExplanation(good, bad, scorer.name, template, pd.concat([tg, tb], ignore_index=True),
                           pd.concat([wg, wb], ignore_index=True), aligned, sums,
                           decisions.drop(columns="item"), notes)


def decision_table(ex: PairExplanation) -> pd.DataFrame:
    """The decisions as a reader sees them: which sentence each method prefers."""
    verdict = np.where(ex.decisions.tie, "tie (counts as wrong)",
                       np.where(ex.decisions.correct, "acceptable ✓", "unacceptable ✗"))
    return pd.DataFrame({"method": ex.decisions.method, "score (acceptable)": ex.decisions.score_good,
                         "score (unacceptable)": ex.decisions.score_bad, "prefers": verdict,
                         "how it scores": ex.decisions.description})


# ------------------------------------------------------------------ a paradigm
@dataclass
class ParadigmView:
    dataset: str
    paradigm: str
    method: str
    pairs: pd.DataFrame  # good, bad, score_good, score_bad, margin, correct
    accuracy: float
    hardest: PairExplanation


def paradigms(dataset: str) -> pd.DataFrame:
    """The paradigms of a browser dataset (blimp or climp): paradigm, phenomenon, pairs."""
    if dataset not in BROWSER_DATASETS:
        raise ExplainError(f"The paradigm browser shows {' or '.join(BROWSER_DATASETS)}, not {dataset!r}.")
    frame = select(dataset).frame
    return (frame.groupby("paradigm", sort=False).agg(phenomenon=("phenomenon", "first"), pairs=("good", "size"))
            .reset_index())


def browse_paradigm(scorer: Scorer, dataset: str, paradigm: str | None = None, n: int = 10,
                    method: str = "lp", template: int = 1, instruct: bool | None = None) -> ParadigmView:
    """The first ``n`` pairs of ``paradigm`` (None: the dataset's first), judged by ``method``;
    the hardest pair (the lowest score margin of acceptable over unacceptable) explained."""
    names = paradigms(dataset).paradigm.tolist()
    paradigm = paradigm or names[0]
    if paradigm not in names:
        close = difflib.get_close_matches(paradigm, names, n=3, cutoff=0.4)
        raise ExplainError(f"{dataset} has no paradigm {paradigm!r}." +
                           (f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ExplainError(f"Choose a positive number of pairs, not {n!r}.")
    frame = select(dataset, int(n)).frame
    frame = frame[frame.paradigm == paradigm].reset_index(drop=True)
    items = frame[["good", "bad"]].to_dict("records")
    judged, _ = judge(scorer, items, [method], template, language=str(frame.language.iloc[0]), instruct=instruct)
    pairs = frame[["pair_id", "good", "bad"]].assign(
        score_good=judged.score_good.to_numpy(), score_bad=judged.score_bad.to_numpy(),
        correct=judged.correct.to_numpy() & ~judged.tie.to_numpy())
    pairs["margin"] = pairs.score_good - pairs.score_bad
    hardest = int(pairs.margin.to_numpy().argmin())
    ex = explain_pair(scorer, pairs.good[hardest], pairs.bad[hardest], methods=DECISION_METHODS, template=template,
                      instruct=instruct)
    return ParadigmView(dataset, paradigm, method, pairs, float(pairs.correct.mean()), ex)
