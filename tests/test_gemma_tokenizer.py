"""The real 262k tokenizer the benchmarks read (benchmarks/gemma_tokenizer.py) tokenizes as llama.cpp does."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import gemma_tokenizer  # noqa: E402


def test_gemma4_tokenizer_gives_llama_cpps_ids_on_its_test_strings():
    tokenizer = gemma_tokenizer.gemma4_tokenizer()
    cases = gemma_tokenizer.llama_cpp_cases()
    assert len(tokenizer) == 262_144 and len(cases) == 46
    assert [tokenizer(text, add_special_tokens=False)["input_ids"] for text, _ in cases] == [ids for _, ids in cases]
    assert tokenizer("The cat was sleeping.", add_special_tokens=False)["input_ids"] == [818, 5866, 691, 20537, 236761]
    assert (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id) == (2, 1, 0)
