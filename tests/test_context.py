"""Every method of 02 and 03 under a priming context: its scores equal scoring
``context + " " + input`` as one text, read over the method's own tokens only (float64
reference written here)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.methods import PROMPT_METHODS, READOUT_METHODS
from helpers.methods.hu_levy_prompt_types import prompts_for
from helpers.store import ScoreStore, load_files
from helpers.runner import RunSetup, run_methods
from helpers.engine import CausalScorer
from helpers.methods.templates import ide_templates
from helpers.settings import Settings

CONTEXT = "The dog sleeps. A teacher reads the book. Some cats run."


def logsoftmax(model, ids):
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    return torch.log_softmax(logits, -1), logits


def tokens_after(model, tok, start_id, text: str, from_char: int) -> tuple[float, list[int]]:
    """Sum of log p over the tokens of ``text`` ending after ``from_char`` or lying in the
    spaces just before it (a context's trailing spaces are scored with the target), and their ids."""
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = [start_id] + enc["input_ids"]
    lp, _ = logsoftmax(model, ids)
    spaces_from = len(text[:from_char].rstrip(" "))
    picked = [i + 1 for i, (begin, end) in enumerate(enc["offset_mapping"])
              if end > from_char or begin >= spaces_from]
    return float(sum(lp[i - 1, ids[i]] for i in picked)), [ids[i] for i in picked]


def answer_after(model, tok, start_id, prompt: str, answer: str) -> tuple[float, float]:
    """(log p(answer | prompt), raw logit of its first token), prompt and answer tokenized apart."""
    head = [start_id] + tok(prompt, add_special_tokens=False)["input_ids"]
    ids = head + tok(answer, add_special_tokens=False)["input_ids"]
    lp, logits = logsoftmax(model, ids)
    return float(sum(lp[i - 1, ids[i]] for i in range(len(head), len(ids)))), float(logits[len(head) - 1, ids[len(head)]])


@pytest.fixture(scope="module")
def scored(tiny, tmp_path_factory):
    lm = tiny("tiny-llama")
    root = tmp_path_factory.mktemp("context")
    corpus = root / "corpus.txt"
    corpus.write_text("The cat sees a dog.\nEvery teacher admires the students.\n")
    df = load("blimp")
    frame = first_per_paradigm(df[df.paradigm.isin(df.paradigm.drop_duplicates().iloc[:2])], 2)
    selection = DatasetSelection("blimp", frame, limit=2)
    scorer = CausalScorer(lm, Settings(progress=False))
    files = run_methods(
        scorer,
        selection,
        READOUT_METHODS + PROMPT_METHODS,
        {"templates": [1], "unigram_corpus": corpus},
        setup=RunSetup(context=CONTEXT),
        store=ScoreStore(root / "scores"),
    )
    hl = DatasetSelection("hl_p18", load("hl_p18").head(2))
    hl_pairs = DatasetSelection("hl_blimp", first_per_paradigm(load("hl_blimp"), 1).head(2), limit=1)
    files += run_methods(
        scorer,
        hl,
        ["hl_word_prediction"],
        {"templates": ["direct", "metaInstruct"]},
        setup=RunSetup(context=CONTEXT),
        store=ScoreStore(root / "scores"),
    )
    files += run_methods(
        scorer,
        hl_pairs,
        ["hl_sentence_judgment"],
        {"templates": ["direct", "metaQuestionSimple"]},
        setup=RunSetup(context=CONTEXT),
        store=ScoreStore(root / "scores"),
    )
    return lm, scorer, selection, load_files(files, token_columns=True)


def test_every_method_of_02_and_03_ran_under_the_context(scored):
    _, _, selection, scores = scored
    assert set(READOUT_METHODS + PROMPT_METHODS) <= set(scores.method)
    per_method = scores[scores.dataset == "blimp"].groupby("method").size()
    assert (per_method == len(selection)).all()


def test_readouts_equal_the_joined_text(scored):
    lm, scorer, selection, scores = scored
    model, tok, start = lm.model, lm.tokenizer, scorer.start_id
    prime = CONTEXT + " "
    single, compar = ide_templates("single", "en")[0], ide_templates("compar", "en")[0]
    vocab = math.log(len(tok))
    for row in scores[scores.dataset == "blimp"].itertuples():
        pair = selection.frame[(selection.frame.paradigm == row.paradigm) & (selection.frame.pair_id == row.pair_id)].iloc[0]
        for side, other in (("good", "bad"), ("bad", "good")):
            got = getattr(row, f"score_{side}")
            lp, ids = tokens_after(model, tok, start, prime + pair[side], len(prime))
            if row.method in ("lp", "meanlp", "penlp", "bf_uniform", "slor", "bf_unigram"):
                assert list(getattr(row, f"token_ids_{side}")) == ids, row.method
            if row.method == "lp":
                assert got == pytest.approx(lp, abs=1e-4)
            elif row.method == "meanlp":
                assert got == pytest.approx(lp / len(ids), abs=1e-4)
            elif row.method == "penlp":
                assert got == pytest.approx(lp / ((5 + len(ids)) / 6) ** 0.8, abs=1e-4)
            elif row.method == "bf_uniform":
                assert got == pytest.approx(lp + len(ids) * vocab, abs=1e-4)
            elif row.method in ("slor", "bf_unigram"):
                uni = getattr(row, f"uni_sum_{side}")
                expected = (lp - uni) / len(ids) if row.method == "slor" else lp - uni
                assert got == pytest.approx(expected, abs=1e-4)
            elif row.method == "slln_lp":
                assert got == pytest.approx(lp / len(ids) ** 0.5, abs=1e-4)
            elif row.method in ("lp_per_char", "lp_per_byte"):
                units = len(pair[side]) if row.method == "lp_per_char" else len(pair[side].encode("utf-8"))
                assert got == pytest.approx(lp / units, abs=1e-4)
            elif row.method == "intemplate_pmi":  # the sentence inside the template, minus alone, both after the context
                before, after = single.split("sentence")
                inside, _ = tokens_after(model, tok, start, prime + before + pair[side] + after, len(prime + before))
                assert got == pytest.approx(inside - lp, abs=1e-4)
            elif row.method.startswith("intemplate"):
                whole, whole_ids = tokens_after(model, tok, start, prime + single.fill(sentence=pair[side]), len(prime))
                n = len(whole_ids)
                expected = {"intemplate_lp": whole, "intemplate_meanlp": whole / n,
                            "intemplate_penlp": whole / ((5 + n) / 6) ** 0.8}[row.method]
                assert got == pytest.approx(expected, abs=1e-4), row.method
            elif row.method == "comparative_lp":
                text = compar.fill(sentence=pair[side], other_sentence=pair[other])
                assert got == pytest.approx(tokens_after(model, tok, start, prime + text, len(prime))[0], abs=1e-4)


def test_prompts_equal_the_joined_text(scored):
    lm, scorer, selection, scores = scored
    model, tok, start = lm.model, lm.tokenizer, scorer.start_id
    yn, ab = ide_templates("yn", "en")[0], ide_templates("ab", "en")[0]
    for row in scores[scores.method.isin(PROMPT_METHODS)].itertuples():
        pair = selection.frame[(selection.frame.paradigm == row.paradigm) & (selection.frame.pair_id == row.pair_id)].iloc[0]
        if row.method.startswith("yesno"):
            for side in ("good", "bad"):
                prompt = f"{CONTEXT} {yn.system} {yn.fill(sentence=pair[side])}"
                assert getattr(row, f"prompt_{side}") == prompt
                (yes, yes_raw), (no, no_raw) = (answer_after(model, tok, start, prompt, a) for a in ("Yes", "No"))
                expected = 1 / (1 + math.exp(no - yes)) if row.method == "yesno" else yes_raw / (yes_raw + no_raw)
                assert getattr(row, f"score_{side}") == pytest.approx(expected, rel=1e-4, abs=1e-5)
        else:
            a, b = (pair.good, pair.bad) if row.good_slot == "A" else (pair.bad, pair.good)
            prompt = f"{CONTEXT} {ab.system} {ab.fill(sentence_a=a, sentence_b=b)}"
            assert row.prompt == prompt
            lp_a, lp_b = (answer_after(model, tok, start, prompt, letter)[0] for letter in ("A", "B"))
            assert (row.lp_a, row.lp_b) == (pytest.approx(lp_a, abs=1e-4), pytest.approx(lp_b, abs=1e-4))
            if row.method == "ab":
                assert row.correct == (row.answer_outlines == row.good_slot)


def test_hu_levy_tasks_equal_the_joined_text(scored):
    lm, scorer, _, scores = scored
    model, tok, start = lm.model, lm.tokenizer, scorer.start_id
    items, pairs = load("hl_p18").head(2), first_per_paradigm(load("hl_blimp"), 1).head(2)
    meta = {p.id: p.text for p in prompts_for("word_prediction", "en", ["metaInstruct"])}
    for row in scores[scores.method == "hl_word_prediction"].itertuples():
        item = items[items.item_id == row.item_id].iloc[0]
        if row.template == "direct":
            head = f"{CONTEXT} {item.prefix}"
            expected = tokens_after(model, tok, start, f"{head} {item.continuation}", len(head))[0]
        else:
            text = meta[row.template]
            head = CONTEXT + " " + (text.replace("{full_sentence}", item.prefix + " ") if "{full_sentence}" in text
                                    else text.split("{continuation}")[0].replace("{prefix}", item.prefix))
            expected = tokens_after(model, tok, start, head + item.continuation, len(head))[0]
        assert row.score == pytest.approx(expected, abs=1e-4), row.template
    judged = {p.id: p.text for p in prompts_for("sentence_judgment", "en", ["metaQuestionSimple"])}
    rows = scores[scores.method == "hl_sentence_judgment"]
    assert set(rows.template) == {"direct", "metaQuestionSimple"}
    for row in rows.itertuples():
        pair = pairs[pairs.pair_id == row.pair_id].iloc[0]
        for side in ("good", "bad"):
            if row.template == "direct":
                prime = CONTEXT + " "
                expected = tokens_after(model, tok, start, prime + pair[side], len(prime))[0]
            else:
                head = CONTEXT + " " + judged[row.template].split("{continuation}")[0].replace("{sentence}", pair[side])
                expected = tokens_after(model, tok, start, head + "Yes", len(head))[0]
            assert getattr(row, f"score_{side}") == pytest.approx(expected, abs=1e-4)


def test_context_per_item_is_kept_in_the_rows(tiny, tmp_path):
    lm = tiny("tiny-gpt2")
    df = load("blimp").head(3)
    selection = DatasetSelection("blimp", df)
    contexts = ["A dog runs.", "", "Cats sleep. Birds sing."]
    files = run_methods(
        CausalScorer(lm, Settings(progress=False)),
        selection,
        ["lp"],
        setup=RunSetup(context=contexts),
        store=ScoreStore(tmp_path),
    )
    s = load_files(files)
    assert list(s.context) == contexts
    alone = load_files(
        run_methods(CausalScorer(lm, Settings(progress=False)), selection, ["lp"], store=ScoreStore(tmp_path / "b"))
    )
    assert s.score_good.iloc[1] == pytest.approx(alone.score_good.iloc[1], abs=1e-5)  # empty context: unchanged
    assert not np.isclose(s.score_good.iloc[0], alone.score_good.iloc[0], atol=1e-3)
    with pytest.raises(ValueError, match="2 contexts for 3 items"):
        run_methods(
            CausalScorer(lm, Settings(progress=False)),
            selection,
            ["lp"],
            setup=RunSetup(context=contexts[:2]),
            store=ScoreStore(tmp_path),
        )
