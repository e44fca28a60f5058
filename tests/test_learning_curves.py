"""Learning curves over training checkpoints (issue 32 item 8): a revision's step from its name,
the curves of a synthetic store with exact values, two revisions of a tiny model as real Hub
revisions in a local Hugging Face cache (loaded offline through the project's loading path, stored
apart, each equal to loading its snapshot folder), and the sweep over revisions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from huggingface_hub import constants as hf_constants

from helpers import paths, sweep
from helpers.analysis import learning_curves as curves
from helpers.cli import main
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine.kinds import scorer_for
from helpers.models import ModelNotFoundError, check_loadable, resolve
from helpers.models import tiny as tiny_models
from helpers.plots import learning_curves as plots
from helpers.reporting.outputs import required_scores
from helpers.runner import run_methods
from helpers.store import ScoreStore, load_files, read_metadata
from helpers.sweep.dependencies import waits_on
from helpers.settings import Settings


# --------------------------------------------------------------------------- steps from revision names
@pytest.mark.parametrize("revision,step,tokens", [
    ("step0", 0, None), ("step1000", 1000, None), ("step143000", 143000, None),  # Pythia
    ("step1000-tokens4B", 1000, 4e9), ("step557000-tokens2336B", 557000, 2.336e12),  # OLMo
    ("step20-tokens2.5M", 20, 2.5e6), ("checkpoint-500", 500, None), ("ckpt_7", 7, None), ("42", 42, None)])
def test_a_revision_names_its_step(revision, step, tokens):
    assert curves.revision_step(revision) == step
    assert curves.revision_tokens(revision) == tokens


def test_a_revision_without_a_step_is_a_one_line_error_or_given_by_the_user():
    for name in ("main", "v1.0", "a" * 40, "step-1"):
        with pytest.raises(ValueError, match=rf"^revision '{name}' names no training step \(Pythia's 'step1000', "
                                             rf"OLMo's 'step1000-tokens4B', .*give it in steps, e\.g\. steps="):
            curves.revision_step(name)
    assert curves.revision_step("main", {"main": 143000}) == 143000
    assert curves.revision_step("step5", {"main": 1}) == 5  # the mapping only for the names it holds
    with pytest.raises(ValueError, match=r"^steps\['main'\] = -3 is not a training step"):
        curves.revision_step("main", {"main": -3})
    with pytest.raises(ValueError, match=r"^revisions step1000, 1000 are all step 1000: give each checkpoint once"):
        curves.checkpoints("m", ["step1000", "1000"])
    points = curves.checkpoints("org/m", ["step20", "main", "step3"], {"main": 100})
    assert points.to_dict("list") == {"model": ["org/m@step3", "org/m@step20", "org/m@main"],
                                      "revision": ["step3", "step20", "main"], "step": [3, 20, 100],
                                      "tokens": [None, None, None]}


# --------------------------------------------------------------------------- a synthetic store, exact values
# (revision, method, template) -> correct per pair: phenomenon "agreement" has 2 pairs, "islands" 4
PLANTED = {
    ("step1000", "lp", None): [1, 0, 1, 1, 0, 0],
    ("step1000", "intemplate_lp", 1): [1, 1, 1, 0, 0, 0],
    ("step1000", "intemplate_lp", 2): [0, 0, 1, 1, 1, 1],
    ("step8000-tokens34B", "lp", None): [1, 1, 1, 1, 1, 0],
    ("step8000-tokens34B", "intemplate_lp", 1): [1, 1, 1, 1, 1, 1],
    ("step8000-tokens34B", "intemplate_lp", 2): [1, 0, 0, 0, 0, 1],
    ("step2000", "lp", None): [0, 0, 0, 0, 0, 0],  # a revision not asked for: left out
}


# ties (pairs among the wrong ones of PLANTED; a tie counts wrong)
PLANTED_TIES = {("step1000", "lp", None): (1, 4), ("step1000", "intemplate_lp", 2): (0,)}


def write_planted(root) -> None:
    store = ScoreStore(root)
    for (revision, method, template), correct in PLANTED.items():
        frame = pd.DataFrame({"dataset": "blimp", "paradigm": ["pa"] * 2 + ["pb"] * 4,
                              "phenomenon": ["agreement"] * 2 + ["islands"] * 4, "pair_id": range(6),
                              "score_good": np.array(correct, float), "score_bad": 0.5,
                              "correct": np.array(correct, bool),
                              "tie": [i in PLANTED_TIES.get((revision, method, template), ()) for i in range(6)]})
        name = f"lab/m@{revision}"
        config = {"model_name": name, "model_id": "lab/m", "revision": revision, "weights": f"commit-{revision}",
                  "dataset": "blimp", "method": method, "template_id": template}
        store.write(frame, "blimp", name, method, template, config)


def test_the_curves_of_a_synthetic_store_have_the_planted_values(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    write_planted(tmp_path / "outputs" / "scores")
    points = curves.checkpoints("lab/m", ["step8000-tokens34B", "step1000"])
    scores = required_scores(list(points.model), "blimp", ["lp", "intemplate_lp"])
    table = curves.learning_curves(scores, points)
    assert list(table.columns) == ["method", "phenomenon", "step", "revision", "model", "tokens", "accuracy", "sd",
                                   "templates", "pairs", "tie_share_counted_wrong", "expected_accuracy",
                                   "accuracy_ties_right"]
    ties = table.set_index(["method", "phenomenon", "step"])["tie_share_counted_wrong"]
    assert (ties[("lp", "all phenomena", 1000)], ties[("lp", "agreement", 1000)], ties[("lp", "islands", 1000)]) == (
        2 / 6, 1 / 2, 1 / 4)  # pairs 1 (agreement) and 4 (islands)
    assert ties[("intemplate_lp", "all phenomena", 1000)] == (0 + 1 / 6) / 2  # mean over the two templates
    assert ties[("lp", "all phenomena", 8000)] == 0
    row = table.set_index(["method", "phenomenon", "step"]).loc[("lp", "all phenomena", 1000)]
    assert (row.expected_accuracy, row.accuracy_ties_right) == pytest.approx(
        (row.accuracy + 1 / 6, row.accuracy + 2 / 6))  # its 2 ties of 6: half, then all, counted right
    got = {(r.method, r.phenomenon, r.step): (round(r.accuracy, 12), r.templates, r.pairs)
           for r in table.itertuples()}
    assert got == {
        ("intemplate_lp", "all phenomena", 1000): (round(7 / 12, 12), 2, 6),  # (3/6 + 4/6) / 2
        ("intemplate_lp", "all phenomena", 8000): (round(2 / 3, 12), 2, 6),  # (6/6 + 2/6) / 2
        ("intemplate_lp", "agreement", 1000): (0.5, 2, 2), ("intemplate_lp", "agreement", 8000): (0.75, 2, 2),
        ("intemplate_lp", "islands", 1000): (0.625, 2, 4), ("intemplate_lp", "islands", 8000): (0.625, 2, 4),
        ("lp", "all phenomena", 1000): (0.5, 1, 6), ("lp", "all phenomena", 8000): (round(5 / 6, 12), 1, 6),
        ("lp", "agreement", 1000): (0.5, 1, 2), ("lp", "agreement", 8000): (1.0, 1, 2),
        ("lp", "islands", 1000): (0.5, 1, 4), ("lp", "islands", 8000): (0.75, 1, 4)}
    # rows in (method, phenomenon with all pairs first, step) order; sd over templates; OLMo's tokens kept
    first = table.iloc[:2]
    assert first[["method", "phenomenon", "step", "revision", "model", "templates", "pairs"]].to_dict("list") == {
        "method": ["intemplate_lp"] * 2, "phenomenon": ["all phenomena"] * 2, "step": [1000, 8000],
        "revision": ["step1000", "step8000-tokens34B"], "model": ["lab/m@step1000", "lab/m@step8000-tokens34B"],
        "templates": [2, 2], "pairs": [6, 6]}
    assert first[["accuracy", "sd", "tokens"]].to_numpy().ravel().tolist() == pytest.approx(
        [7 / 12, np.std([3 / 6, 4 / 6], ddof=1), np.nan, 2 / 3, np.std([1, 2 / 6], ddof=1), 3.4e10],
        rel=1e-12, nan_ok=True)
    assert table.loc[table.method == "lp", "sd"].isna().all()  # one template: no sd
    assert curves.wide(table).iloc[0].to_dict() == {"phenomenon": "all phenomena", "step": 1000,
                                                    "intemplate_lp": pytest.approx(7 / 12, rel=1e-12), "lp": 0.5}
    with pytest.raises(ValueError, match=r"^no stored scores of lab/m@step9: score those revisions first"):
        curves.learning_curves(scores, curves.checkpoints("lab/m", ["step1000", "step9"]))


def test_the_figure_has_a_panel_per_phenomenon_a_line_per_method_and_a_log_axis_over_orders(tmp_path):
    rows = [{"method": m, "phenomenon": p, "step": s, "accuracy": 0.5 + s / 4e5}
            for m in ("lp", "yesno") for p in ("all phenomena", "a", "b", "c", "d") for s in (0, 1000, 143000)]
    fig = plots.learning_curves(pd.DataFrame(rows), "m: accuracy by training step")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["all phenomena", "a", "b", "c", "d"]
    assert [len(ax.get_lines()) for ax in panels] == [3] * 5  # two methods and chance
    assert {ax.get_xscale() for ax in panels} == {"symlog"} and panels[0].get_xlim() == (0, 143000 * 1.5)
    assert [t.get_text() for t in panels[-1].get_xticklabels()] == ["0", "$10^{3}$", "$10^{4}$", "$10^{5}$"]
    fig.savefig(tmp_path / "curves.png")
    linear = plots.learning_curves(pd.DataFrame([{**r, "step": r["step"] // 2000 + 1} for r in rows]), "t")
    assert linear.axes[0].get_xscale() == "linear"  # steps 1 to 72 span under two orders of magnitude
    logged = plots.learning_curves(pd.DataFrame([{**r, "step": r["step"] + 10} for r in rows]), "t")
    assert logged.axes[0].get_xscale() == "log"


# --------------------------------------------------------------------------- two real revisions offline
COMMITS = {"step0": "0" * 39 + "1", "step30": "0" * 39 + "2"}


def train_steps(folder, out, steps: int = 30) -> None:
    """``steps`` steps of next-token training of the model in ``folder`` on the tiny corpus, saved to ``out``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model, tok = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    texts = [s for s in tiny_models.corpus_sentences(400) if s.isascii()]
    for i in range(steps):
        batch = tok(texts[8 * i: 8 * i + 8], return_tensors="pt", padding=True)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        model(**batch, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(out)
    tok.save_pretrained(out)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A Hugging Face cache holding "lab/tiny-gpt2" at two training states: step0 (the
    initialisation) and step30 (after 30 training steps), as the Hub's snapshots and refs."""
    root = tmp_path_factory.mktemp("hf")
    repo = root / "hub" / "models--lab--tiny-gpt2"
    snapshot = {ref: repo / "snapshots" / commit for ref, commit in COMMITS.items()}
    tiny_models.build("gpt2", snapshot["step0"], seed=0)
    train_steps(snapshot["step0"], snapshot["step30"])
    (repo / "refs").mkdir(parents=True)
    for ref, commit in COMMITS.items():
        (repo / "refs" / ref).write_text(commit)
    return root, snapshot


@pytest.fixture
def offline_hub(hub, tmp_path, monkeypatch):
    root, snapshot = hub
    monkeypatch.setenv("HF_HUB_CACHE", str(root / "hub"))  # for notebook kernels
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(root / "hub"))  # read at import in this process
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    return tmp_path, snapshot


def blimp_pairs(paradigms: int = 3, per: int = 2) -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


def test_two_revisions_load_offline_are_stored_apart_and_equal_their_snapshot_folders(offline_hub):
    tmp, snapshot = offline_hub
    selection, store = blimp_pairs(), ScoreStore()
    hub_scorers = {"step0": scorer_for("lab/tiny-gpt2@step0"), "step30": scorer_for("lab/tiny-gpt2", Settings(revision="step30"))}
    by_name = run_methods(hub_scorers["step0"], selection, ["lp"], store=store)
    by_switch = run_methods(hub_scorers["step30"], selection, ["lp"], store=store)
    assert [p.relative_to(store.root).as_posix() for p in by_name + by_switch] == [
        "blimp/lab_tiny-gpt2_step0/lp.parquet", "blimp/lab_tiny-gpt2_step30/lp.parquet"]
    for path, ref in zip(by_name + by_switch, COMMITS):
        meta = read_metadata(path)
        assert (meta["model_name"], meta["model_id"], meta["revision"], meta["weights"]) == (
            f"lab/tiny-gpt2@{ref}", "lab/tiny-gpt2", ref, COMMITS[ref])
    early, late = (load_files([p]) for p in by_name + by_switch)
    assert len(early) == 6 and not np.allclose(early.score_good, late.score_good)  # other weights, other scores
    for scored, ref in ((early, "step0"), (late, "step30")):  # the real loading path = the snapshot folder itself
        folder = scorer_for(str(snapshot[ref]))
        hub_weights, folder_weights = hub_scorers[ref].loaded.model.state_dict(), folder.loaded.model.state_dict()
        assert list(hub_weights) == list(folder_weights)
        assert all(torch.equal(hub_weights[k], folder_weights[k]) for k in hub_weights)  # bit for bit
        direct = load_files(run_methods(folder, selection, ["lp"], store=ScoreStore(tmp / f"direct-{ref}")))
        # the same weights and inputs: equal within float32 rounding (two loads of one model on the CPU
        # may differ in the last bits of a token's log-prob; the revisions differ by tens of nats)
        np.testing.assert_allclose(scored[["score_good", "score_bad"]].to_numpy(),
                                   direct[["score_good", "score_bad"]].to_numpy(), rtol=1e-7, atol=1e-5)
        assert scored.correct.tolist() == direct.correct.tolist()
    assert np.abs(early.score_good - late.score_good).min() > 1.0
    # the analyses see two models; a rerun of either revision finds its file
    both = required_scores(["lab/tiny-gpt2@step0", "lab/tiny-gpt2@step30"], "blimp", ["lp"])
    assert sorted(both.model.unique()) == ["lab/tiny-gpt2@step0", "lab/tiny-gpt2@step30"]
    assert run_methods(scorer_for("lab/tiny-gpt2", Settings(revision="step0")), selection, ["lp"], store=store) == by_name[:1]
    assert store.writes == 2


def test_revision_names_and_their_errors(offline_hub):
    assert resolve("lab/tiny-gpt2@step30").name == "lab/tiny-gpt2@step30"
    assert check_loadable("lab/tiny-gpt2@step30", revision="step30").spec.revision == "step30"
    with pytest.raises(ModelNotFoundError, match=r"^'lab/tiny-gpt2@step30' names revision 'step30', and revision "
                                                 r"'step0' was given too: give one of them$"):
        check_loadable("lab/tiny-gpt2@step30", revision="step0")
    with pytest.raises(ModelNotFoundError, match=r"^'tiny-gpt2' is a local model without revisions|^revision 'step1'"):
        resolve("tiny-gpt2@step1")
    with pytest.raises(ModelNotFoundError, match=r"^'lab/tiny-gpt2@' names no revision after '@'"):
        resolve("lab/tiny-gpt2@")
    with pytest.raises(ModelNotFoundError, match=r"^'lab/tiny-gpt2' \(lab/tiny-gpt2\) at revision 'step9' is "
                                                 r"not in the local Hugging Face cache"):
        check_loadable("lab/tiny-gpt2@step9")


# --------------------------------------------------------------------------- the sweep over revisions
def short(job) -> str:
    extra = f" {job.parameters['revisions']}" if "revisions" in job.parameters else ""
    return f"{job.notebook.stem[:2]} {job.model} {job.dataset}{extra}"


def test_a_sweep_runs_each_revision_as_a_model_and_the_curves_after_all_of_them():
    jobs = sweep.plan(["02", "03", "08", "05"], ["org/a", "org/b"], ["blimp"], {"02:methods": "lp"},
                      revisions="step1000,step8000")
    assert [short(j) for j in jobs] == [
        "02 org/a@step1000 blimp", "02 org/a@step8000 blimp", "02 org/b@step1000 blimp", "02 org/b@step8000 blimp",
        "03 org/a@step1000 blimp", "03 org/a@step8000 blimp", "03 org/b@step1000 blimp", "03 org/b@step8000 blimp",
        "08 org/a blimp ['step1000', 'step8000']", "08 org/b blimp ['step1000', 'step8000']",
        "05 org/a@step1000 blimp", "05 org/a@step8000 blimp", "05 org/b@step1000 blimp", "05 org/b@step8000 blimp"]
    assert jobs[0].output.name == "02_readout__org_a_step1000__blimp__methods-lp.ipynb"
    assert jobs[0].papermill_parameters() == {"methods": "lp", "model": "org/a@step1000", "dataset": "blimp"}
    assert jobs[8].papermill_parameters() == {"revisions": ["step1000", "step8000"], "model": "org/a",
                                              "dataset": "blimp"}
    waits = waits_on(jobs)
    # 08 reads lp, meanlp and in-template LP by default: the 02 jobs of every revision of its model
    assert [short(d) for d in waits[jobs[8].output]] == ["02 org/a@step1000 blimp", "02 org/a@step8000 blimp"]
    assert [short(d) for d in waits[jobs[11].output]] == ["02 org/a@step8000 blimp", "03 org/a@step8000 blimp"]
    with pytest.raises(ValueError, match=r"^--revisions: 'tiny-gpt2' is a local model without revisions; sweep"):
        sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], revisions=["step1"])
    with pytest.raises(ValueError, match=r"^give either --revisions .* or --revision .*, not both$"):
        sweep.plan(["02"], ["org/a"], ["blimp"], settings={"revision": "v1"}, revisions="step1")
    with pytest.raises(ValueError, match=r"names a revision twice"):
        sweep.plan(["02"], ["org/a"], ["blimp"], revisions="step1,step1")


def test_the_sweep_command_takes_revisions(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path))
    assert main(["sweep", "--notebooks", "02", "08", "--models", "org/a", "--revisions", "step1,step2", "step3",
                 "--status"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [line[:3] for line in lines[:4]] == [["02_readout", f"org/a@step{i}", "blimp"] for i in (1, 2, 3)] + \
        [["08_learning_curves", "org/a", "blimp"]]
    assert " ".join(lines[3]).count("02_readout org/a@step") == 3  # the curves wait on every revision
    assert main(["sweep", "--notebooks", "02", "--models", "demo-en", "--revisions", "step1"]) == 2
    assert capsys.readouterr().err.startswith("error: --revisions: 'demo-en' is a local model without revisions")


@pytest.mark.slow
def test_the_notebook_draws_the_learning_curves_of_two_revisions(offline_hub):
    tmp, _ = offline_hub
    for ref in ("step0", "step30"):  # as 02 stores them (its own run is tested in test_notebooks)
        run_methods(scorer_for(f"lab/tiny-gpt2@{ref}"), blimp_pairs(), ["lp", "meanlp"])
    jobs = sweep.plan(["08"], ["lab/tiny-gpt2"], ["blimp"], {"methods": "lp,meanlp"}, revisions="step0,step30")
    assert [(j.model, j.parameters["revisions"]) for j in jobs] == [("lab/tiny-gpt2", ["step0", "step30"])]
    sweep.run(jobs)
    outputs = tmp / "outputs"
    table = pd.read_csv(outputs / "tables" / "08_learning_curves__lab_tiny-gpt2__blimp.csv")
    points = curves.checkpoints("lab/tiny-gpt2", ["step0", "step30"])
    expected = curves.learning_curves(required_scores(list(points.model), "blimp", ["lp", "meanlp"]), points)
    pd.testing.assert_frame_equal(table, expected.assign(tokens=np.nan), check_dtype=False)
    phenomena = {"all phenomena", *blimp_pairs().frame.phenomenon}
    assert set(table.step) == {0, 30} and table.phenomenon.iloc[0] == "all phenomena"
    assert len(table) == 2 * 2 * len(phenomena) and set(table.phenomenon) == phenomena  # methods x steps x phenomena
    assert (outputs / "figures" / "08_learning_curves__lab_tiny-gpt2__blimp.png").is_file()
    sidecar = (outputs / "tables" / "08_learning_curves__lab_tiny-gpt2__blimp.csv.json").read_text()
    assert "lab_tiny-gpt2_step0/lp.parquet" in sidecar and "lab_tiny-gpt2_step30/meanlp.parquet" in sidecar


def test_make_report_writes_the_demo_model_at_step_0_and_its_last_step_as_hub_revisions(tmp_path, monkeypatch):
    from safetensors.torch import load_file

    from helpers.sweep import report_checkpoints

    repo_id, revisions = report_checkpoints.checkpoint_cache("demo-en", tmp_path / "hub")
    assert (repo_id, revisions) == ("report/demo-en", ["step0", "step7126"])  # 1,187 + 5,939 steps (training.json)
    repo = tmp_path / "hub" / "models--report--demo-en"
    trained = load_file(paths.ROOT / "data" / "models" / "demo-en" / "model.safetensors")
    weights = {r: load_file(repo / "snapshots" / (repo / "refs" / r).read_text() / "model.safetensors")
               for r in revisions}
    assert all(torch.equal(weights["step7126"][k], v) for k, v in trained.items())
    assert {v.dtype for v in weights["step0"].values()} == {v.dtype for v in trained.values()}
    assert not torch.equal(weights["step0"]["transformer.h.0.attn.c_attn.weight"], trained["transformer.h.0.attn.c_attn.weight"])
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert check_loadable("report/demo-en@step0").spec.name == "report/demo-en@step0"  # found offline
    with pytest.raises(ValueError, match=r"has no training.json: the report's learning curves need a model trained"):
        report_checkpoints.checkpoint_cache("tiny-gpt2", tmp_path / "hub2")
