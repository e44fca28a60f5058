"""An independent reference for tests: minicons' own per-token log-probs of whole sentences (its
IncrementalLMScorer: no start token, the first token unscored, as the engine's start="minicons")."""
from __future__ import annotations

import numpy as np


def minicons_logprobs(lm, sentences) -> dict[str, np.ndarray]:
    """sentence -> minicons' log-prob of each of its tokens after the first (float64)."""
    from minicons.scorer import IncrementalLMScorer

    theirs = IncrementalLMScorer(lm.model, device="cpu", tokenizer=lm.tokenizer)
    texts = list(dict.fromkeys(sentences))
    scored = theirs.compute_stats(theirs.prepare_text(texts))
    return {t: np.asarray(s, dtype=np.float64) for t, s in zip(texts, scored)}
