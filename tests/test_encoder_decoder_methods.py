"""Every method on an encoder-decoder: a method declares the scorer features it needs, a scorer
the features it offers; what cannot run is reported as not applicable with the reason (and
refused by the runner before anything is scored); prompts are the encoder's source, checked
against a float64 forward written here; 02 and 03 run to the end on the tiny T5."""
from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import methods as registry
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer, Seq2SeqScorer
from helpers.engine.interface import SCORER_FEATURES
from helpers.runner import run_methods
from helpers.store import ScoreStore, read_metadata
from notebook_run import run_notebook
from helpers.settings import Settings

TOL = 1e-4  # nats


def blimp_pairs(paradigms: int = 2, per: int = 2) -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


@pytest.fixture(scope="module")
def t5(tiny):
    return tiny("tiny-t5")


def test_methods_needing_what_a_scorer_lacks_are_not_applicable_with_the_reason(t5, tiny):
    causal, seq2seq = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), Seq2SeqScorer(t5, Settings(progress=False))
    assert set(SCORER_FEATURES) == {"continuation", "outlines", "token_mass", "source"}
    assert causal.features == {"continuation", "outlines", "token_mass"}
    assert seq2seq.features == {"continuation", "source"}  # an encoder reads the context (lm-eval encodes it apart)
    everything = list(registry.METHODS)
    runs, refused = registry.applicable(everything, seq2seq)
    assert list(refused.method) == ["ab", "syntaxgym_word", "word_lp"]
    assert runs == [m for m in everything if m not in ("ab", "syntaxgym_word", "word_lp")]
    assert (refused.model == "tiny-t5").all()
    ab, word, word_lp = refused.not_applicable
    assert ab.startswith("ab needs constrained decoding with outlines") and ab.endswith(
        "which the Seq2SeqScorer of tiny-t5 lacks") and "\n" not in ab
    assert word.startswith("syntaxgym_word needs the probability mass of word-initial tokens where each target token")
    assert word_lp.startswith("word_lp needs the probability mass of word-initial tokens where each target token")
    runs, refused = registry.applicable(everything, causal)
    assert runs == everything and refused.empty and list(refused.columns) == ["model", "method", "not_applicable"]


def test_the_runner_refuses_a_method_that_is_not_applicable_before_scoring(t5, tmp_path):
    store = ScoreStore(tmp_path)
    with pytest.raises(ValueError, match=r"^ab needs constrained decoding .* lacks: leave out ab for this model"):
        run_methods(Seq2SeqScorer(t5, Settings(progress=False)), blimp_pairs(), ["ab_logit", "ab"], {"templates": [1]},
                    store=store)
    assert store.writes == 0 and not list(tmp_path.rglob("*.parquet"))


@torch.no_grad()
def _answer_lp64(model, tokenizer, prompt: str, answer: str) -> float:
    """log p(answer | prompt as the encoder's source), the model in float64, one request alone."""
    src = torch.tensor([tokenizer(prompt)["input_ids"]])
    labels = tokenizer(answer, add_special_tokens=False)["input_ids"]
    dec = torch.tensor([[model.config.decoder_start_token_id] + labels[:-1]])
    lp = torch.log_softmax(model(input_ids=src, decoder_input_ids=dec).logits[0].double(), dim=-1)
    return float(lp[torch.arange(len(labels)), torch.tensor(labels)].sum())


def test_yes_no_and_ab_prompts_are_the_encoders_source_and_the_answer_the_decoders(t5, tmp_path):
    ref = copy.deepcopy(t5.model).double()
    store = ScoreStore(tmp_path)
    files = run_methods(Seq2SeqScorer(t5, Settings(progress=False)), blimp_pairs(), ["yesno", "ab_logit"],
                        {"templates": [1]}, store=store)
    yesno, ab = (pd.read_parquet(f) for f in files)
    for row in yesno.itertuples():
        for side in ("good", "bad"):
            prompt = getattr(row, f"prompt_{side}")
            assert getattr(row, f"lp_yes_{side}") == pytest.approx(_answer_lp64(ref, t5.tokenizer, prompt, "Yes"),
                                                                     abs=TOL)
            assert getattr(row, f"lp_no_{side}") == pytest.approx(_answer_lp64(ref, t5.tokenizer, prompt, "No"),
                                                                    abs=TOL)
    for row in ab.itertuples():
        assert row.lp_a == pytest.approx(_answer_lp64(ref, t5.tokenizer, row.prompt, "A"), abs=TOL)
        assert row.lp_b == pytest.approx(_answer_lp64(ref, t5.tokenizer, row.prompt, "B"), abs=TOL)
    np.testing.assert_array_equal(ab.correct, np.where(ab.good_slot == "A", ab.lp_a > ab.lp_b, ab.lp_b > ab.lp_a))
    meta = [read_metadata(f) for f in files]
    assert [m["prompt_shape"] for m in meta] == ["answer", "answer"]
    assert meta[1]["outlines"] is False  # no constrained decoding ran
    # the sentinel shape is another configuration, written apart
    with pytest.warns(UserWarning, match="different configuration; writing yesno__t1__"):
        span = run_methods(Seq2SeqScorer(t5, Settings(progress=False), prompts="span"), blimp_pairs(), ["yesno"],
                           {"templates": [1]}, store=store)
    assert read_metadata(span[0])["prompt_shape"] == "span" and span[0] != files[0]
    assert not np.allclose(pd.read_parquet(span[0]).lp_yes_good, yesno.lp_yes_good)


def test_a_causal_models_prompt_files_keep_their_configuration(tiny, tmp_path):
    """Causal runs record no prompt shape: their files are found by the configuration they had."""
    files = run_methods(CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), blimp_pairs(1, 1), ["yesno", "ab_logit"],
                        {"templates": [1]}, store=ScoreStore(tmp_path))
    meta = [read_metadata(f) for f in files]
    assert all("prompt_shape" not in m for m in meta) and meta[1]["outlines"] is False  # one-token letters: no decode


@pytest.mark.slow
def test_02_and_03_run_on_an_encoder_decoder_and_list_what_is_not_applicable(scratch):
    run_notebook("02_readout.ipynb", scratch / "02.ipynb", model="tiny-t5", limit=1, templates=[1])
    tables = scratch / "outputs" / "tables"
    t02 = pd.read_csv(tables / "02_readout__tiny-t5__blimp__limit-1.csv", keep_default_na=False, na_values=[""])
    assert list(t02.method) == registry.READOUT_METHODS  # every readout applies to the decoder
    assert t02.not_applicable.isna().all() and (t02.pairs == 67).all() and t02.accuracy_mean.notna().all()

    nb = run_notebook("03_prompting.ipynb", scratch / "03.ipynb", model="tiny-t5", limit=1, templates=[1],
              fewshot_ks=[0, 2], hu_levy_sets="hl_blimp,hl_dtfit", hu_levy_limit=2)
    t03 = pd.read_csv(tables / "03_prompting__tiny-t5__blimp__limit-1.csv").set_index("method")
    assert list(t03.index) == ["yesno", "yesno_released", "ab_logit", "ab"]
    ran = t03.loc[["yesno", "yesno_released", "ab_logit"]]
    assert ran.not_applicable.isna().all() and (ran.pairs == 67).all() and ran.accuracy_mean.notna().all()
    assert t03.loc["ab", ["accuracy_mean", "pairs", "templates"]].isna().all()
    assert t03.loc["ab", "not_applicable"].startswith("ab needs constrained decoding with outlines")
    shown = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    assert "not applicable" in shown and "Traceback" not in shown
    scores = scratch / "outputs" / "scores"
    # 02's readouts, 03's Part 1 (yesno, yesno_released, ab_logit; in-template LP at k=0 is 02's file)
    # and both few-shot methods at k=2; no file of ab
    written = sorted(p.name for p in (scores / "blimp" / "tiny-t5").glob("*.parquet"))
    assert written == sorted([f"{m}__t1.parquet" if registry.get(m).templated else f"{m}.parquet"
                              for m in registry.READOUT_METHODS + ["yesno", "yesno_released", "ab_logit"]]
                             + ["intemplate_lp__t1__2shot.parquet", "yesno__t1__2shot.parquet"])
    assert read_metadata(scores / "blimp" / "tiny-t5" / "yesno__t1.parquet")["prompt_shape"] == "answer"
    hl = pd.read_csv(tables / "03_hu_levy__tiny-t5.csv")
    assert set(hl.task) == {"sentence_judgment", "sentence_comparison", "word_comparison"}
    assert len(list((scores / "hl_blimp" / "tiny-t5").glob("*.parquet"))) == 8
