"""03's check of the A/B decisions against outlines itself: a seeded sample of stored prompts
decoded with constrained decoding (:meth:`helpers.engine.interface.Scorer.decode`, which the
causal scorer runs with outlines), beside the answers the scores hold."""
from __future__ import annotations


def decoded_sample(scorer, ab_rows, per_template: int, seed: int = 0):
    """outlines' constrained answer to a seeded sample of ``per_template`` stored A/B prompts of
    each template (``ab_rows``: method 'ab' rows of one model's scores, with their ``prompt``),
    beside what the scores hold for the same prompts: ``answer_ab`` ('ab': outlines, or under
    "auto" the letters' logits where they give outlines' answer) and ``answer_ab_logit`` (the
    logits compared, a tie kept): 03's check that the two paths agree, run on both."""
    import numpy as np
    import pandas as pd

    from . import answers as letters

    picked = []
    for _, rows in ab_rows.groupby("template", sort=False):
        take = min(per_template, len(rows))
        picked.append(rows.iloc[np.sort(np.random.default_rng(seed).choice(len(rows), take, replace=False))])
    sample = pd.concat(picked) if picked else ab_rows.iloc[:0]
    decoded = scorer.decode(list(sample["prompt"]), letters.AB) if len(sample) else []
    return sample[["model", "template", "paradigm", "pair_id"]].assign(  # "answer": the logits compared, when scored
        answer_outlines=decoded, answer_ab=sample["answer_outlines"].to_numpy(), answer_ab_logit=sample["answer"].to_numpy())
