"""Datasets and prompts of the offline lm-eval tasks in this folder, read from the project's
mirror (helpers.data: checked against data/sources.yaml) instead of the Hugging Face Hub that
lm-eval's own blimp, zhoblimp, turblimp, blimp_nl, bhs and multiblimp tasks download from. Columns
as those tasks name them (sentence_good, sentence_bad; sen, wrong_sen; context, ending_good,
ending_bad), each paradigm as UID; lm-eval finds this module by the tasks' ``!function`` tags."""
from __future__ import annotations

import datasets

from helpers import data
from helpers.methods.prompt_text import render
from helpers.methods.templates import ide_templates


def _pairs(name: str, pairs=None, good: str = "sentence_good", bad: str = "sentence_bad",
           columns: tuple[str, ...] = ()) -> datasets.DatasetDict:
    """A dataset of minimal pairs as lm-eval's pair tasks read it, one document per pair, its
    sentences under the names of lm-eval's own task for it (and ``columns`` of the table kept)."""
    pairs = data.load_processed(name) if pairs is None else pairs
    table = {good: pairs["good"].tolist(), bad: pairs["bad"].tolist(), "UID": pairs["paradigm"].tolist(),
             "pair_id": pairs["pair_id"].astype(str).tolist(), **{c: pairs[c].astype(str).tolist() for c in columns}}
    return datasets.DatasetDict({"test": datasets.Dataset.from_dict(table)})


def blimp(paradigm: str | None = None, **metadata) -> datasets.DatasetDict:
    """BLiMP's 67,000 pairs (the mirror), in the order of its paradigms; with ``paradigm`` (the
    task's metadata, or ``--metadata '{"paradigm": "adjunct_island"}'``) that paradigm's 1,000, as
    lm-eval's ``blimp_<paradigm>`` task holds them."""
    pairs = data.load_processed("blimp")
    if paradigm is not None:
        if paradigm not in set(pairs["paradigm"]):
            raise ValueError(f"blimp_offline: no BLiMP paradigm {paradigm!r}; BLiMP's 67 are "
                             f"{', '.join(pairs['paradigm'].unique())}")
        pairs = pairs[pairs["paradigm"] == paradigm]
    return _pairs("blimp", pairs)


def zhoblimp(**metadata) -> datasets.DatasetDict:
    """ZhoBLiMP's 35,400 pairs (the mirror)."""
    return _pairs("zhoblimp")


def turblimp(**metadata) -> datasets.DatasetDict:
    """TurBLiMP's 16,000 pairs (the release in the mirror)."""
    return _pairs("turblimp")


def blimp_nl(**metadata) -> datasets.DatasetDict:
    """BLiMP-NL's 8,400 pairs (the release copy in the mirror)."""
    return _pairs("blimp_nl")


def qfrblimp(**metadata) -> datasets.DatasetDict:
    """QFrBLiMP's 1,761 pairs (the unshuffled release file in the mirror)."""
    return _pairs("qfrblimp")


def bhs(**metadata) -> datasets.DatasetDict:
    """BHS's 22,000 items as its Hub copy's columns: context, ending_good, ending_bad."""
    return _pairs("bhs", columns=("context", "ending_good", "ending_bad"))


MULTIBLIMP_MIRRORED = "ell,eng,nld,tur"  # the languages whose Hub files the mirror holds


def multiblimp(**metadata) -> datasets.DatasetDict:
    """MultiBLiMP's pairs of the mirrored languages (5,939), as its Hub columns sen and wrong_sen."""
    return _pairs("multiblimp", data.load("multiblimp", languages=MULTIBLIMP_MIRRORED), "sen", "wrong_sen")


def blimp_sentences(**metadata) -> datasets.DatasetDict:
    """Each BLiMP sentence as a document (each pair's acceptable one, then its unacceptable one),
    labelled 0 (acceptable: "Yes") or 1 ("No")."""
    pairs = data.load_processed("blimp")
    sentences, labels, uids = [], [], []
    for good, bad, uid in zip(pairs["good"], pairs["bad"], pairs["paradigm"]):
        sentences += [good, bad]
        labels += [0, 1]
        uids += [uid, uid]
    return datasets.DatasetDict({"test": datasets.Dataset.from_dict(
        {"sentence": sentences, "label": labels, "UID": uids})})


YES_NO = ide_templates("yn", "en", "base")[0]  # Ide et al. (2024)'s first Yes/No prompt, as notebook 03 renders it


def yes_no_prompt(doc: dict) -> str:
    """The Yes/No prompt of a sentence for a base model (it ends in "Answer: ")."""
    return render(YES_NO, None, instruct=False, sentence=doc["sentence"])
