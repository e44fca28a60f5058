"""An engine setting added as the docs say (declaration, where it acts, this test): ``max_tokens``
cuts every sequence to its first tokens, start token included, as ZhoBLiMP's reference does
(sjtu-compling/ZhoBLiMP src/dataset.py l.59-67: the tokenizer's truncation=True, max_length=64 after
a BOS prepended as text), checked against that cut computed here on a plain float64 forward."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer
from helpers.engine.interface import Request
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.store import ScoreStore, read_metadata

CUT = 64  # ZhoBLiMP's src/run.py l.81: max_length=64


def zhoblimp_cut_lps(lm, sentences: list[str], cut: int) -> np.ndarray:
    """Each sentence's LP the reference's way: BOS as text before it, the tokenizer's truncation to
    ``cut`` tokens, every token after the first scored, one sentence at a time in float64."""
    tok, model = lm.tokenizer, lm.model.double()
    out = []
    for sentence in sentences:
        ids = tok(tok.bos_token + sentence, truncation=True, max_length=cut, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0].double()
        out.append(float(torch.log_softmax(logits[:-1], -1).gather(-1, torch.tensor(ids[1:])[:, None]).sum()))
    lm.model.float()
    return np.array(out)


def test_max_tokens_cuts_each_sequence_as_zhoblimps_reference_and_is_recorded_where_given(tiny, tmp_path):
    lm = tiny("tiny-gpt2")
    pairs = load("zhoblimp")
    sentences = list(dict.fromkeys(pairs.good.tolist()))[:40]
    sentences = [s * 6 for s in sentences[:20]] + sentences[20:]  # half of them longer than the cut
    lengths = [len(lm.tokenizer(s)["input_ids"]) + 1 for s in sentences]
    assert sum(n > CUT for n in lengths) == 20 and sum(n <= CUT for n in lengths) == 20
    cut = CausalScorer(lm, Settings(progress=False, max_tokens=CUT))
    got = np.array([s.total for s in cut.score([Request("", s) for s in sentences])])
    np.testing.assert_allclose(got, zhoblimp_cut_lps(lm, sentences, CUT), rtol=0, atol=2e-4)
    whole = np.array([s.total for s in CausalScorer(lm, Settings(progress=False)).score([Request("", s) for s in sentences])])
    long = np.array(lengths) > CUT
    np.testing.assert_allclose(got[~long], whole[~long], rtol=0, atol=2e-4)  # shorter than the cut: as without it
    assert (got[long] > whole[long] + 1).all()  # longer: fewer tokens summed
    assert [s.n_tokens for s in cut.score([Request("", s) for s in sentences[:1]])] == [CUT - 1]

    # recorded in every file's configuration where given; a run without it keeps its files (and hash)
    store = ScoreStore(tmp_path)
    df = pairs[pairs.paradigm.isin(pairs.paradigm.drop_duplicates().iloc[:2])]
    selection = DatasetSelection("zhoblimp", first_per_paradigm(df, 2), limit=2)
    plain = run_methods(CausalScorer(lm, Settings(progress=False)), selection, ["lp"], store=store)
    cut_files = run_methods(cut, selection, ["lp"], store=store)
    assert "max_tokens" not in read_metadata(plain[0]) and read_metadata(cut_files[0])["max_tokens"] == CUT
    assert cut_files != plain and store.writes == 2
    assert Settings(max_tokens=CUT).score_filter() == {"max_tokens": CUT}  # a reading notebook chooses by it


def test_max_tokens_reaches_every_door_or_is_refused_with_the_reason():
    from helpers import sweep
    from helpers.engine.kinds import check_models

    jobs = sweep.plan(["02", "04"], ["tiny-gpt2"], ["zhoblimp"], settings={"max_tokens": CUT})
    assert [job.papermill_parameters()["max_tokens"] for job in jobs] == [CUT, CUT]
    with pytest.raises(ValueError, match=r"max_tokens=64 applies to causal models only, and tiny-t5 is a seq2seq model"):
        check_models("tiny-t5", Settings(max_tokens=CUT))
    with pytest.raises(ValueError, match=r"^max_tokens=0 is not a number of tokens"):
        Settings(max_tokens=0)
