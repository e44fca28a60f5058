"""Few-shot in-template LP and Yes/No: k = 0 is the zero-shot run exactly, the examples are
never the item itself, the prompts are the documented text, the scores equal a plain float64
reference, and a shared block of examples runs once."""
from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import papermill as pm
import pytest
import torch

from helpers import paths
from helpers.methods import fewshot
from helpers.methods import prompt_text
from helpers.analysis import fewshot as fewshot_tables
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.methods.fewshot import FewShot
from helpers.store import ScoreStore, load_files, load_scores, read_metadata
from helpers.runner import run_methods
from helpers.engine import Request, CausalScorer
from helpers.methods.templates import ide_templates
from helpers.settings import Settings

SYSTEM = "Your task is to evaluate the quality of given text."
USER = "Is the following sentence grammatically acceptable? Respond with Yes or No as your answer.\n\n"
LP_1 = "The following sentence is grammatically acceptable.\n\n"


@pytest.fixture(scope="module")
def blimp():
    return load("blimp")


def pairs(frame, paradigms: int, per: int) -> DatasetSelection:
    keep = frame.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(frame[frame.paradigm.isin(keep)], per), limit=per)


def test_base_and_chat_prompts_with_examples_character_for_character(tiny):
    yn = ide_templates("yn", "en")[0]
    shots = [({"sentence": "A b."}, "Yes"), ({"sentence": "B a."}, "No")]
    tok = tiny("tiny-gpt2").tokenizer
    assert prompt_text.render(yn, tok, False, shots=shots, sentence="C c.") == (
        f"{SYSTEM} {USER}A b.\nAnswer: Yes\n\n{USER}B a.\nAnswer: No\n\n{USER}C c.\nAnswer: ")
    assert prompt_text.render(yn, tok, False, "Prime.", shots=shots[:1], sentence="C c.") == (
        f"Prime. {SYSTEM} {USER}A b.\nAnswer: Yes\n\n{USER}C c.\nAnswer: ")
    head, eot = "<|start_header_id|>{}<|end_header_id|>\n\n", "<|eot_id|>"
    chat = ide_templates("yn", "en", "chat")[0]
    got = prompt_text.render(chat, tiny("tiny-llama-instruct").tokenizer, True, shots=shots, sentence="C c.")
    assert got == ("<|begin_of_text|>" + head.format("system") + SYSTEM + eot
                   + head.format("user") + USER + "A b." + eot + head.format("assistant") + "Yes" + eot
                   + head.format("user") + USER + "B a." + eot + head.format("assistant") + "No" + eot
                   + head.format("user") + USER + "C c." + eot + head.format("assistant"))
    # a chat template without a system role: the system text opens the first user message
    bare = copy.deepcopy(tiny("tiny-llama-instruct").tokenizer)
    bare.chat_template = ("{% for m in messages %}{% if m['role'] == 'system' %}"
                          "{{ raise_exception('System role not supported') }}{% endif %}"
                          "[{{ m['role'] }}] {{ m['content'] }} {% endfor %}")
    assert prompt_text.render(chat, bare, True, shots=shots[:1], sentence="C c.") == (
        f"[user] {SYSTEM}\n\n{USER}A b. [assistant] Yes [user] {USER}C c. ")
    zh = ide_templates("yn", "zh")[0]
    assert prompt_text.render(zh, tok, False, shots=[({"sentence": "我看书。"}, "是")], sentence="书看我。") == (
        "您的任务是评估给定文本的质量。下面的句子符合语法要求吗？请用“是”或“否”回答。\n\n我看书。\n答案：是\n\n"
        "下面的句子符合语法要求吗？请用“是”或“否”回答。\n\n书看我。\n答案：")
    single = ide_templates("single", "en")[0]
    assert prompt_text.template_examples(single, ["A b.", "B a."]) == f"{LP_1}A b.\n\n{LP_1}B a.\n\n"


@pytest.mark.parametrize("source", ["other", "same"])
def test_no_item_is_among_its_own_examples(blimp, source):
    items = pairs(blimp, 12, 10).items()
    for k, seed in [(1, 0), (4, 3), (8, 1)]:
        shots = FewShot(k, source, seed)
        drawn = fewshot.draw(items, shots)
        assert drawn == fewshot.draw(items, shots)  # seeded
        assert drawn != fewshot.draw(items, FewShot(k, source, seed + 10))
        for i, idx in enumerate(drawn):
            assert len(idx) == len(set(idx)) == k and i not in idx
            mine = {items[i]["good"], items[i]["bad"]}
            assert all(not mine & {items[j]["good"], items[j]["bad"]} for j in idx)
            same = {items[j]["paradigm"] == items[i]["paradigm"] for j in idx}
            assert same == {source == "same"}
        # items share blocks: one chunk per paradigm (other); two per paradigm of at least 2k items (same)
        blocks = {tuple(idx) for idx in drawn}
        if source == "other" or 2 * k <= 10:
            assert len(blocks) <= (2 * 12 if source == "same" else 12)
        labels = fewshot.answers_order(shots)
        assert sum(labels) == (k + 1) // 2 and len(labels) == k
        judged = fewshot.judged_examples(items, shots)[0]
        assert [items[j]["good" if ok else "bad"] for j, ok in zip(drawn[0], labels)] == [s for s, _ in judged]


def test_too_few_items_and_wrong_settings_are_clear_errors(tiny, blimp, tmp_path):
    items = pairs(blimp, 3, 2).items()
    with pytest.raises(ValueError, match="fewer than k=4.*larger limit"):
        fewshot.draw(items, FewShot(4, "same"))
    with pytest.raises(ValueError, match=r"'other' \(other paradigms\) or 'same'"):
        FewShot(2, "elsewhere")
    with pytest.raises(ValueError, match="whole number >= 0"):
        FewShot(-1)
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    with pytest.raises(ValueError, match="run lp, meanlp with fewshot=0"):
        run_methods(
            scorer,
            pairs(blimp, 3, 2),
            ["lp", "meanlp", "yesno"],
            {"templates": [1], "fewshot": 2},
            store=ScoreStore(tmp_path),
        )
    with pytest.raises(ValueError, match="single items: run it with k=0"):
        fewshot.draw([{"sentence": "A b.", "paradigm": "p"}] * 3, FewShot(1))
    assert fewshot.k_values([]) == fewshot.k_values("none") == [] and fewshot.k_values("0,1, 4") == [0, 1, 4]


@pytest.mark.parametrize("name", ["tiny-gpt2", "tiny-llama-instruct"])
def test_k0_is_the_zero_shot_run_exactly(tiny, blimp, tmp_path, name):
    """k = 0 builds the very requests of the zero-shot run (so the very scores), records k = 0 with
    no source or seed, and is found in the store as the same configuration."""
    lm = tiny(name)
    scorer = CausalScorer(lm, Settings(progress=False))
    selection = pairs(blimp, 4, 2)
    store = ScoreStore(tmp_path)
    files = run_methods(scorer, selection, ["intemplate_lp", "yesno"], {"templates": [1]}, store=store)
    writes = store.writes
    again = run_methods(
        scorer,
        selection,
        ["intemplate_lp", "yesno"],
        {"templates": [1], "fewshot": FewShot(0, "same", 99)},
        store=store,
    )
    assert again == files and store.writes == writes  # same configuration: found, nothing rescored
    meta = read_metadata(files[1])
    assert (meta["fewshot_k"], meta["fewshot_source"], meta["fewshot_seed"]) == (0, None, None)
    s = load_files(files).set_index(["method", "pair_id", "paradigm"])
    yn, single = ide_templates("yn", "en", "chat" if lm.is_instruct else "base")[0], ide_templates("single", "en")[0]
    expected = []
    for item in selection.items():  # the zero-shot requests, written out as before few-shot existed
        for side in ("good", "bad"):
            prompt = prompt_text.render(yn, lm.tokenizer, lm.is_instruct, sentence=item[side])
            expected += [Request(prompt, "Yes", separate=True), Request(prompt, "No", separate=True)]
    scored = scorer.score(expected)
    yes = s.loc["yesno"]
    np.testing.assert_array_equal(yes.lp_yes_good.to_numpy(), [r.total for r in scored[0::4]])
    np.testing.assert_array_equal(yes.lp_no_bad.to_numpy(), [r.total for r in scored[3::4]])
    assert yes.prompt_good.tolist() == [r.context for r in expected[0::4]]
    lp = s.loc["intemplate_lp"]
    assert lp.input_good.tolist() == [single.fill(sentence=i["good"]) for i in selection.items()]
    # the pass's requests: per item each sentence in the template, then each alone (for intemplate_pmi)
    direct = scorer.score([Request(context, i[side]) for i in selection.items()
                           for context in (LP_1, "") for side in ("good", "bad")], with_context=True)
    np.testing.assert_array_equal(lp.score_good.to_numpy(),
                                  [r.total + float(np.sum(r.context_logprobs)) for r in direct[0::4]])


def _reference(model, ids: list[int], first: int) -> float:
    """float64 sum of log p(ids[i] | ids[:i]) for i >= first, one plain forward pass."""
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
    return float(sum(lp[i - 1, ids[i]] for i in range(first, len(ids))))


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-qwen2-instruct"])
def test_fewshot_scores_equal_a_plain_reference_and_are_stored_as_scored(tiny, blimp, tmp_path, name):
    lm = tiny(name)
    tok, model = lm.tokenizer, lm.model
    scorer = CausalScorer(lm, Settings(progress=False))
    selection = pairs(blimp, 6, 1)
    shots = FewShot(3, "other", 7)
    files = run_methods(
        scorer, selection, ["intemplate_lp", "yesno"], {"templates": [2], "fewshot": shots}, store=ScoreStore(tmp_path)
    )
    assert [f.name for f in files] == ["intemplate_lp__t2__3shot.parquet", "yesno__t2__3shot.parquet"]
    meta = read_metadata(files[1])
    assert (meta["fewshot_k"], meta["fewshot_source"], meta["fewshot_seed"]) == (3, "other", 7)
    s = load_files(files).set_index(["method", "paradigm", "pair_id"])
    items = selection.items()
    examples = fewshot.acceptable_examples(items, shots)
    judged = fewshot.judged_examples(items, shots)
    single = ide_templates("single", "en")[1]
    yn = ide_templates("yn", "en", "chat" if lm.is_instruct else "base")[1]
    start = [scorer.start_id]
    for item, ex, jd in zip(items, examples, judged):
        key = (item["paradigm"], item["pair_id"])
        # in-template LP: the template and the sentence counted, the examples' tokens not
        block = prompt_text.template_examples(single, ex)
        row = s.loc[("intemplate_lp", *key)]
        assert row.input_good == block + single.fill(sentence=item["good"])
        head = start + tok(block, add_special_tokens=False)["input_ids"]
        ids = start + tok(row.input_good, add_special_tokens=False)["input_ids"]
        assert ids[:len(head)] == head  # the block ends in a blank line: no token straddles it
        assert row.score_good == pytest.approx(_reference(model, ids, len(head)), abs=1e-4)
        target = start + tok(block + single.split()[0], add_special_tokens=False)["input_ids"]
        assert row.score_good_target == pytest.approx(_reference(model, ids, len(target)), abs=1e-4)
        # Yes/No: the stored prompt is the text scored, its examples the drawn ones
        yes_row = s.loc[("yesno", *key)]
        yes, no = "Yes", "No"
        assert yes_row.prompt_good == prompt_text.render(
            yn, tok, lm.is_instruct, shots=[({"sentence": t}, yes if ok else no) for t, ok in jd],
            sentence=item["good"])
        prompt_ids = tok(yes_row.prompt_good, add_special_tokens=False)["input_ids"]
        prompt_ids = prompt_ids if prompt_ids[:1] == start else start + prompt_ids
        for answer, column in ((yes, "lp_yes_good"), (no, "lp_no_good")):
            ids = prompt_ids + tok(answer, add_special_tokens=False)["input_ids"]
            assert getattr(yes_row, column) == pytest.approx(_reference(model, ids, len(prompt_ids)), abs=1e-4)
    # the notebook prints the first item's input at the largest k from these rows
    inputs = fewshot_tables.first_inputs(fewshot_tables.scores_by_k(files))
    first = (items[0]["paradigm"], items[0]["pair_id"])
    assert inputs == {"intemplate_lp": s.loc[("intemplate_lp", *first)].input_good,
                      "yesno": s.loc[("yesno", *first)].prompt_good}
    # few-shot files stay out of load_scores unless asked for by k
    assert load_scores("blimp", lm.name, root=tmp_path).empty
    assert len(load_scores("blimp", lm.name, root=tmp_path, where={"fewshot_k": 3})) == 2 * len(items)


def test_a_shared_block_of_examples_runs_once(tiny, blimp, tmp_path):
    """Items with the same examples share them: the tokens run grow by about one block per
    distinct block, not one per item."""
    lm = tiny("tiny-gpt2")
    tok = lm.tokenizer
    selection = pairs(blimp, 12, 2)
    items = selection.items()
    shots = FewShot(4, "other", 0)
    blocks = {tuple(idx) for idx in fewshot.draw(items, shots)}
    assert len(blocks) < len(items) / 4
    for method, share in (("intemplate_lp", "context"), ("yesno", "prefix")):
        run = {}
        for k in (0, 4):
            scorer = CausalScorer(lm, Settings(progress=False, share=share), pack=False)  # cached levels: a shared node runs once
            run_methods(
                scorer,
                selection,
                [method],
                {"templates": [1], "fewshot": k},
                store=ScoreStore(tmp_path / f"{method}{k}"),
            )
            run[k] = scorer.tokens_run
        single, yn = ide_templates("single", "en")[0], ide_templates("yn", "en")[0]
        block_tokens = []
        for idx in blocks:
            text = (prompt_text.template_examples(single, [items[j]["good"] for j in idx]) if method == "intemplate_lp"
                    else "".join(yn.fill(sentence=items[j]["good"]) + "Yes\n\n" for j in idx))
            block_tokens.append(len(tok(text)["input_ids"]))
        once = sum(block_tokens)
        every_item = sum(block_tokens) / len(blocks) * len(items)
        # each distinct block once, with the system prompt and question that open it again
        assert run[4] - run[0] <= once + 64 * len(blocks), (method, run, once)
        assert run[4] - run[0] < every_item / 4


def test_accuracy_by_k_table(tiny, blimp, tmp_path):
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    selection = pairs(blimp, 6, 2)
    files = []
    for k in (0, 2):
        files += run_methods(
            scorer, selection, ["yesno"], {"templates": [1, 2], "fewshot": k}, store=ScoreStore(tmp_path)
        )
    scores = fewshot_tables.scores_by_k(files)
    table = fewshot_tables.accuracy_by_k(scores).set_index(["method", "k"])
    for k in (0, 2):
        per_template = scores[scores.fewshot_k == k].groupby("template").correct.mean()
        assert table.loc[("yesno", k), "accuracy_mean"] == pytest.approx(per_template.mean())
        assert table.loc[("yesno", k), "accuracy_sd"] == pytest.approx(per_template.std(ddof=1))
        assert table.loc[("yesno", k), "pairs"] == 12
    mixed = pd.concat([scores, scores.assign(fewshot_source="same", fewshot_k=4)])
    with pytest.raises(ValueError, match="mix few-shot sources"):
        fewshot_tables.accuracy_by_k(mixed)


@pytest.mark.slow
def test_03_prints_the_first_few_shot_prompt_exactly_as_scored(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    model, out = "tiny-gpt2", tmp_path / "03.ipynb"
    pm.execute_notebook(str(paths.NOTEBOOKS / "03_prompting.ipynb"), str(out), cwd=str(paths.NOTEBOOKS),
                        parameters=dict(model=model, dataset="blimp", limit=1, templates=[1], hu_levy_sets="none",
                                        fewshot_ks=[0, 2]), progress_bar=False, kernel_name="python3")
    printed = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"]
                      if c["cell_type"] == "code" for o in c["outputs"])
    outputs = tmp_path / "outputs"
    folder = outputs / "scores" / "blimp" / model
    for name, column in (("yesno__t1__2shot", "prompt_good"), ("intemplate_lp__t1__2shot", "input_good")):
        scored = load_files([folder / f"{name}.parquet"]).iloc[0][column]
        assert repr(scored) in printed and scored.count(LP_1 if column == "input_good" else "\nAnswer: ") == 3
    by_k = pd.read_csv(outputs / "tables" / f"03_fewshot__{model}__blimp__limit-1.csv")
    assert sorted(by_k.k.unique()) == [0, 2] and set(by_k.method) == {"intemplate_lp", "yesno"}
    assert (by_k.pairs == 67).all()
    t3 = pd.read_csv(outputs / "tables" / f"03_prompting__{model}__blimp__limit-1.csv").set_index("method")
    # k = 0 is Part 1's zero-shot file itself
    assert by_k.set_index(["method", "k"]).loc[("yesno", 0), "accuracy_mean"] == t3.loc["yesno", "accuracy_mean"]
    assert (outputs / "figures" / f"03_fewshot__{model}__blimp__limit-1.png").is_file()
