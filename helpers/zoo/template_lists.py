"""Lists of sentences built on one template: training data that teaches a small demo model to
follow the structure of its context, as a priming prefix of one BLiMP paradigm asks it to.

A template is a sentence of the Brown corpus with its part-of-speech tags. Each sentence of a
list keeps the template's function words and draws its content words (nouns, verbs, adjectives,
adverbs, names, numbers) anew from words of the same tag. Half of the lists are written with one
deviation in the template, kept by every sentence of the list: a tag swapped for its agreement
or form partner (singular/plural noun, ``is``/``are``, ``this``/``these``, ``himself``/``themselves``,
3rd-person ``-s``, past tense/participle, pronoun case), a word dropped, or two neighbours
swapped. A model that has read a few sentences of a list can predict the rest, deviation
included; one that has not cannot. So that it learns to *copy* and not to expect deviations
without a context, the first sentence of every list carries no loss (its span is returned).

Pure and seeded: list ``i`` depends on the seed and ``i`` only. Sentences of the benchmarks are
never written (``banned``).
"""
from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.corpora import CORPORA, detokenize

CONTENT_TAGS = ("nn", "nns", "np", "jj", "vb", "vbd", "vbn", "vbg", "vbz", "rb", "cd")
# tag -> its partner in the agreement or form contrasts BLiMP tests (swapped both ways)
PARTNERS = {"nn": "nns", "vb": "vbz", "vbd": "vbn", "bez": "ber", "bedz": "bed", "hvz": "hv", "doz": "do",
            "dt": "dts", "ppl": "ppls", "pps": "ppo", "ppss": "ppo"}
PARTNERS.update({b: a for a, b in list(PARTNERS.items()) if b not in PARTNERS})
_SIMPLE_TAG = re.compile(r"^[a-z$]+$")
_WORD = re.compile(r"^[A-Za-z](?:[A-Za-z'-]*[A-Za-z])?$")
MIN_COUNT = 3  # a word enters the lexicon of a tag after this many occurrences with it
DEVIATIONS = ("swap_tag", "drop_word", "swap_neighbours")


@dataclass(frozen=True)
class Template:
    """One tagged sentence: its words and their (lower-case, simple) Brown tags."""

    words: tuple[str, ...]
    tags: tuple[str, ...]


def brown_templates(path: Path, min_words: int = 5, max_words: int = 16) -> tuple[list[Template], dict]:
    """The Brown corpus's plain declarative sentences of ``min_words`` to ``max_words`` words
    (one final period, simple tags, no titles, headlines or foreign words) and the lexicon: tag ->
    (words, counts) over every sentence."""
    templates, lexicon = [], {}
    with zipfile.ZipFile(path) as z:
        for name in sorted(n for n in z.namelist() if re.search(r"brown/c[a-r]\d\d$", n)):
            for line in z.read(name).decode("utf-8", errors="replace").splitlines():
                pairs = [t.rsplit("/", 1) for t in line.split() if "/" in t]
                if not pairs:
                    continue
                for k, (word, tag) in enumerate(pairs):
                    if _SIMPLE_TAG.match(tag) and _WORD.match(word):
                        key = word.lower() if k == 0 and tag != "np" else word
                        lexicon.setdefault(tag, {}).setdefault(key, 0)
                        lexicon[tag][key] += 1
                body, last = pairs[:-1], pairs[-1]
                if last != [".", "."] or not min_words <= len(body) <= max_words:
                    continue
                if all(_SIMPLE_TAG.match(t) and _WORD.match(w) for w, t in body):
                    words = [w.lower() if k == 0 and t != "np" else w for k, (w, t) in enumerate(body)]
                    templates.append(Template(tuple(words), tuple(t for _, t in body)))
    vocab = {}
    for tag, counts in lexicon.items():
        common = {w: c for w, c in counts.items() if c >= MIN_COUNT}
        if len(common) >= 2:
            vocab[tag] = (list(common), np.asarray(list(common.values()), dtype=np.float64))
    return templates, vocab


def brown_path() -> Path:
    """The mirror's Brown corpus archive."""
    return CORPORA["brown"].files()[0]


def deviate(template: Template, vocab: dict, rng: np.random.Generator) -> tuple[Template, str] | None:
    """The template with one deviation drawn from :data:`DEVIATIONS` (None when the drawn kind
    has nothing to change in it) and the deviation's name."""
    kind = DEVIATIONS[rng.choice(len(DEVIATIONS), p=[0.6, 0.2, 0.2])]
    words, tags = list(template.words), list(template.tags)
    if kind == "swap_tag":
        slots = [i for i, t in enumerate(tags) if t in PARTNERS and PARTNERS[t] in vocab]
        if not slots:
            return None
        i = slots[rng.integers(len(slots))]
        tags[i] = PARTNERS[tags[i]]
        words[i] = _draw(vocab, tags[i], rng)
        return Template(tuple(words), tuple(tags)), f"swap_tag:{template.tags[i]}>{tags[i]}"
    if kind == "drop_word":
        i = int(rng.integers(1, len(words)))
        return Template(tuple(words[:i] + words[i + 1:]), tuple(tags[:i] + tags[i + 1:])), f"drop_word:{tags[i]}"
    i = int(rng.integers(1, len(words) - 1))
    words[i], words[i + 1], tags[i], tags[i + 1] = words[i + 1], words[i], tags[i + 1], tags[i]
    return Template(tuple(words), tuple(tags)), f"swap_neighbours:{tags[i + 1]}-{tags[i]}"


def _draw(vocab: dict, tag: str, rng: np.random.Generator) -> str:
    words, counts = vocab[tag]
    weights = np.sqrt(counts)
    return words[int(rng.choice(len(words), p=weights / weights.sum()))]


def realise(template: Template, vocab: dict, rng: np.random.Generator, keep: float = 0.3) -> str:
    """One sentence of the template: each content word kept with probability ``keep``, else
    drawn anew from its tag's words (weighted by the square root of their counts); "a" and "an"
    follow the next word's first letter."""
    words = [w if t not in CONTENT_TAGS or t not in vocab or rng.random() < keep else _draw(vocab, t, rng)
             for w, t in zip(template.words, template.tags)]
    for k in range(len(words) - 1):
        if words[k].lower() in ("a", "an"):
            article = "an" if words[k + 1][0].lower() in "aeiou" else "a"
            words[k] = article.capitalize() if words[k][0].isupper() else article
    text = detokenize(" ".join(words) + " .")
    return text[:1].upper() + text[1:]


def template_lists(count: int, chars: int, seed: int, banned: set[str] = frozenset(),
                   deviation_share: float = 0.5, lists_per_document: int = 2, path: Path | None = None
                   ) -> tuple[list[str], list[list[tuple[int, int]]], list[str]]:
    """``count`` documents of about ``chars`` characters, each one to ``lists_per_document``
    template lists one after another, a list written with a deviation with probability
    ``deviation_share``. Returns the texts, per text the character spans that carry no loss
    (each list's first sentence) and per text the lists' deviations ("" for a standard list)."""
    templates, vocab = brown_templates(path or brown_path())
    texts, spans, names = [], [], []
    for i in range(count):
        rng = np.random.default_rng([seed, 7919, i])
        n_lists = int(rng.integers(1, lists_per_document + 1))
        budget = chars / n_lists
        parts, no_loss, kinds, size = [], [], [], 0
        for _ in range(n_lists):
            template, kind = templates[int(rng.integers(len(templates)))], ""
            if rng.random() < deviation_share:
                deviated = deviate(template, vocab, rng)
                if deviated is not None:
                    template, kind = deviated
            written = 0
            while written < budget:
                sentence = realise(template, vocab, rng)
                if " ".join(sentence.split()) in banned:
                    continue
                start = size + (1 if parts else 0)
                if written == 0:
                    no_loss.append((start, start + len(sentence)))
                parts.append(sentence)
                size, written = start + len(sentence), written + len(sentence) + 1
            kinds.append(kind)
        texts.append(" ".join(parts))
        spans.append(no_loss)
        names.append("|".join(kinds))
    return texts, spans, names


def trained_tokens(offsets, no_loss: list[tuple[int, int]]) -> np.ndarray:
    """Per token (character ``offsets`` from a fast tokenizer): False where the token starts
    inside a span without loss."""
    starts = np.asarray([a for a, _ in offsets], dtype=np.int64)
    out = np.ones(len(starts), dtype=bool)
    for a, b in no_loss:
        out &= ~((starts >= a) & (starts < b))
    return out


def deviation_counts(names: list[str]) -> dict:
    """Template lists per deviation kind ("standard" for none)."""
    counts: dict[str, int] = {}
    for name in names:
        for kind in name.split("|"):
            key = kind.split(":")[0] or "standard"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))
