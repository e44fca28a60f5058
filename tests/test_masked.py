"""Masked LMs scored by pseudo-log-likelihood: tiny random BERT, DeBERTa-v3-style and ModernBERT
(WordPiece) and RoBERTa (byte-level BPE) built offline, checked against a float64 reference written here (one masked copy at a time
through the float64 model, the masks built from the tokenizer's own word ids), both variants,
order and batch invariance, loading, what is not applicable, the command line and notebook 02."""
from __future__ import annotations

import copy
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import methods as registry
from helpers.cli import main
from helpers.data import load as load_data
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer
from helpers.engine.interface import Request, Scorer
from helpers.engine.kinds import scorer_for
from helpers.engine import masked as masked_module
from helpers.engine.masked import VARIANTS, MaskedScorer
from helpers.models import REGISTRY, load
from helpers.models import loading
from helpers.models.tiny_masked import build
from helpers.runner import run_methods
from helpers.store import ScoreStore
from notebook_run import first_output, run_notebook
from helpers.score_files import read_metadata
from helpers.settings import TABLE, Settings, scorer_arguments

TOL = 1e-4  # nats, against the float64 reference
TEXTS = ["The teachers walked quickly.", "Some dogs eat the cake.", "A cat sees these birds.",
         "Every student has praised that waitress.", "这些猫看见了我们。"]
SENTENCE_METHODS = ["lp", "meanlp", "penlp", "slln_lp", "lp_per_char", "lp_per_byte", "slor", "bf_uniform", "bf_unigram"]


@pytest.fixture(scope="module", params=["bert", "roberta", "deberta", "modernbert"])
def masked(request, tmp_path_factory):
    folder = build(request.param, tmp_path_factory.mktemp(f"tiny-{request.param}"))
    return load(folder)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return load(build("bert", tmp_path_factory.mktemp("tiny-bert-one")))


def reference(lm, context: str, target: str, variant: str) -> tuple[list[str], np.ndarray]:
    """The target's PLL terms the plain way: one copy per target token through the float64 model,
    that token masked and (within_word_l2r) the tokens of its word to its right."""
    model, tok = copy.deepcopy(lm.model).double(), lm.tokenizer
    enc = tok(context + target, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids, words = enc["input_ids"], enc.word_ids()
    scored = [i for i, ((a, b), s) in enumerate(zip(enc["offset_mapping"], enc["special_tokens_mask"]))
              if not s and b > len(context.rstrip(" "))]
    out = []
    for i in scored:
        copy_ids = list(ids)
        copy_ids[i] = tok.mask_token_id
        if variant == "within_word_l2r":
            for j in range(i + 1, len(ids)):
                if words[j] is not None and words[j] == words[i]:
                    copy_ids[j] = tok.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([copy_ids])).logits[0, i]
        out.append(float(torch.log_softmax(logits, -1)[ids[i]]))
    return tok.convert_ids_to_tokens([ids[i] for i in scored]), np.array(out)


@pytest.mark.parametrize("variant", ["pll", "within_word_l2r"])
def test_pll_matches_a_float64_reference_one_masked_copy_at_a_time(masked, variant):
    scorer = MaskedScorer(masked, Settings(progress=False), variant=variant)
    got = scorer.score_texts(TEXTS)
    for text, s in zip(TEXTS, got):
        tokens, ref = reference(masked, "", text, variant)
        assert s.tokens == tokens and s.logprobs.dtype == np.float64
        np.testing.assert_allclose(s.logprobs, ref, atol=TOL, rtol=0)
        assert s.total == pytest.approx(ref.sum(), abs=TOL * len(ref))
    assert min(s.logprobs.min() for s in got) < -5  # peaked outputs: terms several nats apart


def test_within_word_l2r_differs_exactly_where_a_word_has_pieces_to_the_right(masked):
    pll = MaskedScorer(masked, Settings(progress=False), variant="pll").score_texts(TEXTS)
    by_setting = MaskedScorer(masked, Settings(progress=False, masked_variant="within_word_l2r"))  # as a notebook's
    assert by_setting.record()["start_token"].startswith("masked:within_word_l2r;")  # recorded: files of each apart
    l2r = by_setting.score_texts(TEXTS)
    with pytest.raises(ValueError, match=r"masked_variant='l2r' does not exist: use one of 'auto', 'pll', 'within_word_l2r'"):
        Settings(masked_variant="l2r")
    assert set(TABLE["masked_variant"][0]) == set(VARIANTS)  # the table's values are the scorer's variants
    multi = lone = 0
    for text, a, b in zip(TEXTS, pll, l2r):
        enc = masked.tokenizer(text)
        words = [w for w, s in zip(enc.word_ids(), masked.tokenizer.get_special_tokens_mask(
            enc["input_ids"], already_has_special_tokens=True)) if not s]
        for k, w in enumerate(words):
            if w in words[k + 1:]:  # the same word continues to the right: more is masked
                multi += 1
                assert abs(a.logprobs[k] - b.logprobs[k]) > 1e-3
            else:
                lone += 1
                assert abs(a.logprobs[k] - b.logprobs[k]) < 1e-5
    assert multi >= 5 and lone >= 5


def test_a_context_is_visible_and_only_the_target_is_masked_and_scored(masked):
    scorer = MaskedScorer(masked, Settings(progress=False))
    for context, target in (("The teachers", " walked quickly."), ("Some dogs eat ", "the cake."), ("", "A cat.")):
        s = scorer.score([Request(context, target)], with_context=True)[0]
        tokens, ref = reference(masked, context, target, "pll")
        assert s.tokens == tokens
        np.testing.assert_allclose(s.logprobs, ref, atol=TOL, rtol=0)
        # with_context: every context token too, each masked in turn, as in the whole text's PLL
        whole_tokens, whole = reference(masked, "", context + target, "pll")
        assert s.tokens == whole_tokens[len(whole_tokens) - len(tokens):] and len(s.context_logprobs) == len(
            whole_tokens) - len(tokens)
        np.testing.assert_allclose(np.concatenate([s.context_logprobs, s.logprobs]), whole, atol=TOL, rtol=0)


def test_a_head_the_probe_does_not_find_reads_the_models_own_logits(bert, monkeypatch):
    split = MaskedScorer(bert, Settings(progress=False))
    assert split.head is bert.model.cls and split.base is bert.model.bert  # BERT's MLM head, run at masked rows
    monkeypatch.setattr(masked_module, "HEAD_NAMES", ())
    whole = MaskedScorer(bert, Settings(progress=False))
    assert whole.head is None
    for a, b in zip(split.score_texts(TEXTS), whole.score_texts(TEXTS)):
        np.testing.assert_allclose(b.logprobs, a.logprobs, atol=2e-5, rtol=0)
        np.testing.assert_allclose(b.logits, a.logits, atol=2e-5, rtol=0)


def test_order_is_exact_and_batching_only_rounds(bert):
    texts = TEXTS * 2 + ["The cat sees a dog.", "Those birds walked."]
    base = MaskedScorer(bert, Settings(progress=False)).score_texts(texts)
    shuffled = np.random.default_rng(0).permutation(len(texts))
    again = MaskedScorer(bert, Settings(progress=False)).score_texts([texts[i] for i in shuffled])
    for k, i in enumerate(shuffled):  # the same batches whatever the order: bit for bit
        assert np.array_equal(again[k].logprobs, base[i].logprobs)
    scorer = MaskedScorer(bert, Settings(progress=False))
    part = scorer.score([Request("", t) for t in texts], only=[3, 0])
    assert np.array_equal(part[0].logprobs, base[3].logprobs) and np.array_equal(part[1].logprobs, base[0].logprobs)
    for options in (dict(batch_size=1), dict(batch_size=3), dict(token_budget=40), dict(token_budget=1 << 20)):
        got = MaskedScorer(bert, **scorer_arguments(options, Settings(progress=False))).score_texts(texts)
        for a, b in zip(base, got):  # other batch shapes: float32 rounding only
            np.testing.assert_allclose(b.logprobs, a.logprobs, atol=2e-5, rtol=0, err_msg=str(options))
    one = MaskedScorer(bert, Settings(progress=False, batch_size=1))
    one.score_texts(texts[:1])
    assert one.forward_calls == base[0].n_tokens  # one copy per scored token


def test_loading_picks_the_masked_kind_and_trusts_remote_code_only_where_the_spec_says(bert, monkeypatch, tmp_path):
    assert bert.kind == "masked" and type(bert.model).__name__ == "BertForMaskedLM"
    made = scorer_for(bert, Settings(progress=False))
    assert isinstance(made, MaskedScorer) and isinstance(made, Scorer)  # the protocol's attributes and methods
    specs = {n: REGISTRY[n] for n in ("bert-base-cased", "roberta-base", "deberta-v3-base", "modernbert-base", "ltg-bert-babylm")}
    assert all(s.architecture == "masked" for s in specs.values())
    assert [n for n, s in specs.items() if s.trust_remote_code] == ["ltg-bert-babylm"]
    assert "trust_remote_code" in specs["ltg-bert-babylm"].notes
    seen = []

    def refuse(source, **kwargs):
        seen.append(kwargs["trust_remote_code"])
        raise RuntimeError("stop")

    folder = build("bert", tmp_path / "m")
    monkeypatch.setattr(loading.AutoTokenizer, "from_pretrained", refuse)
    with pytest.raises(RuntimeError):
        load(folder)
    spec = loading.resolve(folder)
    monkeypatch.setattr(loading, "resolve", lambda name: replace(spec, trust_remote_code=True))
    with pytest.raises(RuntimeError):
        load(folder)
    assert seen == [False, True]


def test_bad_settings_are_refused_with_what_to_do(bert):
    with pytest.raises(ValueError, match=r"^variant must be one of 'pll', 'within_word_l2r', got 'l2r'$"):
        MaskedScorer(bert, variant="l2r")
    with pytest.raises(ValueError, match="start='none' is a causal-model convention.*use start='auto'"):
        MaskedScorer(bert, Settings(start="none"))
    with pytest.raises(TypeError, match=r"is a masked LM: score it with helpers.engine.masked.MaskedScorer"):
        CausalScorer(bert)
    with pytest.raises(ValueError, match="separate=True requests"):
        MaskedScorer(bert, Settings(progress=False)).score([Request("Is it? ", "Yes", separate=True)])
    with pytest.raises(ValueError, match="start='minicons' is a causal-model convention"):
        MaskedScorer(bert, Settings(start="minicons"))
    plain = MaskedScorer(bert, Settings(progress=False))  # the protocol's answers of a masked LM
    requests = [Request("Is it? ", "Yes")]
    assert plain.shaped(requests, "prompt") is requests and plain.prompt_shape is None and "token_mass" not in plain.features
    assert plain.start_id is None


def blimp_pairs(paradigms: int = 2, per: int = 2) -> DatasetSelection:
    df = load_data("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


def test_prompt_methods_are_not_applicable_and_sentence_readouts_run_on_pll(bert, tmp_path):
    scorer = MaskedScorer(bert, Settings(progress=False))
    everything = list(registry.METHODS)
    runs, refused = registry.applicable(everything, scorer)
    assert runs == [m for m in everything if m in SENTENCE_METHODS]
    reason = refused.set_index("method").not_applicable
    assert reason["yesno"] == ("yesno needs the log-probs of a target continuing a context left to right (a prompt's "
                               "answer, a prefix's next word, a region after the ones before it: a causal LM or an "
                               "encoder-decoder's decoder; a masked LM's pseudo-log-likelihood scores whole "
                               f"sentences), which the MaskedScorer of {bert.name} lacks")
    assert {"ab", "ab_logit", "hl_word_prediction", "syntaxgym", "intemplate_lp", "comparative_lp"} <= set(reason.index)
    with pytest.raises(ValueError, match=r"^yesno needs the log-probs .* lacks: leave out yesno for this model"):
        run_methods(scorer, blimp_pairs(), ["lp", "yesno"], {}, store=ScoreStore(tmp_path / "refused"))
    store = ScoreStore(tmp_path)
    selection = blimp_pairs()
    run_methods(scorer, selection, ["lp", "meanlp", "penlp"], {}, store=store)
    pairs = selection.frame
    good = scorer.score_texts(list(pairs.good))
    lp = pd.read_parquet(next(tmp_path.rglob("lp.parquet")))
    np.testing.assert_array_equal(lp.score_good.to_numpy(), [s.total for s in good])
    meanlp = pd.read_parquet(next(tmp_path.rglob("meanlp.parquet")))
    np.testing.assert_allclose(meanlp.score_good.to_numpy(), [s.total / s.n_tokens for s in good], rtol=1e-12)


def test_the_command_line_prints_pll_terms_and_their_sum(bert, capsys):
    folder = bert.model.config._name_or_path
    assert main(["score", "--model", folder, "--json", TEXTS[0], TEXTS[1]]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    expected = MaskedScorer(bert, Settings(progress=False)).score_texts(TEXTS[:2])
    for line, e in zip(lines, expected):
        assert line["tokens"] == e.tokens and line["logprobs"] == [float(x) for x in e.logprobs]
        assert line["sum"] == e.total and line["n_tokens"] == e.n_tokens
        assert line["start_token"] == "masked:pll;special_tokens=[CLS]"


@pytest.mark.slow
def test_notebook_02_runs_on_a_masked_model_and_lists_prompt_readouts_as_not_applicable(bert, scratch):
    folder = bert.model.config._name_or_path
    # masked_variant: a setting no parameters cell names, given by its name as papermill's -p gives it
    nb = run_notebook("02_readout.ipynb", scratch / "02.ipynb", model=folder, limit=1, templates=[1],
                      masked_variant="within_word_l2r")
    name = bert.name
    assert first_output(nb).startswith("settings: templates=(1,), masked_variant='within_word_l2r'; the others 'auto'")
    lp = read_metadata(next((scratch / "outputs" / "scores" / "blimp").glob("*/lp.parquet")))
    assert lp["start_token"].startswith("masked:within_word_l2r;")
    t02 = pd.read_csv(scratch / "outputs" / "tables" / f"02_readout__{name}__blimp__limit-1.csv", keep_default_na=False,
                      na_values=[""]).set_index("method")
    assert list(t02.index) == registry.READOUT_METHODS
    ran = [m for m in registry.READOUT_METHODS if m in SENTENCE_METHODS]
    assert t02.loc[ran].not_applicable.isna().all() and (t02.loc[ran].pairs == 67).all()
    refused = t02.drop(index=ran)
    assert len(refused) and refused.accuracy_mean.isna().all()
    assert refused.not_applicable.str.contains("continuing a context left to right").all()
    shown = json.dumps(nb["cells"])
    assert "not applicable" in shown and "Traceback" not in shown


@pytest.mark.slow
def test_notebook_03_runs_on_a_masked_model_and_lists_every_prompt_method_as_not_applicable(bert, scratch):
    folder = bert.model.config._name_or_path
    nb = run_notebook("03_prompting.ipynb", scratch / "03.ipynb", model=folder, limit=1)
    t3 = pd.read_csv(scratch / "outputs" / "tables" / f"03_prompting__{bert.name}__blimp__limit-1.csv", keep_default_na=False,
                     na_values=[""]).set_index("method")
    assert list(t3.index) == registry.PROMPT_METHODS and t3.accuracy_mean.isna().all()
    assert t3.not_applicable.str.contains("continuing a context left to right").all()
    shown = json.dumps(nb["cells"])
    assert f"no prompting method applies to {bert.name}" in shown and "Traceback" not in shown
    assert "Hu & Levy's hl_word_prediction on hl_p18 left out" in shown  # Part 2: each task left out, with the reason
