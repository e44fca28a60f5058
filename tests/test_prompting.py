"""Prompt rendering, Yes/No probability, A/B prompting (outlines vs logits), Hu & Levy measures."""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import data, metalinguistic, prompting
from helpers.readout import run_methods, select_pairs
from helpers.results import ScoreStore, load_files
from helpers.scoring import Request, Scorer
from helpers.templates import ide_templates

SENT = "The cat sees a dog."
YN_EN_SYSTEM = "Your task is to evaluate the quality of given text."
YN_EN_USER = "Is the following sentence grammatically acceptable? Respond with Yes or No as your answer.\n\n"


def test_base_prompts_character_for_character(tiny):
    _, tok = tiny("tiny-llama")
    yn = ide_templates("yn", "en")[0]
    assert prompting.render(yn, tok, False, sentence=SENT) == f"{YN_EN_SYSTEM} {YN_EN_USER}{SENT}\nAnswer: "
    ab = ide_templates("ab", "en")[0]
    assert prompting.render(ab, tok, False, sentence_a="X.", sentence_b="Y.") == (
        "Your task is to compare the quality of given sentences. One of the following sentences is grammatically "
        "acceptable and the other is not. Which one is acceptable? Respond with A or B as your answer.\n\n"
        "A: X.\nB: Y.\nAnswer: ")
    zh = ide_templates("yn", "zh")[1]
    assert prompting.render(zh, tok, False, sentence="我喜欢书。") == (
        "您的任务是评估给定文本的质量。下面的句子语法正确吗？请用“是”或“否”回答。\n\n我喜欢书。\n答案：")


def test_instruct_prompts_use_the_chat_template(tiny):
    _, tok = tiny("tiny-llama-instruct")
    yn = ide_templates("yn", "en", "chat")[0]
    assert prompting.render(yn, tok, True, sentence=SENT) == (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" + YN_EN_SYSTEM + "<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\n" + YN_EN_USER + SENT + "<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n")
    _, qtok = tiny("tiny-qwen2-instruct")
    zh = ide_templates("yn", "zh", "chat")[0]
    text = prompting.render(zh, qtok, True, sentence="我喜欢书。")
    assert text.startswith("<|start_header_id|>system<|end_header_id|>\n\n您的任务是评估给定文本的质量。<|eot_id|>")


def test_chat_template_without_system_role_gets_system_in_front(tiny):
    _, tok = tiny("tiny-llama-instruct")
    tok = copy.deepcopy(tok)
    tok.chat_template = ("{% for m in messages %}{% if m['role'] == 'system' %}"
                         "{{ raise_exception('System role not supported') }}{% endif %}"
                         "[INST] {{ m['content'] }} [/INST]{% endfor %}")
    yn = ide_templates("yn", "en", "chat")[0]
    assert prompting.render(yn, tok, True, sentence=SENT) == f"[INST] {YN_EN_SYSTEM}\n\n{YN_EN_USER}{SENT} [/INST]"


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-llama-instruct", "tiny-qwen2", "tiny-qwen2-instruct"])
def test_exactly_one_document_start_token(tiny, name):
    model, tok = tiny(name)
    scorer = Scorer(model, tok, progress=False)
    instruct = name.endswith("instruct")
    text = prompting.render(ide_templates("yn", "en", "chat" if instruct else "base")[0], tok, instruct, sentence=SENT)
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
    model, tok = tiny(name)
    scorer = Scorer(model, tok, progress=False)
    pairs = select_pairs(data.load("blimp"), 1).head(6)
    files = run_methods(scorer, pairs, ["yesno", "yesno_released"], templates=[2], model_name=name, dataset="blimp",
                        store=ScoreStore(tmp_path))
    scores = load_files(files)
    for row in scores.itertuples():
        raw, probs = _reference_answer_logits(model, scorer, row.prompt_good, ["Yes", "No"])
        expected = (probs[0] / (probs[0] + probs[1])).item() if row.method == "yesno" else \
            (raw[0] / (raw[0] + raw[1])).item()
        # the raw-logit ratio divides by logit(Yes) + logit(No), which can be near 0: relative tolerance
        assert row.score_good == pytest.approx(expected, rel=1e-4, abs=1e-5), row.method


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-qwen2-instruct", "tiny-mixtral", "tiny-gpt2"])
def test_outlines_and_logit_paths_agree(tiny, name, tmp_path):
    model, tok = tiny(name)
    scorer = Scorer(model, tok, progress=False)
    pairs = select_pairs(data.load("blimp"), 3).head(200)
    instruct = name.endswith("instruct")
    table = prompting.ab_table(scorer, pairs, ide_templates("ab", "en", "chat" if instruct else "base")[0], instruct,
                               seed=42, outlines_model=prompting.OutlinesAB(model, tok))
    differ = table[table.answer != table.answer_outlines]
    if len(differ):
        print(differ[["lp_a", "lp_b", "answer", "answer_outlines"]])
    assert len(table) == 200 and (table.answer == table.answer_outlines).mean() >= 0.99
    assert tok.padding_side == "right"


def test_ab_slots_are_seeded_and_stored(tiny, tmp_path):
    model, tok = tiny("tiny-gpt2")
    pairs = select_pairs(data.load("blimp"), 1).head(40)
    slots = prompting.good_slots(40, 42)
    assert (slots == prompting.good_slots(40, 42)).all() and not (slots == prompting.good_slots(40, 7)).all()
    assert 10 < (slots == "A").sum() < 30
    files = run_methods(Scorer(model, tok, progress=False), pairs, ["ab"], templates=[1], model_name="tiny-gpt2",
                        dataset="blimp", store=ScoreStore(tmp_path), use_outlines=False)
    s = load_files(files)
    assert list(s.good_slot) == list(slots)
    good_letter_lp = np.where(s.good_slot == "A", s.lp_a, s.lp_b)
    np.testing.assert_allclose(s.score_good, good_letter_lp)
    assert (s.correct == (np.where(s.good_slot == "A", s.answer == "A", s.answer == "B"))).all()


def test_balanced_accuracy_by_hand():
    labels = [True, True, True, False, False]
    preds = [True, True, False, True, False]
    assert prompting.balanced_accuracy(labels, preds) == pytest.approx((2 / 3 + 1 / 2) / 2)
    with pytest.raises(ValueError, match="both acceptable and unacceptable"):
        prompting.balanced_accuracy([True, True], [True, False])


def test_hu_levy_summaries_by_hand():
    judgment = pd.DataFrame({"direct_good": [-10.0, -12.0, -8.0, -20.0], "direct_bad": [-11.0, -11.0, -9.0, -25.0]})
    for name in metalinguistic.HL_PROMPTS:
        judgment[f"{name}_yes_good"] = [-1.0, -2.0, -1.0, -0.5]
        judgment[f"{name}_no_good"] = [-2.0, -1.0, -3.0, -1.0]
        judgment[f"{name}_yes_bad"] = [-1.5, -1.0, -2.0, -1.0]
        judgment[f"{name}_no_bad"] = [-1.0, -2.0, -1.0, -2.0]
    s = metalinguistic.summarize("sentence_judgment", judgment).set_index("prompt")
    # said Yes: good 1,0,1,1 (3 of 4 acceptable), bad 0,1,0,1 (2 of 4 unacceptable rejected)
    assert s.loc["metaInstruct", "balanced_accuracy"] == pytest.approx((3 / 4 + 2 / 4) / 2)
    # Yes differential good - bad: 0.5, -1.0, 1.0, 0.5 -> 3 of 4 pairs
    assert s.loc["metaInstruct", "pair_accuracy"] == pytest.approx(0.75)
    assert s.loc["direct", "pair_accuracy"] == pytest.approx(0.75)
    direct, meta = np.array([1.0, -1.0, 1.0, 5.0]), np.array([0.5, -1.0, 1.0, 0.5])
    assert s.loc["metaInstruct", "consistency_r"] == pytest.approx(np.corrcoef(direct, meta)[0, 1])
    comparison = pd.DataFrame({"direct": [1.0, -2.0, 3.0], **{n: [0.5, 0.2, 1.0] for n in metalinguistic.HL_PROMPTS}})
    c = metalinguistic.summarize("sentence_comparison", comparison).set_index("prompt")
    assert c.loc["direct", "accuracy"] == pytest.approx(2 / 3) and c.loc["metaQuestionSimple", "accuracy"] == 1.0


def test_hu_levy_direct_word_prediction_matches_engine(tiny):
    model, tok = tiny("tiny-gpt2")
    scorer = Scorer(model, tok, progress=False)
    items = data.load("hl_p18").head(3)
    table = metalinguistic.word_prediction(scorer, items)
    first = items.iloc[0]
    expected = scorer.score([Request(first.prefix, " " + first.continuation)])[0].total
    assert table.direct.iloc[0] == pytest.approx(expected)
    assert {"metaQuestionSimple", "metaInstruct", "metaQuestionComplex"} <= set(table.columns)
    with pytest.raises(KeyError, match="no metaInstruct prompt for word_comparison in 'zh'"):
        metalinguistic.prompt("word_comparison", "zh", "metaInstruct")
