"""Which linking function each dataset's own paper reports: the readout (a method of
:mod:`helpers.methods.readouts`) that turns a sentence's token log-probabilities into the score
its paper compares, with where that is stated. 02's paper check reads a dataset's published
accuracies with this readout, and 02 (and ``make demo``) names it under its table. A dataset whose
paper reads a score no readout here computes (BHS: the final word's per-token log-probability)
has none."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperLinking:
    method: str | None  # the readout, or None where the paper's is not one of this project's
    source: str  # where the paper (or its reference implementation) says so


PAPER_LINKING: dict[str, PaperLinking] = {
    "blimp": PaperLinking("lp", "Warstadt et al. 2020: the acceptable sentence must get the higher total "
                                "probability"),
    "blimp_hu2025": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "climp": PaperLinking("lp", "Xiang et al. 2021: the acceptable sentence must get the higher probability"),
    "sling": PaperLinking("meanlp", "Song et al. 2022, abstract: the acceptable sentence must get the lower "
                                    "perplexity (a per-token mean)"),
    "sling_hu2025": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "zhoblimp": PaperLinking("slln_lp", "Liu et al. 2024 (arXiv 2411.06096): SLLN-LP, LP / length ** 0.5"),
    "multiblimp": PaperLinking("meanlp", "Jumelet et al. (MultiBLiMP 1.0): the reference implementation divides "
                                         "the sentence log-probability by its token count (lm-evaluation-harness's "
                                         "multiblimp README, PR #3155)"),
    "turblimp": PaperLinking("meanlp", "Başar et al. 2025: the reference implementation normalises by the token "
                                       "count (lm-evaluation-harness's turblimp README, PR #3219)"),
    "blimp_nl": PaperLinking("bf_unigram", "Suijkerbuijk et al. 2025: syntactic log-odds ratio (SLOG, Pauls & "
                                           "Klein 2012), LP minus the unigram LP, on masked language models "
                                           "(lm-evaluation-harness's blimp_nl README; lm-eval falls back to "
                                           "acc_norm)"),
    "bhs": PaperLinking(None, "Kryvosheieva & Levy 2025: the final word's log-probability after the context, "
                              "over its token count (lm-evaluation-harness's bhs README); LP ranks the pair as "
                              "the final word's unnormalised log-probability does (the context is shared)"),
    "qfrblimp": PaperLinking("meanlp", "Beauchemin et al. 2026: the acceptable sentence must get the lower "
                                       "perplexity, exp of the mean token loss (the GitHub release's "
                                       "evaluations/evaluation_tools.py)"),
    "xcomps": PaperLinking("lp", "BabyLM 2026's xcomps task (multiple choice between the two whole sentences, "
                                 "lm-evaluation-harness's acc: their log-probabilities)"),
    "li": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "li_hu2025": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "hl_blimp": PaperLinking("lp", "Hu & Levy 2023, experiment 3: the sentences' full log-probabilities"),
    "hl_syntaxgym": PaperLinking("lp", "Hu & Levy 2023, experiment 3: the sentences' full log-probabilities"),
    "hl_mandarin": PaperLinking("lp", "Hu & Levy 2023, Appendix D: the sentences' full log-probabilities"),
}


def paper_linking(dataset: str) -> PaperLinking | None:
    """The linking function ``dataset``'s paper reports (None: not recorded for this dataset)."""
    return PAPER_LINKING.get(dataset)


def describe(dataset: str) -> str:
    """One line for 02's table: the linking function ``dataset``'s paper reports, and where."""
    found = paper_linking(dataset)
    if found is None:
        return f"{dataset}: no linking function recorded for its paper (helpers.data.linking)"
    if found.method is None:
        return f"{dataset}'s paper reports none of this project's readouts: {found.source}"
    return f"{dataset}'s paper reports {found.method} ({found.source}); its row is the one to compare with the paper"
