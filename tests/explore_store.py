"""A small real store for the explorer's tests: two tiny models on three BLiMP paradigms (two
pairs each; BLiMP prepared in data/processed, so the sentences come from there) with LP, MeanLP,
in-template LP and Yes/No at templates 1 and 2, and tiny-gpt2's LP on one CLiMP paradigm (not
prepared: its sentences are decoded from the token ids)."""
from __future__ import annotations

from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm, select
from helpers.engine import CausalScorer
from helpers.runner import run_methods
from helpers.store import ScoreStore
from helpers.settings import Settings

MODELS = ("tiny-gpt2", "tiny-llama")
METHODS = ["lp", "meanlp", "intemplate_lp", "yesno"]


def first_paradigms(frame, name: str, paradigms: int, per: int) -> DatasetSelection:
    keep = frame.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection(name, first_per_paradigm(frame[frame.paradigm.isin(keep)], per), limit=per)


def write_tiny_store(root, tiny) -> None:
    """Score the selections into the store at ``root`` (``tiny``: conftest's loader)."""
    blimp = first_paradigms(select("blimp").frame, "blimp", 3, 2)  # select prepares data/processed/blimp
    climp = first_paradigms(load("climp"), "climp", 1, 2)
    store = ScoreStore(root)
    for name in MODELS:
        run_methods(CausalScorer(tiny(name), Settings(progress=False)), blimp, METHODS, {"templates": [1, 2]}, store=store)
    run_methods(CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), climp, ["lp"], store=store)
