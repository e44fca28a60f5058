"""What a run scores of a dataset (languages, paradigms, drop_identical: helpers.data.picking),
per-language results with their tie range (helpers.analysis.languages), and BHS's endings scored
after their context as its evaluate.py scores them (helpers.runs.endings), against minicons."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.analysis.languages import by_language, language_matrix
from helpers.data.picking import choose, choose_each, pick_tag, picks


def test_languages_pick_the_word_order_pairs_by_any_code_and_are_recorded():
    eng = choose("multiblimp_word_order", languages="eng")
    assert len(eng) == 500 and sorted(eng.frame.paradigm.unique()) == ["eng/iobj", "eng/nsubj", "eng/obj"]
    assert eng.config()["languages"] == ["en"] and pick_tag(eng) == "__en"
    assert len(choose("multiblimp_word_order", languages=["en"])) == 500  # ISO 639-1 too
    two = choose("multiblimp_word_order", 2, languages="eng,nld")
    assert len(two) == 12 and two.config()["languages"] == ["en", "nl"] and pick_tag(two) == "__en-nl__limit-2"
    drawn = choose("multiblimp_word_order", 5, languages=3, seed=1)  # a sorted draw with the seed
    assert drawn.config()["languages"] == ["jv", "kpv", "sa"] and drawn.config()["draw_seed"] == 1
    assert choose("multiblimp_word_order", 5, languages=3, seed=1).frame.equals(drawn.frame)
    mirrored = choose("multiblimp", languages="en,tr")  # MultiBLiMP reads these languages' files only
    assert mirrored.options == {"languages": "eng,tur"} and len(mirrored) == 770 + 1_742
    with pytest.raises(ValueError, match=r"languages \['en'\] are not in turblimp; it has: tr"):
        choose("turblimp", languages="eng")


def test_paradigms_and_drop_identical():
    picked = choose("turblimp", 2, paradigms="binding, passives")
    assert len(picked) == 4 and picked.config()["paradigms"] == ["binding", "passives"]
    assert choose("blimp", 1, paradigms=3, seed=0).config()["paradigms"] == [
        "left_branch_island_simple_question", "principle_A_c_command", "superlative_quantifiers_2"]
    assert choose("blimp", drop_identical=True).name == "blimp_hu2025"  # its registered variant, under its name
    assert len(choose("turblimp", drop_identical=True)) == 15_980
    assert choose("turblimp", drop_identical=True).options == {"drop_identical": True}
    # the subset in table names, so a smaller run never overwrites a larger one's
    assert pick_tag(picked) == "__2paradigms-" + __import__("hashlib").sha256(b"binding,passives").hexdigest()[:6] + "__limit-2"
    assert pick_tag(choose("turblimp", 3, drop_identical=True)) == "__limit-3__drop-identical"
    assert pick_tag(choose("blimp", drop_identical=True)) == ""  # blimp_hu2025: the dataset's name says it
    with pytest.raises(ValueError, match="climp has no drop_identical option: the datasets with identical pairs are "
                                         "blimp, sling, multiblimp_word_order, blimp_nl, turblimp, qfrblimp"):
        choose("climp", drop_identical=True)
    # one draw seed for every notebook: draw_seed, never a notebook's own seed (03's bootstrap, 06's prefixes)
    assert picks({"languages": "eng", "seed": 7, "limit": 3}) == {"languages": "eng", "seed": 0}
    assert picks({"paradigms": 3, "draw_seed": "5"}) == {"paradigms": 3, "seed": 5}
    with pytest.raises(ValueError, match=r"draw_seed='x' is not a whole number"):
        picks({"draw_seed": "x"})
    each = choose_each(["blimp_hu2025", "zhoblimp", "li_hu2025"], 2, languages="zh")  # 07: datasets without it out
    assert list(each) == ["zhoblimp"] and len(each["zhoblimp"]) == 236


def test_by_language_counts_ties_both_ways():
    rows = [("en", "nsubj", True, False), ("en", "nsubj", False, True), ("en", "obj", True, False),
            ("en", "obj", True, False), ("nl", "nsubj", False, False), ("nl", "nsubj", False, True)]
    scores = pd.DataFrame(rows, columns=["language", "phenomenon", "correct", "tie"]).assign(
        model="m", method="lp", template="none", dataset="multiblimp_word_order", paradigm="p", pair_id=range(6))
    table = by_language(scores)
    assert table.language.tolist() == ["en", "nl"]  # best first
    assert table.accuracy.tolist() == [0.75, 0.0] and table.pairs.tolist() == [4, 2]
    assert table.expected_accuracy.tolist() == [0.875, 0.25] and table.accuracy_ties_right.tolist() == [1.0, 0.5]
    within = by_language(scores, within="phenomenon")
    assert within[["language", "phenomenon", "accuracy", "expected_accuracy"]].values.tolist() == [
        ["en", "nsubj", 0.5, 0.75], ["en", "obj", 1.0, 1.0], ["nl", "nsubj", 0.0, 0.25]]
    assert language_matrix(table).loc["en", ("m", "lp")] == 0.75


def test_bhs_endings_are_scored_after_their_context_as_its_evaluate_py(tiny, scratch):
    from minicons.scorer import IncrementalLMScorer

    from helpers.engine.causal import CausalScorer
    from helpers.runs.endings import endings_input
    from helpers.runs.run import Run
    from helpers.settings import Settings
    from helpers.store import load_files

    lm = tiny("tiny-gpt2")
    selection, setup = endings_input(choose("bhs", 2, paradigms="hindi-S_O_V,swahili-N_of_Poss_V,basque-S-S_V_AUX"))
    scorer = CausalScorer(lm, Settings(progress=False, start="minicons"))  # the reference's convention
    scores = load_files(Run.of(scorer).files(["meanlp"], selection, setup))
    assert len(scores) == 6 and (scores.sentence_good == scores.context + " " + selection.frame.good).all()
    theirs = IncrementalLMScorer(lm.model, device="cpu", tokenizer=lm.tokenizer)  # evaluate.py's scorer
    for side in ("good", "bad"):  # minicons' conditional score of the ending after the context, a mean
        expected = theirs.conditional_score(list(scores.context), list(selection.frame[side]))
        np.testing.assert_allclose(scores[f"score_{side}"], expected, atol=1e-4)
    assert scores.correct.tolist() == (scores.score_good > scores.score_bad).tolist()  # good - bad > 0
    with pytest.raises(ValueError, match="blimp has no context, ending_good, ending_bad column"):
        endings_input(choose("blimp", 1))
    # a template, a prompt or both sentences side by side would hold the ending without its context: refused, named
    with pytest.raises(ValueError, match=r"^intemplate_lp, comparative_lp, yesno cannot run on endings \(each ending is "
                                         r"scored by its own log-probs.*choose among lp, meanlp, penlp"):
        Run.of(scorer).files(["meanlp", "intemplate_lp", "comparative_lp", "yesno"], selection, setup)
    # 02's methods="all" with endings=True: the sentence readouts, said; a named template method: refused, named
    from helpers import methods as registry

    parameters = {"model": "tiny-gpt2", "dataset": "bhs", "limit": 1, "endings": True, "progress": False}
    run = Run.from_parameters(parameters | {"methods": "all"}, methods=registry.READOUT_METHODS)
    assert run.methods == [m for m in registry.READOUT_METHODS if registry.get(m).family.name == "sentence"]
    with pytest.raises(ValueError, match="^intemplate_lp cannot run on endings"):
        Run.from_parameters(parameters | {"methods": "lp,intemplate_lp"}, methods=registry.READOUT_METHODS)


def test_a_reader_never_compares_methods_scored_on_different_languages(scratch):
    """Two language selections of one dataset in the store: each method's file of the larger is
    chosen; where the chosen files of two methods cover different languages, load_scores stops
    and names them, and where= chooses one."""
    from helpers.runs.run import Run
    from helpers.settings import Settings
    from helpers.store import load_scores

    run = Run.of("demo-en", Settings(progress=False))
    run.files(["lp", "meanlp"], choose("multiblimp_word_order", 1, languages="eng"))
    run.files(["lp"], choose("multiblimp_word_order", 2, languages="nld"))  # lp: 6 pairs of nl, meanlp: 3 of en
    with pytest.raises(ValueError, match=r"demo-en on multiblimp_word_order: the score files of its methods cover "
                                         r"different pairs \(languages en; limit 1 \(meanlp\); languages nl; limit 2 "
                                         r"\(lp\)\), with none in common"):
        load_scores("multiblimp_word_order", "demo-en")
    english = load_scores("multiblimp_word_order", "demo-en", where={"languages": ["en"]})
    assert sorted(english.method.unique()) == ["lp", "meanlp"] and set(english.language) == {"en"}
    assert len(english) == 6  # 3 pairs each


def test_methods_scored_at_different_limits_are_compared_on_the_pairs_they_share(scratch):
    """lp at 2 pairs a paradigm, meanlp at 1: a reader compares them on the 1 pair a paradigm both
    scored and says so, never on 2 against 1."""
    from helpers.runs.run import Run
    from helpers.settings import Settings
    from helpers.store import load_scores

    run = Run.of("demo-en", Settings(progress=False))
    run.files(["lp"], choose("blimp", 2, paradigms="anaphor_gender_agreement,npi_present_1"))
    run.files(["meanlp"], choose("blimp", 1, paradigms="anaphor_gender_agreement,npi_present_1"))
    with pytest.warns(UserWarning, match=r"demo-en on blimp: the score files of its methods cover different pairs "
                                         r"\(.*limit 1 \(meanlp\); .*limit 2 \(lp\)\); compared on the 2 pairs every "
                                         r"method scored \(of lp 4, meanlp 2\)"):
        both = load_scores("blimp", "demo-en")
    assert both.groupby("method").size().to_dict() == {"lp": 2, "meanlp": 2}
    assert set(map(tuple, both[both.method == "lp"][["paradigm", "pair_id"]].astype(str).values)) == \
        set(map(tuple, both[both.method == "meanlp"][["paradigm", "pair_id"]].astype(str).values))


def test_rows_of_files_scored_before_rows_kept_their_language_read_it_from_the_dataset(scratch):
    """An old score file of a multilingual dataset has no language column: each row's language is its
    pair's in the processed table (by paradigm and pair id), not one 'mul' row for all."""
    from helpers.analysis.languages import by_language, with_language

    kept = choose("multiblimp_word_order", 2, languages="eng,nld")
    rows = kept.frame[["dataset", "paradigm", "pair_id", "language"]].copy()
    old = rows.drop(columns="language").assign(model="m", method="lp", template="none", correct=True, tie=False)
    assert with_language(old)["language"].tolist() == rows["language"].astype(str).tolist()
    assert sorted(by_language(old)["language"]) == ["en", "nl"]
