"""The papers' conventions as named switches: each changes what it says it changes and nothing
else, and every score file records it (start token, Hu & Levy's answer-order averaging, the
ensemble vote of a tied predictor, the unigram table's source)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from helpers.analysis import comparisons, ensembles, hu_levy as hl_tables
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.store import ScoreStore, load_files, read_metadata
from helpers.runner import run_methods
from helpers.engine import Request, CausalScorer
from helpers.settings import START_CONVENTIONS, Settings

SWITCH_KEYS = {"start_token", "start_convention", "fewshot_k", "fewshot_source", "fewshot_seed", "order_average",
               "unigram_source"}
# share_used: the mode share="auto" ran, chosen per run from the device's timing (recorded, like the time)
VOLATILE = {"config_hash", "time", "time_ns", "git_commit", "library_versions", "accuracy", "share_used"}


def blimp_pairs(paradigms: int = 3, per: int = 2) -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


def config_difference(a, b) -> set[str]:
    """Configuration keys whose values differ between two score files (volatile ones aside)."""
    ma, mb = read_metadata(a), read_metadata(b)
    return {k for k in (set(ma) | set(mb)) - VOLATILE if ma.get(k) != mb.get(k)}


def plain_lp(model, ids: list[int], first: int) -> float:
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
    return float(sum(lp[i - 1, ids[i]] for i in range(first, len(ids))))


# --------------------------------------------------------------------------- start token
def test_start_token_conventions_encode_and_score_as_documented(tiny):
    assert set(START_CONVENTIONS) == {"bos-else-eos", "none", "minicons"}
    text = "The cat sees a dog."
    for name, bos_added_by_tokenizer in (("tiny-llama", True), ("tiny-gpt2", False)):
        lm = tiny(name)
        words = lm.tokenizer(text, add_special_tokens=False)["input_ids"]
        scorers = {c: CausalScorer(lm, Settings(progress=False, start=c)) for c in START_CONVENTIONS}
        assert {c: s.start for c, s in scorers.items()} == {c: c for c in START_CONVENTIONS}
        default = scorers["bos-else-eos"]
        assert CausalScorer(lm, Settings(progress=False)).start == "bos-else-eos"
        ids = {c: list(s.encode(Request("", text)).ids) for c, s in scorers.items()}
        assert ids["bos-else-eos"] == [default.start_id] + words and ids["none"] == words
        assert ids["minicons"] == (ids["bos-else-eos"] if bos_added_by_tokenizer else words)
        scored = {c: s.score_texts([text])[0] for c, s in scorers.items()}
        # bos-else-eos scores every word; none leaves the first token unscored
        assert scored["bos-else-eos"].token_ids == words and scored["none"].token_ids == words[1:]
        assert scored["bos-else-eos"].total == pytest.approx(plain_lp(lm.model, ids["bos-else-eos"], 1), abs=1e-4)
        assert scored["none"].total == pytest.approx(plain_lp(lm.model, words, 1), abs=1e-4)
        twin = "bos-else-eos" if bos_added_by_tokenizer else "none"
        np.testing.assert_array_equal(scored["minicons"].logprobs, scored[twin].logprobs)
        assert CausalScorer(lm, Settings(progress=False, start="minicons")).start == "minicons"


def test_start_token_switch_changes_the_scores_and_its_record_only(tiny, tmp_path):
    lm = tiny("tiny-llama")
    selection = blimp_pairs()
    files = {
        c: run_methods(
            CausalScorer(lm, Settings(progress=False, start=c)),
            selection,
            ["lp", "intemplate_lp", "yesno"],
            {"templates": [1]},
            store=ScoreStore(tmp_path / c),
        )
        for c in ("bos-else-eos", "none")
    }
    for a, b in zip(files["bos-else-eos"], files["none"]):
        assert config_difference(a, b) == {"start_token", "start_convention"}
        meta = read_metadata(b)
        assert (meta["start_token"], meta["start_convention"]) == ("none", "none")
        fa, fb = pd.read_parquet(a), pd.read_parquet(b)
        assert list(fa.columns) == list(fb.columns)
        info = ["dataset", "paradigm", "pair_id"] + [c for c in fa.columns if c.startswith(("input_", "prompt_"))]
        pd.testing.assert_frame_equal(fa[info], fb[info])
        assert not np.allclose(fa.score_good, fb.score_good)
    lp_a, lp_b = (pd.read_parquet(f[0]) for f in files.values())
    # sentences alone: "none" drops the first token; in a template only the start differs
    assert all(list(x[1:]) == list(y) for x, y in zip(lp_a.token_ids_good, lp_b.token_ids_good))
    in_a, in_b = (pd.read_parquet(f[1]) for f in files.values())
    assert all(list(x) == list(y) for x, y in zip(in_a.token_ids_good, in_b.token_ids_good))
    assert (in_a.ctx_n_good == in_b.ctx_n_good + 1).all()  # the template's first token is unscored


# --------------------------------------------------------------------------- Hu & Levy orders
def _hl(tiny, tmp_path, method: str, stimuli: str, order_average: str, store: ScoreStore):
    items = load(stimuli).head(8)
    selection = DatasetSelection(stimuli, items)
    return run_methods(
        CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)),
        selection,
        [method],
        {"templates": ["direct", "metaQuestionSimple", "metaInstruct"], "order_average": order_average},
        store=store,
    )


@pytest.mark.parametrize("method,stimuli", [("hl_sentence_comparison", "hl_blimp"),
                                            ("hl_word_comparison", "hl_dtfit")])
def test_order_averaging_changes_correct_only(tiny, tmp_path, method, stimuli):
    store = ScoreStore(tmp_path)
    paper = _hl(tiny, tmp_path, method, stimuli, "accuracy", store)
    writes = store.writes
    logprob = _hl(tiny, tmp_path, method, stimuli, "logprob", store)
    assert paper[0] == logprob[0] and store.writes == writes + 2  # Direct has one order: the same file
    assert read_metadata(paper[0])["order_average"] is None
    split = 0  # pairs right in one order only: where the two switches can disagree
    for a, b in zip(paper[1:], logprob[1:]):
        assert config_difference(a, b) == {"order_average"}
        assert (read_metadata(a)["order_average"], read_metadata(b)["order_average"]) == ("accuracy", "logprob")
        fa, fb = pd.read_parquet(a), pd.read_parquet(b)
        pd.testing.assert_frame_equal(fa.drop(columns="correct"), fb.drop(columns="correct"))
        if method == "hl_sentence_comparison":  # the good sentence is "1" first, "2" second
            first, second = fa.lp_1_good_first > fa.lp_2_good_first, fa.lp_2_bad_first > fa.lp_1_bad_first
        else:
            first, second = (fa.lp_good_first_good > fa.lp_good_first_bad,
                             fa.lp_bad_first_good > fa.lp_bad_first_bad)
        np.testing.assert_array_equal(fa.correct, (first.astype(float) + second.astype(float)) / 2)
        np.testing.assert_array_equal(fb.correct, fb.score_good > fb.score_bad)
        split += int((fa.correct == 0.5).sum())
        # the summary reports the paper's number: the two orders' accuracies averaged
        summary = hl_tables.summarize(load_files([paper[0], a])).set_index("prompt")
        prompt = read_metadata(a)["template_id"]
        assert summary.loc[prompt, "accuracy"] == pytest.approx((first.mean() + second.mean()) / 2)
    assert split > 0 or method == "hl_word_comparison"  # a tiny model's word order rarely flips a decision
    with pytest.raises(ValueError, match=r"order_average='orders' does not exist: use one of 'auto', 'accuracy', 'logprob'"):
        _hl(tiny, tmp_path, method, stimuli, "orders", store)


# --------------------------------------------------------------------------- ensemble ties
def _tied_scores() -> pd.DataFrame:
    """Yes/No and in-template LP decisions on 4 pairs, with ties (a tie is never correct)."""
    correct = {  # P1..P5, L1..L5 per pair; "t" marks a tie
        0: "11tt0 00000",  # 2 right, 1 wrong, 2 tied: abstain -> right; wrong -> wrong
        1: "1t000 tttt1",  # 1 right, 3 wrong, 1 tied among the Ps
        2: "tt1tt 11111",  # 1 right, 4 tied: abstain -> right; wrong -> wrong
        3: "1100t 00000",  # 2 right, 2 wrong, 1 tied: abstain -> an even split, an error
    }
    rows = []
    for pair, marks in correct.items():
        for kind, block in zip("PL", marks.split()):
            for template, mark in enumerate(block, 1):
                rows.append({"model": "m", "method": "yesno" if kind == "P" else "intemplate_lp",
                             "template": str(template), "paradigm": "p", "pair_id": pair, "phenomenon": "ph",
                             "correct": mark == "1", "tie": mark == "t", "n_tokens_good": 5, "n_tokens_bad": 5})
    return pd.DataFrame(rows)


def test_tied_predictors_abstain_or_count_as_wrong():
    s = _tied_scores()
    matrix, ties = ensembles.predictor_matrix(s), ensembles.tie_matrix(s)
    ps = [f"P{i}" for i in range(1, 6)]
    assert ensembles.vote(matrix, ps, ties).tolist() == [True, False, True, False]
    assert ensembles.vote(matrix, ps).tolist() == [False, False, False, False]
    assert ensembles.abstentions(s, ties="wrong") is None
    pd.testing.assert_frame_equal(ensembles.abstentions(s), ties)
    with pytest.raises(ValueError, match="ties must be 'abstain'"):
        ensembles.abstentions(s, ties="half")
    abstain = ensembles.ensembles_by_model(s, trials=3, seed=0, resamples=50).set_index("setting")
    wrong = ensembles.ensembles_by_model(s, trials=3, seed=0, resamples=50, ties="wrong").set_index("setting")
    # "wrong" is the vote without abstentions; the oracles (one template alone) do not change
    pd.testing.assert_series_equal(wrong.accuracy, ensembles.ensemble_table(matrix, 3, 0).set_index("setting").accuracy)
    assert abstain.loc["P-only", "accuracy"] == pytest.approx(0.5) and wrong.loc["P-only", "accuracy"] == 0.0
    oracles = [r for r in abstain.index if r.startswith("oracle")]
    pd.testing.assert_frame_equal(abstain.loc[oracles], wrong.loc[oracles])
    assert (abstain.draws == wrong.draws).all()  # the same predictors drawn
    # without ties the switch changes nothing
    untied = s.assign(tie=False)
    pd.testing.assert_frame_equal(ensembles.ensembles_by_model(untied, trials=3, seed=0, resamples=50),
                                  ensembles.ensembles_by_model(untied, trials=3, seed=0, resamples=50, ties="wrong"))
    lp = s[(s.method == "yesno") & (s.template == "1")].assign(method="lp", template="none")
    both = pd.concat([s, lp], ignore_index=True)
    head = {t: comparisons.headline(both, ensembles.ensembles_by_model(both, trials=3, seed=0, resamples=50, ties=t),
                                    trials=3, ties=t) for t in ensembles.TIES}
    pd.testing.assert_frame_equal(head["abstain"].iloc[:3], head["wrong"].iloc[:3])  # method pairs: no votes


# --------------------------------------------------------------------------- unigram source
def test_unigram_source_is_recorded_in_every_file_and_moves_only_its_methods(tiny, tmp_path):
    lm = tiny("tiny-gpt2")
    selection = blimp_pairs(2, 2)
    corpora = []
    for i, text in enumerate(["The cat sees a dog.\nA dog sees the cat.\n", "Who should Derek hug?\nThe dogs run.\n"]):
        corpora.append(tmp_path / f"corpus{i}.txt")
        corpora[-1].write_text(text * (i + 1))
    store = ScoreStore(tmp_path / "scores")
    methods = ["lp", "bf_uniform", "slor", "bf_unigram", "intemplate_lp", "yesno"]
    runs = [
        run_methods(
            CausalScorer(lm, Settings(progress=False)), selection, methods, {"templates": [1], "unigram_corpus": c}, store=store
        )
        for c in corpora
    ]
    for files in runs:
        for path in files:
            meta = read_metadata(path)
            assert SWITCH_KEYS <= set(meta), path.name
            needs = meta["method"] in ("slor", "bf_unigram")
            assert (meta["unigram_source"] is not None) == needs
    first, second = runs
    for a, b in zip(first, second):
        method = read_metadata(a)["method"]
        if method in ("slor", "bf_unigram"):
            corpus_a, corpus_b = corpora
            assert read_metadata(a)["unigram_source"] == f"file:{corpus_a.resolve()}:{corpus_a.name}:" \
                                                          f"{corpus_a.stat().st_size}"
            assert config_difference(a, b) == {"unigram_source"}
            fa, fb = pd.read_parquet(a), pd.read_parquet(b)
            pd.testing.assert_frame_equal(fa.drop(columns=["score_good", "score_bad", "correct", "tie", "uni_sum_good",
                                                           "uni_sum_bad"]),
                                          fb.drop(columns=["score_good", "score_bad", "correct", "tie", "uni_sum_good",
                                                           "uni_sum_bad"]))
            assert not np.allclose(fa.score_good, fb.score_good)
        else:
            assert a == b  # the same configuration: found, not scored again
