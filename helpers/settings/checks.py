"""How the values of settings are read and checked (the checks that need no other setting's
entry): each takes (name, value) and returns the value as used, or raises a one-line error."""
from __future__ import annotations

from pathlib import Path

from .lists import parse_list

AUTO = "auto"


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
