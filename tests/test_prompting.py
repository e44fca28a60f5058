"""Prompt rendering, Yes/No probability, A/B prompting (outlines vs logits), Hu & Levy summaries."""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from helpers.methods import prompt_text
from helpers.analysis import hu_levy
from helpers.analysis.metrics import balanced_accuracy
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.methods.hu_levy_prompt_types import prompts_for
from helpers.methods.prompting import good_slots
from helpers.store import ScoreStore, load_files
from helpers.runner import run_methods
from helpers.engine import Request, CausalScorer
from helpers.methods.templates import HL_PROMPTS, ide_templates
from helpers.settings import Settings

SENT = "The cat sees a dog."
YN_EN_SYSTEM = "Your task is to evaluate the quality of given text."
YN_EN_USER = "Is the following sentence grammatically acceptable? Respond with Yes or No as your answer.\n\n"


def blimp_sample(per: int, n: int) -> DatasetSelection:
    return DatasetSelection("blimp", first_per_paradigm(load("blimp"), per).head(n), limit=per)


def test_base_prompts_character_for_character(tiny):
    tok = tiny("tiny-llama").tokenizer
    yn = ide_templates("yn", "en")[0]
    assert prompt_text.render(yn, tok, False, sentence=SENT) == f"{YN_EN_SYSTEM} {YN_EN_USER}{SENT}\nAnswer: "
    ab = ide_templates("ab", "en")[0]
    assert prompt_text.render(ab, tok, False, sentence_a="X.", sentence_b="Y.") == (
        "Your task is to compare the quality of given sentences. One of the following sentences is grammatically "
        "acceptable and the other is not. Which one is acceptable? Respond with A or B as your answer.\n\n"
        "A: X.\nB: Y.\nAnswer: ")
    zh = ide_templates("yn", "zh")[1]
    assert prompt_text.render(zh, tok, False, sentence="我喜欢书。") == (
        "您的任务是评估给定文本的质量。下面的句子语法正确吗？请用“是”或“否”回答。\n\n我喜欢书。\n答案：")


def test_instruct_prompts_use_the_chat_template(tiny):
    tok = tiny("tiny-llama-instruct").tokenizer
    yn = ide_templates("yn", "en", "chat")[0]
    assert prompt_text.render(yn, tok, True, sentence=SENT) == (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" + YN_EN_SYSTEM + "<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\n" + YN_EN_USER + SENT + "<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n")
    qtok = tiny("tiny-qwen2-instruct").tokenizer
    zh = ide_templates("yn", "zh", "chat")[0]
    text = prompt_text.render(zh, qtok, True, sentence="我喜欢书。")
    assert text.startswith("<|start_header_id|>system<|end_header_id|>\n\n您的任务是评估给定文本的质量。<|eot_id|>")


def test_chat_template_without_system_role_gets_system_in_front(tiny):
    tok = copy.deepcopy(tiny("tiny-llama-instruct").tokenizer)
    tok.chat_template = ("{% for m in messages %}{% if m['role'] == 'system' %}"
                         "{{ raise_exception('System role not supported') }}{% endif %}"
                         "[INST] {{ m['content'] }} [/INST]{% endfor %}")
    yn = ide_templates("yn", "en", "chat")[0]
    assert prompt_text.render(yn, tok, True, sentence=SENT) == f"[INST] {YN_EN_SYSTEM}\n\n{YN_EN_USER}{SENT} [/INST]"


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-llama-instruct", "tiny-qwen2", "tiny-qwen2-instruct"])
def test_exactly_one_document_start_token(tiny, name):
    lm = tiny(name)
    tok = lm.tokenizer
    scorer = CausalScorer(lm, Settings(progress=False))
    instruct = name.endswith("instruct")
    text = prompt_text.render(ide_templates("yn", "en", "chat" if instruct else "base")[0], tok, instruct, sentence=SENT)
    ids = scorer.encode(Request(text, "Yes", separate=True)).ids
    assert ids[0] == scorer.start_id and ids.count(scorer.start_id) == 1


def _reference_answer_logits(model, scorer, prompt: str, options):
    ids = list(scorer.encode(Request(prompt, options[0], separate=True)).ids[:-1])
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    option_ids = [scorer.tokenizer(o, add_special_tokens=False)["input_ids"][0] for o in options]
    return logits[option_ids], torch.softmax(logits, -1)[option_ids]


@pytest.mark.parametrize("name", ["tiny-gpt2", "tiny-llama-instruct", "tiny-mixtral"])
def test_yesno_equals_full_softmax_and_released_equals_raw_logit_ratio(tiny, name, tmp_path):
    lm = tiny(name)
    scorer = CausalScorer(lm, Settings(progress=False))
    files = run_methods(
        scorer, blimp_sample(1, 6), ["yesno", "yesno_released"], {"templates": [2]}, store=ScoreStore(tmp_path)
    )
    scores = load_files(files)
    assert len(scores) == 12
    for row in scores.itertuples():
        raw, probs = _reference_answer_logits(lm.model, scorer, row.prompt_good, ["Yes", "No"])
        expected = (probs[0] / (probs[0] + probs[1])).item() if row.method == "yesno" else \
            (raw[0] / (raw[0] + raw[1])).item()
        # the raw-logit ratio divides by logit(Yes) + logit(No), which can be near 0: relative tolerance
        assert row.score_good == pytest.approx(expected, rel=1e-4, abs=1e-5), row.method


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-qwen2-instruct", "tiny-mixtral", "tiny-gpt2"])
def test_outlines_decision_and_logit_decision_agree(tiny, name, tmp_path):
    """outlines decodes every prompt (use_outlines=True); by default ("auto") 'ab' is read from the one-token
    letters' logits without a decode, and gives outlines' answer on every pair."""
    lm = tiny(name)
    files = run_methods(
        CausalScorer(lm, Settings(progress=False)),
        blimp_sample(3, 200),
        ["ab", "ab_logit"],
        {"templates": [1], "use_outlines": True},
        store=ScoreStore(tmp_path),
    )
    s = load_files(files).set_index(["method", "paradigm", "pair_id"])
    outlines, logit = s.loc["ab"], s.loc["ab_logit"]
    assert len(outlines) == len(logit) == 200
    by_default = load_files(run_methods(CausalScorer(lm, Settings(progress=False)), blimp_sample(3, 200), ["ab"],
                                        {"templates": [1]}, store=ScoreStore(tmp_path / "auto")))
    assert list(by_default.answer_outlines) == list(outlines.answer_outlines)
    assert list(by_default.correct) == list(outlines.correct)
    assert set(outlines.ab_path) == {"outlines"} and set(by_default.ab_path) == {"letter logits"}
    # the stored answers agree between the two files, and each method decides by its own path
    assert (outlines.answer_outlines == logit.answer_outlines).all() and (outlines.answer == logit.answer).all()
    assert (outlines.correct == (outlines.answer_outlines == outlines.good_slot)).all()
    assert (logit.correct == (logit.answer == logit.good_slot)).all()
    assert (outlines.answer_outlines == outlines.answer).mean() >= 0.99
    assert lm.tokenizer.padding_side == "right"


def test_ab_slots_are_seeded_and_stored(tiny, tmp_path):
    slots = good_slots(40, 42)
    assert (slots == good_slots(40, 42)).all() and not (slots == good_slots(40, 7)).all()
    assert 10 < (slots == "A").sum() < 30
    files = run_methods(
        CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)),
        blimp_sample(1, 40),
        ["ab_logit"],
        {"templates": [1], "use_outlines": False},
        store=ScoreStore(tmp_path),
    )
    s = load_files(files)
    assert list(s.good_slot) == list(slots)
    np.testing.assert_allclose(s.score_good, np.where(s.good_slot == "A", s.lp_a, s.lp_b))
    assert (s.correct == (np.where(s.good_slot == "A", s.answer == "A", s.answer == "B"))).all()
    # without outlines, 'ab' is greedy's answer read from the one-token letters' logits (a tie: the lower id)
    files = run_methods(CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), blimp_sample(1, 40), ["ab"],
                        {"templates": [1], "use_outlines": False}, store=ScoreStore(tmp_path / "b"))
    ab = load_files(files)
    assert list(ab.answer_outlines) == list(np.where(ab.lp_b > ab.lp_a, "B", "A")) and set(ab.ab_path) == {
        "letter logits"}


def test_balanced_accuracy_by_hand():
    labels = [True, True, True, False, False]
    preds = [True, True, False, True, False]
    assert balanced_accuracy(labels, preds) == pytest.approx((2 / 3 + 1 / 2) / 2)
    with pytest.raises(ValueError, match="both acceptable and unacceptable"):
        balanced_accuracy([True, True], [True, False])


def _judgment_scores() -> pd.DataFrame:
    """Stored-score shape of hl_sentence_judgment for 4 pairs: direct and metaInstruct."""
    base = dict(model="m", dataset="hl_blimp", method="hl_sentence_judgment", paradigm="p", pair_id=[0, 1, 2, 3])
    direct = pd.DataFrame({**base, "template": "direct", "score_good": [-10.0, -12.0, -8.0, -20.0],
                           "score_bad": [-11.0, -11.0, -9.0, -25.0]})
    meta = pd.DataFrame({**base, "template": "metaInstruct", "lp_yes_good": [-1.0, -2.0, -1.0, -0.5],
                         "lp_no_good": [-2.0, -1.0, -3.0, -1.0], "lp_yes_bad": [-1.5, -1.0, -2.0, -1.0],
                         "lp_no_bad": [-1.0, -2.0, -1.0, -2.0]})
    meta = meta.assign(score_good=meta.lp_yes_good, score_bad=meta.lp_yes_bad)
    frame = pd.concat([direct, meta], ignore_index=True)
    return frame.assign(correct=frame.score_good > frame.score_bad)


def test_hu_levy_summaries_by_hand():
    s = hu_levy.summarize(_judgment_scores()).set_index("prompt")
    # said Yes: good 1,0,1,1 (3 of 4 acceptable), bad 0,1,0,1 (2 of 4 unacceptable rejected)
    assert s.loc["metaInstruct", "balanced_accuracy"] == pytest.approx((3 / 4 + 2 / 4) / 2)
    # Yes differential good - bad: 0.5, -1.0, 1.0, 0.5 -> 3 of 4 pairs
    assert s.loc["metaInstruct", "accuracy"] == pytest.approx(0.75)
    assert s.loc["direct", "accuracy"] == pytest.approx(0.75)
    direct, meta = np.array([1.0, -1.0, 1.0, 5.0]), np.array([0.5, -1.0, 1.0, 0.5])
    assert s.loc["metaInstruct", "consistency_r"] == pytest.approx(np.corrcoef(direct, meta)[0, 1])
    words = pd.DataFrame({"model": "m", "dataset": "hl_p18", "method": "hl_word_prediction", "item_id": [1, 2, 3] * 2,
                          "template": ["direct"] * 3 + ["metaInstruct"] * 3, "score": [-1.0, -2.0, -4.0, -3.0, -3.0, -9.0]})
    w = hu_levy.summarize(words).set_index("prompt")
    assert w.loc["metaInstruct", "mean_logprob"] == pytest.approx(-5.0)
    assert w.loc["metaInstruct", "consistency_r"] == pytest.approx(np.corrcoef([-1, -2, -4], [-3, -3, -9])[0, 1])
    with pytest.raises(ValueError, match="Direct scores are missing"):
        hu_levy.summarize(words[words.template != "direct"])


def test_hu_levy_word_prediction_equals_float64_reference(tiny, tmp_path):
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False))
    items = load("hl_p18").head(3)
    files = run_methods(
        scorer,
        DatasetSelection("hl_p18", items),
        ["hl_word_prediction"],
        {"templates": ["direct"]},
        store=ScoreStore(tmp_path),
    )
    s = load_files(files)
    tok = lm.tokenizer
    for row, item in zip(s.itertuples(), items.itertuples()):
        head = [scorer.start_id] + tok(item.prefix, add_special_tokens=False)["input_ids"]
        ids = tok(item.prefix + " " + item.continuation, add_special_tokens=False)["input_ids"]
        ids = [scorer.start_id] + ids
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].double(), -1)
        expected = sum(float(lp[i - 1, ids[i]]) for i in range(len(head), len(ids)))
        assert row.score == pytest.approx(expected, abs=1e-4)
    assert {p.id for p in prompts_for("word_prediction", "en", "all")} == {"direct", *HL_PROMPTS}
    with pytest.raises(KeyError, match="no metaInstruct prompt for word_comparison in 'zh'"):
        prompts_for("word_comparison", "zh", ["metaInstruct"])


def test_a_prefix_ending_in_a_space_is_continued_after_one_space(tiny, tmp_path):
    """Hu & Levy's News item 36 ends in "rent -- ": every prompt type scores its word after one
    space, as the same prefix without the trailing space gives (never a bare-space token)."""
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    news = load("hl_news")
    item = news[news.prefix.str.endswith(" ")].head(1)
    assert item.prefix.iloc[0].endswith("rent -- ")
    options = {"templates": ["direct", "metaQuestionSimple", "metaInstruct"]}
    spaced, stripped = (load_files(run_methods(scorer, DatasetSelection("hl_news", frame), ["hl_word_prediction"],
                                               options, store=ScoreStore(tmp_path / name)))
                        for name, frame in (("a", item), ("b", item.assign(prefix=item.prefix.str.rstrip()))))
    assert len(spaced) == 3 and spaced.score.tolist() == stripped.score.tolist()


def test_meta_question_complex_writes_the_prefix_as_the_item_does():
    """metaQuestionComplex is "{prefix}... What is the best next word?": News item 36's prompt reads
    "rent -- ... What", its prefix kept as written (no continuation follows it there)."""
    from helpers.methods.hu_levy import WordComparison, WordPrediction

    class Shaping:  # what the requests of one item are, as a scorer shapes them ("span": unchanged here)
        scorer = type("S", (), {"shaped": staticmethod(lambda requests, shape: requests)})

    news = load("hl_news")
    item = news[news.prefix.str.endswith("rent -- ")].iloc[0]
    complex_, = prompts_for("word_prediction", "en", ["metaQuestionComplex"])
    (request,) = WordPrediction().requests(item, complex_, "", Shaping, None)
    assert request.context.endswith("Medicaid to cover 6 months of rent -- ... What is the best next word?\n\nAnswer: ")
    compare, = prompts_for("word_comparison", "en", ["metaQuestionComplex"])
    pair = item.to_dict() | {"good_continuation": "Gov", "bad_continuation": "Dog"}
    assert all("rent -- ... What word" in r.context for r in WordComparison().requests(pair, compare, "", Shaping, None))
    simple, = prompts_for("word_prediction", "en", ["metaQuestionSimple"])  # the word follows: one space
    assert WordPrediction().requests(item, simple, "", Shaping, None)[0].context.endswith("rent -- ")
