"""The results explorer (helpers.explore): its tables equal a recomputation from the score files,
its item files hold every stored decision and the token view is the stored log-probs in bits,
the command and the server refuse what they cannot do in one line, and make report's index links
it. The page in a browser: tests/test_explore_browser.py."""
from __future__ import annotations

import json
import math
import urllib.request
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explore_store import write_tiny_store
from synthetic_scores import PARADIGMS, write_store
from helpers.cli import main
from helpers.data.selection import select
from helpers.explore import ExploreError, build
from helpers.explore.page import read_data
from helpers.explore.serve import in_background, server
from helpers.explore.tokens import SideTokens, surprisal
from helpers.store import ScoreStore, read_metadata
from helpers.sweep import examples

LN2 = math.log(2)


def stored(root: Path) -> pd.DataFrame:
    """Every score file of pairs read plainly (pandas, no helpers.store reader), one row per pair."""
    frames = []
    for path in sorted(root.rglob("*.parquet")):
        meta = read_metadata(path)
        frame = pd.read_parquet(path)
        if "correct" in frame:
            frames.append(frame.assign(model=meta["model_name"], method=meta["method"],
                                       template=str(meta.get("template_id") or "none")))
    return pd.concat(frames, ignore_index=True)


def item_file(out: Path, path: str) -> dict:
    text = (out / path).read_text(encoding="utf-8")
    head = f"explorerItems({json.dumps(path)},"
    assert text.startswith(head) and text.endswith(");\n")
    return json.loads(text[len(head):-3])


def mean(values) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


@pytest.fixture
def synthetic(tmp_path):
    root = tmp_path / "scores"
    write_store(root, models=("m1", "m2"))
    single = pd.DataFrame({"dataset": "cola", "paradigm": "gj04", "item_id": [0, 1], "label": [1, 0],
                           "score": [-3.0, -4.0]})
    ScoreStore(root).write(single, "cola", "m1", "lp", None, {"model_name": "m1", "method": "lp", "template_id": None,
                                                             "dataset": "cola", "weights": "weights-of-m1"})
    return root


def test_tables_equal_a_recomputation_from_the_score_files(synthetic, tmp_path):
    explorer = build(synthetic, tmp_path / "explore")
    data = read_data(explorer.index)
    scores = stored(synthetic)
    per_template = {key: (g["correct"].to_numpy().sum() / len(g), int(g["tie"].sum()), len(g))
                    for key, g in scores.groupby(["dataset", "model", "method", "template"])}
    overview = {(r["dataset"], r["model"], r["method"]): r for r in data["overview"]}
    assert len(overview) == len(data["overview"]) == 2 * 5  # models x methods; cola (single sentences) left out
    best_of = {}
    for (dataset, model, method), row in overview.items():
        templates = sorted(t for d, m, me, t in per_template if (d, m, me) == (dataset, model, method))
        accuracies = [per_template[(dataset, model, method, t)][0] for t in templates]
        assert row["templates"] == len(templates)
        assert row["accuracy_mean"] == mean(accuracies)
        assert row["best_accuracy"] == max(accuracies)
        assert accuracies[templates.index(row["best_template"])] == max(accuracies)
        assert row["ties"] == sum(per_template[(dataset, model, method, t)][1] for t in templates)
        assert row["pairs"] == 24
        if len(templates) > 1:
            assert row["accuracy_sd"] == pytest.approx(np.std(accuracies, ddof=1), rel=1e-12)
        else:
            assert row["accuracy_sd"] is None
        best_of[(dataset, model, method)] = row["best_template"]
    rows = data["paradigms"]
    assert len(rows) == len(PARADIGMS) * 10
    for row in rows:
        key = (row["dataset"], row["model"], row["method"])
        of = scores[(scores["model"] == row["model"]) & (scores["method"] == row["method"])
                    & (scores["paradigm"] == row["paradigm"])]
        by = {t: g["correct"].to_numpy().sum() / len(g) for t, g in of.groupby("template")}
        assert row["accuracy_mean"] == mean([by[t] for t in sorted(by)])
        assert row["accuracy_best"] == by[best_of[key]]
        assert row["pairs"] == 6 and row["phenomenon"] == PARADIGMS[row["paradigm"]][0]
    assert any(n.startswith("cola: single sentences, not pairs (m1; lp)") for n in data["notes"])
    heat = (explorer.index.parent / data["figures"]["blimp"]["paradigms"]).read_text()
    assert all(f">{p}<" in heat for p in PARADIGMS)  # one row per paradigm, the names kept as text


def check_decisions(out: Path, data: dict, scores: pd.DataFrame) -> int:
    """Every stored (score_good, score_bad, correct, tie) is in its item file; how many were compared."""
    compared = 0
    for dataset, models in data["items"].items():
        for model, files in models.items():
            for paradigm, path in files.items():
                payload = item_file(out, path)
                assert (payload["dataset"], payload["model"], payload["paradigm"]) == (dataset, model, paradigm)
                rows = scores[(scores["dataset"] == dataset) & (scores["model"] == model)
                              & (scores["paradigm"] == paradigm)]
                for k, column in enumerate(payload["columns"]):
                    mine = rows[(rows["method"] == column["method"]) & (rows["template"] == column["template"])]
                    decided = payload["decisions"][k]
                    assert [p["id"] for p in payload["pairs"]] == mine["pair_id"].tolist()
                    assert decided["g"] == mine["score_good"].tolist() and decided["b"] == mine["score_bad"].tolist()
                    assert decided["c"] == mine["correct"].astype(float).tolist()
                    assert decided["t"] == mine["tie"].tolist()
                    compared += len(mine)
    return compared


def test_item_files_hold_every_stored_decision(synthetic, tmp_path):
    explorer = build(synthetic, tmp_path / "explore")
    data = read_data(explorer.index)
    scores = stored(synthetic)
    assert check_decisions(explorer.index.parent, data, scores) == len(scores[scores["dataset"] == "blimp"])
    assert explorer.item_files == 2 * len(PARADIGMS)
    payload = item_file(explorer.index.parent, data["items"]["blimp"]["m1"]["p_plain"])
    assert all(p["tokens"] is None and p["good"] is None for p in payload["pairs"])  # no tokens, no data here
    assert "blimp / m1: lp's files hold no token log-probs: no token view" in data["notes"]


def test_the_token_view_is_the_stored_log_probs_in_bits(scratch, tiny, tmp_path):
    root = tmp_path / "scores"
    write_tiny_store(root, tiny)
    explorer = build(root, tmp_path / "explore")
    out, data = explorer.index.parent, read_data(explorer.index)
    scores = stored(root)
    assert check_decisions(out, data, scores) == len(scores)
    assert sorted(data["items"]) == ["blimp", "climp"] and sorted(data["items"]["blimp"]) == ["tiny-gpt2", "tiny-llama"]
    sentences = {"blimp": select("blimp").frame.set_index(["paradigm", "pair_id"])}
    seen = defaultdict(int)
    for dataset, models in data["items"].items():
        for model, files in models.items():
            lp = scores[(scores["dataset"] == dataset) & (scores["model"] == model) & (scores["method"] == "lp")]
            lp = lp.set_index(["paradigm", "pair_id"])
            for paradigm, path in files.items():
                payload = item_file(out, path)
                assert payload["tokens_from"] == "lp"
                for pair in payload["pairs"]:
                    row = lp.loc[(paradigm, pair["id"])]
                    for side in ("good", "bad"):
                        view, logprobs = pair["tokens"][side], row[f"token_lp_{side}"]
                        assert view["s"] == [-x / LN2 for x in logprobs]  # bits, exactly the quickstart's unit
                        assert np.allclose(view["s"], -np.log2(np.exp(logprobs)), rtol=1e-12, atol=0)
                        assert len(view["t"]) == len(view["w"]) == row[f"n_tokens_{side}"]
                        firsts = [t for k, t in enumerate(view["t"]) if "part" not in view or view["part"][k][0] == 1]
                        assert "".join(firsts) == pair[side]  # the tokens' spans cover the sentence
                        assert "".join(view["words"]) == pair[side].replace(" ", "")
                        assert view["w"] == sorted(view["w"])
                        if dataset == "blimp":  # from data/processed; climp's decoded from the token ids
                            assert pair[side] == sentences["blimp"].loc[(paradigm, pair["id"]), side]
                    columns = pair["tokens"]["columns"]
                    assert any(differs for _, _, differs in columns)
                    seen[dataset] += 1
                    seen["parts"] += sum("part" in pair["tokens"][side] for side in ("good", "bad"))
    assert seen == {"blimp": 2 * 3 * 2, "climp": 2, "parts": 4}  # climp's characters: several bytes, several tokens
    assert "climp: not prepared in data/processed (notebook 01), so its sentences are decoded from the stored " \
           "token ids" in data["notes"]


def test_token_texts_without_the_tokenizer_or_its_offsets(tiny):
    tokenizer = tiny("tiny-gpt2").tokenizer
    ids = tokenizer("The cats sleep.", add_special_tokens=False)["input_ids"]
    logprobs = [-1.5 * (k + 1) for k in range(len(ids))]
    bits = [-x / LN2 for x in logprobs]
    plain = SideTokens(None, [None], [ids], [logprobs]).view(0)
    assert plain == {"text": None, "s": bits, "t": [f"#{i}" for i in ids]}  # no tokenizer: ids, no words
    decoded = SideTokens(tokenizer, [None], [ids], [logprobs]).view(0)  # no sentence: decoded from the ids
    assert decoded["text"] == "The cats sleep." and "".join(decoded["t"]) == decoded["text"]
    assert decoded["words"] == ["The", "cats", "sleep", "."] and decoded["s"] == bits
    other = SideTokens(tokenizer, ["The dogs sleep."], [ids], [logprobs]).view(0)  # ids of another sentence
    assert "words" not in other and other["t"] == [tokenizer.decode([i]) for i in ids]
    assert surprisal([-math.inf, 0.0, -LN2]) == [None, 0.0, 1.0]


def test_the_command_and_the_server_say_what_is_wrong(synthetic, tmp_path, capsys):
    out = tmp_path / "explore"
    assert main(["explore", "--root", str(tmp_path / "nothing"), "--out", str(out)]) == 2
    assert "no score store at" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["explore", "--root", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "no score files under" in capsys.readouterr().err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.tex").write_text("keep me")
    assert main(["explore", "--root", str(synthetic), "--out", str(busy)]) == 2
    assert "is not an explorer folder" in capsys.readouterr().err and (busy / "thesis.tex").read_text() == "keep me"
    assert main(["explore", "--root", str(synthetic), "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["explore", "--root", str(synthetic), "--out", str(out)]) == 0  # a rebuild replaces its own folder
    srv, url = in_background(out)
    try:
        with pytest.raises(ExploreError, match="choose another port with --port N"):
            server(out, srv.server_address[1])
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200 and b"Results explorer" in r.read()
        path = read_data(out / "index.html")["items"]["blimp"]["m2"]["p_shuffle"]
        with urllib.request.urlopen(url + path, timeout=10) as r:
            assert r.read().decode().startswith(f'explorerItems("{path}",')
    finally:
        srv.shutdown()
        srv.server_close()
    with pytest.raises(ExploreError, match="holds no explorer"):
        server(tmp_path / "empty", 0)


def test_make_report_links_the_explorer_and_its_snapshot(tmp_path, monkeypatch):
    out = tmp_path / "report"
    write_store(out / "results" / "scores", models=("m1",))
    pages = examples.plan("demo-en", ["02"], out)

    def no_browser(index, folder, stem):
        raise examples.SnapshotUnavailable("/usr/bin/chromium is missing")

    monkeypatch.setattr(examples, "snapshot", no_browser)
    link = examples.add_explorer(out)
    assert link.index == out / "explore" / "index.html" and link.index.is_file()
    page = examples.index_html(pages, "demo-en", 5, link, out)
    assert '<a href="explore/index.html">The results explorer</a>' in page
    assert "no snapshot: /usr/bin/chromium is missing" in page and "<img" not in page

    def shots(index, folder, stem):
        return [Path(folder) / f"{stem}-overview.png", Path(folder) / f"{stem}-item.png"]

    monkeypatch.setattr(examples, "snapshot", shots)
    page = examples.index_html(pages, "demo-en", 5, examples.add_explorer(out), out)
    assert page.count('<img class="snapshot" src="explore/snapshot-') == 2 and "no snapshot" not in page
    empty = tmp_path / "empty-report"
    (empty / "results" / "scores").mkdir(parents=True)
    link = examples.add_explorer(empty)
    assert link.index is None and link.note.startswith("no explorer: no score files under")
    assert "no explorer: no score files" in examples.index_html(pages, "demo-en", 5, link, empty)


def test_the_explorer_shows_what_the_readers_refuse_and_lists_the_files_its_tables_leave_out(synthetic, tmp_path):
    """A model whose files mix two quantizations (the readers stop) is left out with the readers'
    reason, not a crash; a primed and a few-shot file beside a model's tables are listed by kind."""
    from synthetic_scores import pairs_frame

    store = ScoreStore(synthetic)
    frame = pairs_frame("blimp").assign(score_good=1.0, score_bad=0.5, correct=True, tie=False)
    base = {"method": "lp", "template_id": None, "dataset": "blimp"}
    store.write(frame, "blimp", "m2", "meanlp", None, {**base, "model_name": "m2", "method": "meanlp",
                                                       "weights": "weights-of-m2", "quant": "4bit"})
    store.write(frame, "blimp", "m1", "lp", None, {**base, "model_name": "m1", "weights": "weights-of-m1",
                                                   "context": "in_acceptable"}, tag="primed")
    store.write(frame, "blimp", "m1", "lp", None, {**base, "model_name": "m1", "weights": "weights-of-m1",
                                                   "fewshot_k": 2}, tag="2shot")
    explorer = build(synthetic, tmp_path / "explore")
    assert explorer.models == ["m1"]  # m2 refused by the readers: shown as a note, not a crash
    notes = "\n".join(explorer.notes)
    assert "not shown: blimp/m2: m2 on blimp has scores under 2 settings (quant=4bit" in notes
    assert "blimp/m1: 1 file(s) not in these tables: primed (06 reads them): lp__primed.parquet" in notes
    assert "blimp/m1: 1 file(s) not in these tables: 2-shot (03's few-shot section reads them): lp__2shot.parquet" \
        in notes


def test_builds_started_together_each_leave_a_whole_page(synthetic, tmp_path):
    """Three `explore` builds of one store into one folder at once (a sweep's jobs, a user's command):
    each succeeds, one after another under the folder's lock, and the page is whole, as one build
    alone writes it."""
    import subprocess
    import sys

    alone = read_data(build(synthetic, tmp_path / "alone").index)
    out = tmp_path / "explore"
    code = "import sys; from helpers.explore import build; build(sys.argv[1], sys.argv[2])"
    started = [subprocess.Popen([sys.executable, "-c", code, str(synthetic), str(out)], stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    assert [p.wait(timeout=300) for p in started] == [0, 0, 0], [p.stderr.read()[-2000:] for p in started]
    together = read_data(out / "index.html")
    assert together["overview"] == alone["overview"] and together["paradigms"] == alone["paradigms"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".explore-")]  # no folder left aside


def test_hu_levy_order_averaged_ties_are_summarised_as_the_notebooks_count_them(tmp_path):
    """A Hu & Levy comparison decided in each answer order apart (correct 0, 0.5 or 1): a tie in one
    order is half a tie, in the explorer's overview as in 03's summary (helpers.analysis.hu_levy)."""
    from helpers.analysis import hu_levy
    from helpers.explore.build import file_groups, order_averaged
    from helpers.explore.tables import overview, pair_rows
    from helpers.store import ScoreStore, load_scores

    # per item, (good, bad) log-probs in the good-first order and in the bad-first order
    orders = [((-1.0, -2.0), (-1.0, -2.0)),  # right twice: 1
              ((-1.0, -1.0), (-1.0, -2.0)),  # a tie, then right: 0.5, half a tie
              ((-2.0, -2.0), (-3.0, -3.0)),  # two ties: 0, a whole tie
              ((-3.0, -1.0), (-1.0, -2.0))]  # wrong, then right: 0.5
    frame = pd.DataFrame({"dataset": "hl_blimp", "paradigm": "p", "pair_id": range(4),
                          "lp_good_first_good": [o[0][0] for o in orders], "lp_good_first_bad": [o[0][1] for o in orders],
                          "lp_bad_first_good": [o[1][0] for o in orders], "lp_bad_first_bad": [o[1][1] for o in orders]})
    credit = sum((frame[f"lp_{o}_good"] > frame[f"lp_{o}_bad"]).astype(float) for o in ("good_first", "bad_first")) / 2
    good = (frame.lp_good_first_good + frame.lp_bad_first_good) / 2
    bad = (frame.lp_good_first_bad + frame.lp_bad_first_bad) / 2
    frame = frame.assign(score_good=good, score_bad=bad, correct=credit, tie=good == bad)
    store = ScoreStore(tmp_path)
    files = [store.write(frame, "hl_blimp", "m1", "hl_word_comparison", prompt,
                         {"model_name": "m1", "method": "hl_word_comparison", "template_id": prompt,
                          "dataset": "hl_blimp", "weights": "w", "order_average": "accuracy"})
             for prompt in ("direct", "metaQuestionSimple")]
    scores = load_scores("hl_blimp", "m1", root=tmp_path)
    summary = hu_levy.summarize(scores).set_index("prompt").loc["direct"]
    assert (summary.accuracy, summary.tie_share, summary.expected_accuracy) == (0.5, 0.375, 0.6875)
    pairs, _ = pair_rows(scores, order_averaged(file_groups(files)))
    row = overview(pairs).iloc[0]
    assert (row.pairs, row.ties, row.accuracy_mean) == (4, 3.0, 0.5)  # 1.5 ties in each of the two prompts
    assert (row.expected_accuracy_mean, row.accuracy_ties_right_mean) == (summary.expected_accuracy,
                                                                         summary.accuracy_ties_right)
    whole, _ = pair_rows(scores)  # read as whole ties (the stored tie of the averaged log-probs): 1 of 4
    assert overview(whole).iloc[0].expected_accuracy_mean == 0.625
