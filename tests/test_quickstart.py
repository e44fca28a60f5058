"""00_quickstart: words from character offsets, the pair's decisions against the runner's score
files, teaching-friendly errors that leave the live controls working, the paradigm browser,
and the notebook run headlessly by papermill with per-token values equal to
``python -m helpers score --json``."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import papermill as pm
import pytest

from helpers import paths
from helpers.explain import pair as explain, words as word_view
from helpers.explain.scorers import ExplainError, Scorers
from helpers.explain import view as explain_view
from helpers.data.selection import DatasetSelection
from helpers.store import ScoreStore, load_files
from helpers.runner import run_methods
from helpers.engine import Request, CausalScorer
from helpers.settings import Settings

GOOD, BAD = "The cats annoy Tim.", "The cats annoys Tim."


def test_words_come_from_character_offsets():
    text = "Most legislatures haven't disliked children."
    assert [text[s:e] for s, e in word_view.word_spans(text)] == [
        "Most", "legislatures", "haven't", "disliked", "children", "."]
    zh = "我喜欢看书。"
    assert [zh[s:e] for s, e in word_view.word_spans(zh)] == list(zh)
    # tokens " Most", " legis", "latures", " haven", "'t": each word gets its tokens
    words, of_token = word_view.group_tokens(
        "Most legislatures haven't", [(0, 4), (4, 11), (11, 17), (17, 23), (23, 25)]
    )
    assert words == [(0, 4), (5, 17), (18, 25)] and of_token == [0, 1, 1, 2, 2]
    # a token across two characters merges them into one word; a byte-level piece stays with its character
    words, of_token = word_view.group_tokens("我喜欢书。", [(0, 2), (2, 3), (3, 4), (3, 4), (4, 5)])
    assert words == [(0, 2), (2, 3), (3, 4), (4, 5)] and of_token == [0, 1, 2, 2, 3]


def test_alignment_marks_only_the_words_that_differ():
    good = "Who should Derek hug after shocking Richard ?".split()
    bad = "Who should Derek hug Richard after shocking ?".split()
    cols = word_view.align_words(good, bad)
    assert [(g, b) for g, b, d in cols if d] == [(None, 4), (6, None)]  # "Richard" moved
    assert [(g, b) for g, b, d in cols if not d] == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (5, 6), (7, 7)]
    assert [d for *_, d in word_view.align_words(["The", "cats", "annoy"], ["The", "cats", "annoys"])] == [
        False, False, True]


def test_the_pair_decisions_equal_the_runners_score_files(tiny, tmp_path):
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False))
    ex = explain.explain_pair(scorer, GOOD, BAD, template=2)
    frame = pd.DataFrame({"dataset": "blimp", "language": "en", "paradigm": "p", "phenomenon": "x", "field": "syntax",
                          "pair_id": [0], "good": [GOOD], "bad": [BAD]})
    files = run_methods(
        scorer,
        DatasetSelection("blimp", frame),
        list(explain.DECISION_METHODS),
        {"templates": [2], "use_outlines": False},
        store=ScoreStore(tmp_path),
    )
    stored = load_files(files).set_index("method")
    got = ex.decisions.set_index("method")
    assert list(got.index) == list(explain.DECISION_METHODS)
    for method in explain.DECISION_METHODS:
        assert got.score_good[method] == pytest.approx(stored.score_good[method], abs=1e-6), method
        assert got.score_bad[method] == pytest.approx(stored.score_bad[method], abs=1e-6), method
        assert got.correct[method] == bool(stored.correct[method]), method
    # the token view: LP is the sum of the tokens, a word's surprisal the sum of its tokens', in bits
    tokens, words = ex.tokens, ex.words
    for side in ("good", "bad"):
        t = tokens[tokens.side == side]
        assert t.logprob.sum() == pytest.approx(got[f"score_{side}"]["lp"], abs=1e-9)
        per_word = t.groupby("word").surprisal.sum()
        np.testing.assert_allclose(words[words.side == side].surprisal, per_word, rtol=1e-12)
        np.testing.assert_allclose(t.surprisal, -t.logprob / math.log(2), rtol=1e-12)
        assert "".join(t.text).replace(" ", "") == (GOOD if side == "good" else BAD).replace(" ", "")
    assert words[words.differs].text.tolist() == ["annoy", "annoys"]
    assert set(tokens[tokens.differs].word) == {2}
    assert ex.sums.set_index("side").words.tolist() == [5, 5]


def test_teaching_errors_say_what_to_do_and_the_controls_keep_working(tiny_dir):
    scorer = Scorers().get("tiny-gpt2")
    cases = {("", BAD): "The acceptable sentence is empty", (GOOD, "   "): "The unacceptable sentence is empty",
             (GOOD, GOOD): "The two sentences are the same",
             ("The cat " * 600, BAD): "tokens long, but tiny-gpt2 reads at most 1,024 tokens"}
    for (good, bad), said in cases.items():
        with pytest.raises(ExplainError, match=said):
            explain.explain_pair(scorer, good, bad)
    with pytest.raises(ExplainError, match="There is no model called 'demo-eng'.*Did you mean 'demo-en'"):
        Scorers().get("demo-eng")
    with pytest.raises(ExplainError, match="'llama3' cannot be loaded on this machine"):
        Scorers().get("llama3")
    # in the notebook: a message in the output, no exception; then the next input works
    shown, ex = explain_view.pair_outputs("", BAD, "tiny-gpt2")
    assert ex is None and len(shown) == 1 and 'class="qs-error"' in shown[0].data and "is empty" in shown[0].data
    shown, ex = explain_view.pair_outputs(GOOD, BAD, "no-such-model")
    assert ex is None and "There is no model called" in shown[0].data
    shown, ex = explain_view.pair_outputs(GOOD, BAD, "tiny-gpt2", "yesno")
    assert ex is not None and [type(s).__name__ for s in shown] == ["HTML", "Image", "Styler"]
    assert 'class="qs-decisions"' in shown[2].to_html()
    # the live controls: a wrong value shows its message, the next value is scored again
    app = explain_view.PairExplorer(GOOD, BAD, "tiny-gpt2")
    app.refresh()
    assert app.result is not None
    app.controls["good"].value = ""
    assert app.result is None
    app.controls["model"].value = "tiny-gpt"
    app.controls["good"].value = "The dogs bark."
    assert app.result is None
    app.controls["model"].value = "tiny-gpt2"
    assert app.result is not None and app.result.good == "The dogs bark." and app.result.bad == BAD


def test_live_redraws_run_one_at_a_time(tiny_dir):
    """JupyterLab's widgets under ipykernel 7 can have two changes handled on two threads at once (the
    main thread and a subshell: seen in the browser test, where two quick edits drew half a figure each);
    matplotlib cannot draw two figures at once, so a control's redraws wait for each other, every
    figure drawn comes out whole (the same PNG as drawn alone), and the last redraw shows the final values."""
    app = explain_view.PairExplorer(GOOD, BAD, "tiny-gpt2")
    alone = next(s for s in explain_view.pair_outputs(GOOD, BAD, "tiny-gpt2", scorers=app.scorers)[0]
                 if type(s).__name__ == "Image").data
    running, most, figures, compute = [0], [0], [], app.compute

    def slow(**values):
        running[0] += 1
        most[0] = max(most[0], running[0])
        time.sleep(0.2)
        try:
            shown, result = compute(**values)
            figures.extend(s.data for s in shown if type(s).__name__ == "Image")
            return shown, result
        finally:
            running[0] -= 1

    app.compute = slow
    threads = [threading.Thread(target=app.refresh) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1 and len(figures) == 3 and all(f == alone for f in figures)
    app.controls["bad"].value = "The cats annoyed Tim."
    assert app.result.bad == "The cats annoyed Tim."


def test_paradigm_browser_judges_the_first_pairs_and_explains_the_hardest(scratch, tiny_dir):
    scorer = Scorers().get("tiny-gpt2")
    view = explain.browse_paradigm(scorer, "blimp", "regular_plural_subject_verb_agreement_1", 6, "lp")
    assert len(view.pairs) == 6 and view.pairs.pair_id.tolist() == list(range(6))
    lps = [s.total for s in scorer.score([Request("", t) for t in view.pairs.good.tolist() + view.pairs.bad.tolist()])]
    np.testing.assert_allclose(view.pairs.score_good, lps[:6], atol=1e-5)
    np.testing.assert_allclose(view.pairs.score_bad, lps[6:], atol=1e-5)
    assert view.accuracy == pytest.approx((view.pairs.score_good > view.pairs.score_bad).mean())
    hardest = view.pairs.loc[view.pairs.margin.idxmin()]
    assert (view.hardest.good, view.hardest.bad) == (hardest.good, hardest.bad)
    assert len(explain.paradigms("climp")) == 16
    said = "no paradigm 'regular_plural_subject_verb_agreement'. Did you mean 'regular_plural_subject_verb_agreement_2'"
    with pytest.raises(ExplainError, match=said):
        explain.browse_paradigm(scorer, "blimp", "regular_plural_subject_verb_agreement", 3)


@pytest.mark.slow
def test_quickstart_runs_headlessly_and_matches_the_score_command(scratch):
    good, bad = "The dogs bark at night.", "The dogs barks at night."
    out = scratch / "00.ipynb"
    pm.execute_notebook(str(paths.NOTEBOOKS / "00_quickstart.ipynb"), str(out), cwd=str(paths.NOTEBOOKS),
                        parameters=dict(good=good, bad=bad, model="tiny-gpt2", pairs=4,
                                        answer_models=["smollm2-135m-instruct"]), progress_bar=False,
                        kernel_name="python3")
    saved = pd.read_csv(scratch / "outputs" / "tables" / "00_quickstart_tokens__tiny-gpt2.csv")
    cli = subprocess.run([sys.executable, "-m", "helpers", "score", "--model", "tiny-gpt2", "--json", good, bad],
                         capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in cli.stdout.splitlines()]
    for side, line in zip(("good", "bad"), lines):
        rows = saved[saved.side == side]
        assert rows.token.tolist() == line["tokens"]
        assert rows.logprob.tolist() == line["logprobs"]  # the same floats, not merely close
    outputs = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    kinds = [m for o in outputs for m in o.get("data", {})]
    assert kinds.count("image/png") == 3  # the pair, the paradigm's hardest pair and the primed pair's margins
    assert "application/vnd.jupyter.widget-view+json" not in kinds  # headless: no widgets, plain outputs
    text = json.dumps(outputs)
    assert 'class=\\"qs-decisions\\"' in text and "pairs right" in text and "Traceback" not in text
    assert "demo-en-icl: the prefix flips the judgment: LP now prefers the unacceptable sentence" in text
    answers = pd.read_csv(scratch / "outputs" / "tables" / "00_quickstart_prompt_answers__tiny-gpt2.csv")
    assert answers.model.tolist() == ["smollm2-135m-instruct"] * 3
    assert answers.question.tolist() == ["LP (log-prob, nats)", "Yes/No: P(Yes)", "A/B: P(its letter)"]
    assert answers["prefers the acceptable one"].tolist() == ["yes", "no", "no"]  # SmolLM2: LP right; Yes/No and A/B not
    streams = "".join("".join(o["text"]) for o in outputs if o["output_type"] == "stream")
    # a notebook run headless saves no bar of the model library (loading weights, a GGUF's tensors), nor stale ticks
    assert "Loading weights" not in streams and "GGUF" not in streams
    assert "\r" not in streams and "IProgress" not in streams


def test_judge_gives_the_runners_decision_for_every_pair_method(tiny, tmp_path):
    from helpers import methods as registry

    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False))
    pairs = [{"good": GOOD, "bad": BAD}, {"good": "The dogs bark.", "bad": "The dogs barks."}]
    frame = pd.DataFrame({"dataset": "blimp", "language": "en", "paradigm": "p", "phenomenon": "x", "field": "syntax",
                          "pair_id": [0, 1], "good": [p["good"] for p in pairs], "bad": [p["bad"] for p in pairs]})
    ide = [m for m in registry.READOUT_METHODS + registry.PROMPT_METHODS if m != "ab"]  # ab: outlines
    hu_levy = ["hl_sentence_judgment", "hl_sentence_comparison"]  # comparison: credit over both answer orders
    for names, template in ((ide, 1), (hu_levy, "metaQuestionSimple")):
        files = run_methods(scorer, DatasetSelection("blimp", frame), names,
                            {"templates": [template], "use_outlines": False}, store=ScoreStore(tmp_path))
        stored = load_files(files)
        judged, _ = explain.judge(scorer, pairs, names, template=template)
        assert set(judged.method) == set(names) and set(stored.template) <= {str(template), "none"}
        for name in names:
            mine = judged[judged.method == name].sort_values("item")
            theirs = stored[stored.method == name].sort_values("pair_id")
            np.testing.assert_allclose(mine.score_good, theirs.score_good, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(mine.score_bad, theirs.score_bad, atol=1e-6, err_msg=name)
            np.testing.assert_array_equal(mine.correct.astype(float), theirs.correct.astype(float), err_msg=name)
