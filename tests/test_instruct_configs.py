"""instruct='auto' decided on the published configuration files of base and instruct checkpoints of
Gemma 3, Llama 3, Qwen2.5, OLMo 2, SmolLM2 and Mistral (tests/fixtures/checkpoint_configs.json: the
values that decide it, as the files on the Hub hold them): every base checkpoint base, every instruct
one instruct, under its Hub name and renamed to a folder whose name marks nothing."""
from __future__ import annotations

import json

import pytest

from helpers import paths
from helpers.models.instruct import decision_from_files

CHECKPOINTS = json.loads((paths.ROOT / "tests" / "fixtures" / "checkpoint_configs.json").read_text())["checkpoints"]


def decided(name: str, checkpoint: dict) -> bool:
    return decision_from_files(name, checkpoint["generation_config"], checkpoint["tokenizer_config"])[0]


def test_every_base_checkpoint_is_base_and_every_instruct_one_instruct():
    table = [(c["checkpoint"], c["instruct"], decided(c["checkpoint"], c)) for c in CHECKPOINTS]
    print("\n".join(f"{name:40} expected {'instruct' if want else 'base':8} decided {'instruct' if got else 'base'}"
                    for name, want, got in table))
    assert [got for _, _, got in table] == [want for _, want, _ in table]
    assert {name.split("/")[0] for name, _, _ in table} == {"google", "meta-llama", "Qwen", "allenai",
                                                             "HuggingFaceTB", "mistralai"}
    # Gemma 3's base checkpoints end generation at <end_of_turn> too: that alone marks nothing
    gemma = next(c for c in CHECKPOINTS if c["checkpoint"] == "google/gemma-3-270m")
    assert gemma["generation_config"]["eos_token_id"] == [1, 106]
    assert decision_from_files("google/gemma-3-270m", gemma["generation_config"], gemma["tokenizer_config"])[1] == (
        "google/gemma-3-270m: prompts without the chat template (instruct='auto': it ships a chat template, but base "
        "checkpoints do too and nothing else marks it instruct); pass instruct=true if it is an instruct checkpoint")


def test_a_renamed_folder_is_decided_by_its_files_where_they_differ():
    """Without a name that marks it, what its files say: the tokenizer's end of sequence a chat turn's end
    (Qwen2.5, Llama 3, SmolLM2 instruct), or generation ending only there. Where an instruct checkpoint's
    files equal its base twin's (Gemma 3, OLMo 2 and Mistral instruct keep the plain end token), they
    cannot tell it apart: base, and the line says instruct=true is the way."""
    by_files = {c["checkpoint"]: decided("my-model", c) for c in CHECKPOINTS}
    instruct_by_files = {"meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
                         "Qwen/Qwen2.5-0.5B-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert {name for name, found in by_files.items() if found} == instruct_by_files
    smol = next(c for c in CHECKPOINTS if c["checkpoint"] == "HuggingFaceTB/SmolLM2-135M-Instruct")
    ends_only = {**smol["tokenizer_config"], "eos_token": "<|endoftext|>"}  # generation ends only at <|im_end|>
    assert decision_from_files("my-model", smol["generation_config"], ends_only)[1].startswith(
        "my-model: prompts in the chat template (instruct='auto': its generation stops only at the chat turn's end "
        "(<|im_end|>))")


def test_smollm2_instructs_values_are_its_real_files():
    """The fixture's SmolLM2-135M-Instruct values against the real checkpoint the project ships (its GGUF)."""
    from helpers.models.loading import check_loadable, load_tokenizer

    tokenizer = load_tokenizer(check_loadable("smollm2-135m-instruct"))
    smol = next(c for c in CHECKPOINTS if c["checkpoint"] == "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert tokenizer.eos_token == smol["tokenizer_config"]["eos_token"] == "<|im_end|>"
    assert tokenizer.convert_ids_to_tokens(smol["generation_config"]["eos_token_id"]) == "<|im_end|>"
    assert tokenizer.chat_template and "<|im_start|>" in tokenizer.chat_template
