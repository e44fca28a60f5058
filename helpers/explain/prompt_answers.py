"""What models answer when asked about one pair: Yes/No for each sentence ("Is this sentence
acceptable?") and A/B for the two side by side, each model's prompts as it reads them (chat
templates for instruct models), next to the sentence probabilities (LP)."""
from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from .pair import judge
from .scorers import Scorers


def prompt_answers(models: Sequence[str], good: str, bad: str, template: int = 1,
                   scorers: Scorers | None = None) -> pd.DataFrame:
    """One row per model and question: its answer to the acceptable and to the unacceptable
    sentence, and whether it prefers the acceptable one. Yes/No gives P(Yes) / (P(Yes) + P(No)) per
    sentence; A/B (one prompt, the acceptable sentence in the seeded slot, decided by the letters'
    log-probs) the probability of each sentence's letter; LP the log-probs in nats."""
    scorers = scorers or Scorers()
    rows = []
    for name in models:
        frame, _ = judge(scorers.get(name), [{"good": good, "bad": bad}], ("lp", "yesno", "ab_logit"), template,
                         instruct=scorers.instruct)
        for r in frame.itertuples():
            rows.append({"model": name, "question": QUESTIONS[r.method],
                         "acceptable sentence": _shown(r.method, r.score_good),
                         "unacceptable sentence": _shown(r.method, r.score_bad),
                         "prefers the acceptable one": "tie" if r.tie else ("yes" if r.correct else "no")})
    return pd.DataFrame(rows)


QUESTIONS = {"lp": "LP (log-prob, nats)", "yesno": "Yes/No: P(Yes)", "ab_logit": "A/B: P(its letter)"}


def _shown(method: str, score: float) -> str:
    if method == "lp":
        return f"{score:.2f}"
    if method == "yesno":
        return f"{score:.3f} ({'Yes' if score > 0.5 else 'No'})"
    return f"{math.exp(score):.3g}"
