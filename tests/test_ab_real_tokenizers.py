"""A/B prompting on the tokenizers of Ide et al.'s models: "auto" gives outlines' answer on every
prompt. mistral-common ships Mixtral 8x7B's SentencePiece model (tokenizer.model.v1) and Mistral
NeMo's Tekken vocabulary; tiny random Mixtral and Mistral models are built on them. On Mixtral's
the letter after "Answer: " is scored as "▁A" while outlines decodes "A" or the byte "<0x41>", so
"auto" decodes with outlines there (and the "▁A"/"▁B" logits alone would answer otherwise on some
prompts); on Tekken each letter is the one token outlines allows, and the logits give its answer."""
from __future__ import annotations

import hashlib
import os

import numpy as np
import pandas as pd
import pytest
import torch

from helpers.data.selection import select
from helpers.engine import CausalScorer
from helpers.methods.base import PassContext
from helpers.engine.constrained import logits_decode_as_outlines, outlines_tokens_for
from helpers.methods.prompting import AB_FAMILY
from helpers.models import load
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.store import ScoreStore

# the files of mistral-common 1.13.1 (pinned in pyproject's dev extra)
FILES = {"tokenizer.model.v1": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
         "tekken_240718.json": "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516"}
SMALL = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             max_position_embeddings=1024)


def shipped(name: str) -> str:
    import mistral_common

    path = os.path.join(os.path.dirname(mistral_common.__file__), "data", name)
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == FILES[name]
    return path


def tiny_model(kind: str, folder):
    """A random tiny model of ``kind`` ("mixtral": Mixtral's SentencePiece tokenizer; "nemo":
    Mistral with the Tekken vocabulary), saved with its tokenizer and loaded as users load one."""
    from transformers import AutoTokenizer, MistralConfig, MistralForCausalLM, MixtralConfig, MixtralForCausalLM

    folder.mkdir()
    if kind == "mixtral":
        (folder / "tokenizer.model").write_bytes(open(shipped("tokenizer.model.v1"), "rb").read())
        (folder / "tokenizer_config.json").write_text(  # as Mixtral-8x7B(-Instruct)-v0.1's
            '{"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", '
            '"add_bos_token": true, "add_eos_token": false, "legacy": true}')
        tokenizer = AutoTokenizer.from_pretrained(folder)
        config = MixtralConfig(vocab_size=len(tokenizer), num_local_experts=4, num_experts_per_tok=2, **SMALL)
        model_class = MixtralForCausalLM
    else:
        from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer

        tokenizer = convert_tekken_tokenizer(shipped("tekken_240718.json"), chat_template=None)
        config = MistralConfig(vocab_size=len(tokenizer), **SMALL)
        model_class = MistralForCausalLM
    config.bos_token_id, config.eos_token_id = tokenizer.bos_token_id, tokenizer.eos_token_id
    torch.manual_seed(0)
    model_class(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return load(folder, quant=None)


def answers(scorer, selection, use_outlines, root) -> pd.DataFrame:
    paths = run_methods(scorer, selection, ["ab"], {"use_outlines": use_outlines, "templates": [1, 2, 3, 4, 5]},
                        store=ScoreStore(root))
    return pd.concat([pd.read_parquet(p) for p in sorted(paths)], ignore_index=True)


@pytest.mark.parametrize("kind", ["mixtral", "nemo"])
def test_ab_auto_gives_outlines_answer_on_every_prompt_mixtral_and_nemo(kind, tmp_path):
    lm = tiny_model(kind, tmp_path / kind)
    scorer = CausalScorer(lm, Settings(progress=False))
    allowed = outlines_tokens_for(lm.tokenizer, ["A", "B"])
    # mixtral: 201 pairs x 5 templates, where the letters' logits disagree with outlines on some prompts; nemo:
    # 67 x 5, each answered by its letter logits exactly as outlines answers it
    selection = select("blimp", 3 if kind == "mixtral" else 1)
    decoded = answers(scorer, selection, True, tmp_path / "outlines")
    assert len(decoded) == 5 * len(selection) and (decoded.ab_path == "outlines").all()
    if kind == "mixtral":
        assert allowed == {"A": {28741, 68}, "B": {28760, 69}}  # "A" and "<0x41>"; the engine scores "▁A" (330)
        # "auto" decodes with outlines here: the same pass as above
        assert AB_FAMILY.pass_context_for(["ab"], PassContext(scorer, "en", Settings(use_outlines="auto"))).use_outlines is True
        assert not logits_decode_as_outlines(scorer, "AB") and scorer.decode([], "AB", where="auto") == []
        # the "▁A" and "▁B" logits alone would have answered otherwise on some prompts
        differ = int((decoded.answer.to_numpy() != decoded.answer_outlines.to_numpy()).sum())
        assert differ > 0, differ
        return
    assert allowed == {"A": {1065}, "B": {1066}} and logits_decode_as_outlines(scorer, "AB")
    assert scorer.decode(["Answer: "], "AB", where="auto") is None  # no decoding needed
    auto = answers(scorer, selection, "auto", tmp_path / "auto")
    assert (auto.ab_path == "letter logits").all()
    assert np.array_equal(auto.answer_outlines.to_numpy(), decoded.answer_outlines.to_numpy())
    assert np.array_equal(auto.correct.to_numpy(), decoded.correct.to_numpy())
