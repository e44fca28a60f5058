"""How the values of settings are read and checked (the checks that need no other setting's
entry): each takes (name, value) and returns the value as used, or raises a one-line error."""
from __future__ import annotations

from pathlib import Path

from .lists import parse_list

AUTO = "auto"
# The document-start conventions a scorer takes by name (``start=``), as score files record them.
START_CONVENTIONS = {
    "bos-else-eos": "one BOS token (else EOS) before every sequence, so the first word is scored (the default)",
    "none": "no start token and no special tokens: the first token of a sequence is unscored "
            "(Ide et al.'s released code for Qwen, which has no BOS)",
    "minicons": "no start token added; the tokenizer adds its own special tokens, if any, and the first token "
                "is unscored (minicons' IncrementalLMScorer, which Sinha et al. measured with)",
}
# How much of a run's input the engine runs once and reuses (helpers.engine.causal.CausalScorer).
SHARE_MODES = ("none", "context", "prefix", "tree", AUTO)
ORDER_AVERAGES = ("accuracy", "logprob")  # Hu & Levy's two answer orders (helpers.methods.hu_levy)
PASS_RULES = {  # which SyntaxGym predictions decide an item (helpers.methods.syntaxgym_pass)
    "directional": "every prediction with a direction (< or >) holds; null predictions (only =) are reported, "
                   "not counted (Hu et al. 2020's released results)",
    "strict": "every prediction holds",
}
TOKEN = "token:"  # start="token:<s>": a literal start token
QUANTS = ("none", "4bit", "8bit")
DTYPES = ("float32", "bfloat16", "float16")


def _revision(name: str, value):
    if value in (None, AUTO):
        return AUTO
    if not isinstance(value, str) or not value.strip() or value.strip() != value:
        raise ValueError(f"revision={value!r} is not a revision: use 'auto' (the registry's) or a commit hash, "
                         "branch or tag of the model's Hugging Face repository")
    return value


def parse_max_memory(items) -> dict | None:
    """``["0=20GiB", "cpu=60GiB"]`` or ``"0=20GiB,cpu=60GiB"`` (the command line's and a
    notebook parameter's forms) as ``{0: "20GiB", "cpu": "60GiB"}``; a dict is kept."""
    if not items:
        return None
    if isinstance(items, dict):
        return dict(items)
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    out = {}
    for item in items:
        key, sep, size = str(item).partition("=")
        if not sep or not key.strip() or not size.strip():
            raise ValueError(f"max memory {item!r} is not DEVICE=SIZE, e.g. 0=20GiB or cpu=60GiB")
        key = key.strip()
        out[int(key) if key.isdigit() else key] = size.strip()
    return out


def _device_map(name: str, value):
    return None if value in (None, "none", "None", "null") else value


def _max_memory(name: str, value):
    return parse_max_memory(value)


def _as_given(name: str, value):
    return value


def _progress(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"progress={value!r}: use True or False")
    return value


def _templates(name: str, value):
    """Template ids (ints: Ide et al.'s) and Hu & Levy prompt types (names), as a tuple; "all" and
    None: "auto", every template of each family."""
    if value is None or value == AUTO or (isinstance(value, str) and value.strip().lower() == "all"):
        return AUTO
    try:
        items = parse_list(value, what="template", convert=lambda s: int(s) if s.isdigit() else s)
    except ValueError:
        items = []
    if not items or any(isinstance(i, bool) or not isinstance(i, (int, str)) for i in items):
        raise ValueError(f"templates must be template ids (1 to 5) and/or Hu & Levy prompt types, or 'all', "
                         f"got {value!r}")
    return tuple(int(i) if not isinstance(i, str) else i for i in items)


def _seed(name: str, value):
    if value is None or value == AUTO:
        return AUTO
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def _outlines(name: str, value):
    if value is None or (isinstance(value, str) and value.strip().lower() == AUTO):
        return AUTO
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    raise ValueError(f"use_outlines must be 'auto', True or False, got {value!r}")


def _positive(name: str, value):
    """A number > 0 (a string of one, as a command line gives it), or "auto"."""
    if value is None or value == AUTO:
        return AUTO
    try:
        number = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None or not number > 0 or number != number or number == float("inf"):
        raise ValueError(f"{name}={value!r} is not a number > 0: use 'auto' or e.g. 0.8")
    return number


def _fewshot(name: str, value):
    """k (0: none) or a :class:`helpers.methods.fewshot.FewShot` (k, source and seed), kept as given."""
    if value is None or value == AUTO:
        return AUTO
    if hasattr(value, "k") and hasattr(value, "source"):  # a FewShot: checked when it was made
        return value
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"few-shot k must be a whole number >= 0 (0: no examples) or a "
                         f"helpers.methods.fewshot.FewShot, got {value!r}")
    return value


def _corpus(name: str, value):
    if value is None or value == AUTO:
        return AUTO
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise ValueError(f"unigram_corpus must be None (the mirror's corpora), a text file or a Hugging Face "
                         f"dataset name, got {value!r}")
    return value


def _instruct(name: str, value):
    """True, False or "auto" (the strings "true" and "false" as a command line gives them)."""
    if value is None or value == AUTO:
        return AUTO
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"instruct={value!r} does not exist: use 'auto' (the registry's entry; a model it does not list: "
                     "what marks an instruct checkpoint), true or false")


def _start(name: str, value) -> str:
    """A start convention, "auto", or ``"token:"`` and a literal start token of the model's vocabulary."""
    if value is None:
        return AUTO
    if value == AUTO or value in START_CONVENTIONS or (isinstance(value, str) and len(value) > len(TOKEN)
                                                       and value.startswith(TOKEN)):
        return value
    raise ValueError(f"start={value!r} does not exist: use one of {', '.join(map(repr, (AUTO, *START_CONVENTIONS)))} "
                     f"('auto': the model's registry entry), or {TOKEN!r} and a token of the model's vocabulary "
                     "(e.g. 'token:<s>')")


def _count(name: str, value):
    """A whole number > 0 (of sequences for batch_size, else of tokens), or "auto"."""
    if value in (None, AUTO):
        return AUTO
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r} is not a number of {'sequences' if name == 'batch_size' else 'tokens'}: "
                         "use 'auto' or a whole number > 0 (python -m helpers settings says what it counts)")
    return value


class Recorded:
    """A test of a score file's recorded value (:meth:`Settings.score_filter`), named by the setting
    it stands for; a file that records nothing under the key (a method that does not read it) passes."""

    def __init__(self, said: str, test):
        self.said, self.test = said, test

    def __call__(self, recorded) -> bool:
        return recorded is None or self.test(recorded)

    def __repr__(self) -> str:
        return self.said
