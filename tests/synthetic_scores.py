"""A small results store of made-up decisions, written through ScoreStore as the scoring
notebooks write it, for the analysis tests and the 04/05 notebook runs."""
from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.store import ScoreStore

# paradigm -> (phenomenon, word_shuffle, attractor, human agreement)
PARADIGMS = {
    "p_shuffle": ("island_effects", True, None, 0.9),
    "p_plain": ("island_effects", False, None, 0.8),
    "distractor_agreement_relational_noun": ("subject_verb_agreement", False, "relational noun", 0.85),
    "regular_plural_subject_verb_agreement_1": ("subject_verb_agreement", False, "none", 0.95),
}
PAIRS_PER_PARADIGM = 6
METHODS = {"lp": [None], "intemplate_lp": [1, 2, 3, 4, 5], "yesno": [1, 2, 3, 4, 5], "ab": [1, 2, 3, 4, 5],
           "ab_logit": [1, 2, 3, 4, 5]}


def pairs_frame(dataset: str = "blimp") -> pd.DataFrame:
    """The pair columns of every score file: 4 paradigms x 6 pairs with BLiMP's extra columns."""
    rows = [{"dataset": dataset, "paradigm": p, "phenomenon": ph, "pair_id": i, "word_shuffle": ws,
             "attractor": att, "human_agreement": human}
            for p, (ph, ws, att, human) in PARADIGMS.items() for i in range(PAIRS_PER_PARADIGM)]
    frame = pd.DataFrame(rows)
    frame["attractor"] = frame["attractor"].astype("string")
    return frame


def decisions(model: str, method: str, template, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (correct, tie) of one file; ties are errors."""
    rng = np.random.default_rng([ord(c) for c in f"{model}|{method}|{template}"])
    tie = rng.random(n) < 0.08
    correct = (rng.random(n) < 0.4 + 0.1 * (template or 3)) & ~tie
    return correct, tie


def write_store(root, models=("m1",), dataset: str = "blimp", methods: dict | None = None) -> list:
    """Write the score files of ``models`` under ``root`` (a scores folder) for ``methods``
    (method -> templates; default :data:`METHODS`); returns their paths."""
    store = ScoreStore(root)
    files = []
    for model in models:
        info = pairs_frame(dataset)
        n = len(info)
        lengths = np.random.default_rng([ord(c) for c in model])
        n_good, n_bad = lengths.integers(3, 10, n), lengths.integers(3, 10, n)
        slots = np.where(lengths.random(n) < 0.5, "A", "B")
        for method, templates in (METHODS if methods is None else methods).items():
            for template in templates:
                correct, tie = decisions(model, method, template, n)
                frame = info.assign(score_good=np.where(correct, 1.0, 0.5), score_bad=0.5, correct=correct, tie=tie,
                                    n_tokens_good=n_good, n_tokens_bad=n_bad)
                if method.startswith("ab"):
                    frame["good_slot"] = slots
                config = {"model_name": model, "method": method, "template_id": template, "dataset": dataset,
                          "weights": f"weights-of-{model}"}
                files.append(store.write(frame, dataset, model, method, template, config))
    return files
