"""Which linking function each dataset's own paper reports: the readout (a method of
:mod:`helpers.methods.readouts`) that turns a sentence's token log-probabilities into the score
its paper compares, the rule for a tie, and where that is stated: for the benchmarks that release
scoring code, the file and line of that code at the commit read (``tests/test_linking.py`` scores
pairs with each code's rule, written out by hand, and compares the decisions with the readout's).
02's paper check reads a dataset's published accuracies with this readout, and 02 (and ``make
demo``) names it under its table, with the conventions where the reference's differ from the run's
(:func:`convention`: its start convention, BHS's endings after their context, ZhoBLiMP's 64-token cut).

Several reference implementations score through minicons (``IncrementalLMScorer``), which never
scores the first token it encodes and adds no start token of its own: where the tokenizer adds
none either, the sentence's first word piece is left out of the score. This project prepends the
start token and scores every token of the sentence; ``start="minicons"`` reproduces
minicons' convention where a comparison needs it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperLinking:
    method: str | None  # the readout, or None where the paper's is not one of this project's
    source: str  # where the paper or its reference implementation says so (file and line where code)
    tie: str = "wrong"  # a tied pair in the reference: counted "wrong" (strict comparison) or "right"
    from_code: bool = False  # read from the reference implementation's code (else the paper's text)
    start: str | None = None  # the reference's start convention where it is not this project's ("minicons")
    endings: bool = False  # the reference scores each ending after its context (02's endings=True)
    truncates: int | None = None  # the reference cuts each sentence to this many tokens


MINICONS_NOTE = ("scored through minicons' IncrementalLMScorer, which leaves out the first encoded token and adds "
                 "no start token (minicons f054bc0, scorer.py l.1786-1787)")

PAPER_LINKING: dict[str, PaperLinking] = {
    "blimp": PaperLinking("lp", "Warstadt et al. 2020: the acceptable sentence must get the higher total "
                                "probability"),
    "blimp_hu2025": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "climp": PaperLinking("lp", "Xiang et al. 2021: the acceptable sentence must get the higher probability"),
    "sling": PaperLinking("meanlp", "Song et al. 2022: lower perplexity, exp of minus the mean token log-prob "
                                    "(Yixiao-Song/SLING_Data_Code 5a7f791, SLING_Code/utils.py l.51 and l.64: the "
                                    "first token unscored, no start token added); a pair fails only when the "
                                    "acceptable sentence scores strictly lower (utils.py l.245), so a tie counts "
                                    "right", tie="right", from_code=True, start="minicons"),
    "sling_hu2025": PaperLinking("lp", "Hu et al. 2025: the sentence's log-probability"),
    "zhoblimp": PaperLinking("slln_lp", "Liu et al. 2024: SLLN-LP, the summed log-prob over the token count ** 0.5 "
                                        "(sjtu-compling/ZhoBLiMP e840276, src/metrics.py l.17-23 pow_norm_lp, "
                                        "length l.4-6 in tokens, a start token prepended and not scored, "
                                        "src/dataset.py l.56-57); good > bad strictly (src/run.py l.67); each "
                                        "sentence cut to 64 tokens (src/dataset.py l.59-67, truncation=True, "
                                        "max_length=64 from src/run.py l.81)", from_code=True, truncates=64),
    "multiblimp": PaperLinking("lp", "Jumelet et al. 2025: the summed token log-prob, no length normalisation "
                                     "(jumelet/multiblimp f8855be, src/lm_eval/score.py l.16-17 sen_nll = "
                                     "-sen_prob.sum()); right when sen_nll < wrong_nll strictly "
                                     f"(scripts/lm_eval/eval_model.py l.46); {MINICONS_NOTE}", from_code=True,
                                 start="minicons"),
    "multiblimp_word_order": PaperLinking("lp", "Jumelet et al.'s word-order pairs (jumelet/multiblimp, branch "
                                                "word_order 6ebca3d), scored as MultiBLiMP scores its pairs: the summed "
                                                "token log-prob, right when sen_nll < wrong_nll strictly (main's "
                                                "src/lm_eval/score.py l.16-17, scripts/lm_eval/eval_model.py l.46; "
                                                f"{MINICONS_NOTE})", from_code=True, start="minicons"),
    "turblimp": PaperLinking("lp", "Başar et al. 2025: the summed token log-prob (ezgibasar/TurBLiMP 297de13, "
                                   "evaluation.py l.20, causal models; masked ones by within-word PLL, l.22); "
                                   f"right when good > bad strictly (l.66, l.69); {MINICONS_NOTE}", from_code=True,
                             start="minicons"),
    "blimp_nl": PaperLinking("bf_unigram", "Suijkerbuijk et al. 2025: syntactic log-odds ratio (SLOG, Pauls & "
                                           "Klein 2012), LP minus the unigram LP, on masked language models. The "
                                           "reference code (Radboud data repository, data.ru.nl) is not reachable: "
                                           "this is lm-evaluation-harness's blimp_nl README (f72d498), second-hand; "
                                           "its tie rule is unknown"),
    "bhs": PaperLinking("meanlp", "Kryvosheieva & Levy 2025: the mean token log-prob of the ending (the final "
                                  "word(s) and punctuation) after the context (dariakryvosheieva/"
                                  "syntactic_generalization_multilingual 7f44015, evaluate.py l.27-29 through minicons "
                                  "0.2.48's partial_score, a mean by default); right when good - bad > 0 (l.20-21); "
                                  f"{MINICONS_NOTE}", from_code=True, start="minicons", endings=True),
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


def convention(found: PaperLinking, start: str | None = None, endings: bool | None = None) -> str:
    """What differs between the reference's scoring and this run's, and the setting that closes it."""
    notes = []
    if found.start and start not in (None, found.start):
        notes.append(f"its reference scored with start=\"{found.start}\" (no start token, the first token unscored), "
                     f"this run with start=\"{start}\": start=\"{found.start}\" scores as it did")
    elif found.start and start == found.start:
        notes.append(f"this run used the reference's convention, start=\"{found.start}\"")
    if found.endings and not endings:
        notes.append("its reference scores each ending after its context: endings=True scores as it did")
    if found.truncates:
        notes.append(f"its reference cuts every sentence to {found.truncates} tokens, its start token included: "
                     f"max_tokens={found.truncates} scores as it does (without it, a pair longer than that may differ)")
    return "; ".join(notes)


def describe(dataset: str, start: str | None = None, endings: bool | None = None) -> str:
    """One line for 02's table: the linking function ``dataset``'s paper reports, its tie rule,
    where, and which convention its number used against this run's (``start``: the run's start
    convention; ``endings``: whether it scored endings after their context)."""
    found = paper_linking(dataset)
    if found is None:
        return f"{dataset}: no linking function recorded for its paper (helpers.data.linking)"
    if found.method is None:
        return f"{dataset}'s paper reports none of this project's readouts: {found.source}"
    ties = "" if found.tie == "wrong" else " (its reference counts a tie right; the tables here count it wrong)"
    differs = convention(found, start, endings)
    return (f"{dataset}'s paper reports {found.method}{ties} ({found.source}); its row is the one to compare "
            "with the paper" + (f". Convention: {differs}" if differs else ""))
