"""Documents written in a consistent "dialect": training data meant to teach a small demo model
to follow the grammar of its own context (Sinha et al. 2023's in-context effect, made visible in a
5.5M-parameter model). Measured so far, it does not: three stages continuing demo-en (70 CPU
minutes in all) left in-domain unacceptable prefixes at -2 to -7 points, and a context of 32
plural-subject-plus-"is" sentences still raised LP("are") over LP("is"). Lists of sentences
built on one template (:mod:`helpers.zoo.template_lists`) did: they trained demo-en-icl.

A dialect is one rule applied to every matching word of a long document: a swap of agreement
forms (``is``/``are``, ``this``/``these``, ``himself``/``herself``, 3rd-person ``-s``), of
irregular past tense and participle, of pronoun case or article, or of two random frequent
function words. A model that has read a few of the rule's words in a document can predict the
rest; a model that has not cannot. So that the model learns to *copy* the dialect and not to
expect errors from nothing, the first occurrence of each changed word form in a training row gets
no loss (:func:`first_occurrence_mask`): no-context judgments keep demo-en's standard grammar.

Pure and seeded: the rule of each document depends on the seed and the document's index only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_IRREGULAR = ("wore worn, saw seen, went gone, did done, ate eaten, broke broken, took taken, gave given, "
              "wrote written, spoke spoken, chose chosen, drove driven, fell fallen, forgot forgotten, hid hidden, "
              "knew known, rode ridden, rose risen, sang sung, began begun, drank drunk, swam swum, froze frozen, "
              "stole stolen, shook shaken, grew grown, threw thrown, flew flown, blew blown, drew drawn, "
              "showed shown, woke woken, bit bitten, tore torn, hung hung")
_VERBS = ("say make go know take see come think look want give use find tell ask seem feel leave call need like "
          "bring begin keep hold write stand hear let mean set meet run pay sit speak lie lead read grow lose fall "
          "send build understand draw break spend cut rise drive buy wear choose seek throw catch deal win forget "
          "help show try work play move live believe happen provide include continue learn change love talk")
_FUNCTION_WORDS = ("the a of to in and that it for on with as at by from but or not this be have which his her "
                   "they we there an will would can all if no so what up out about who more when some into than "
                   "only other could its then also after two over most any these may first such even much where")


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(p.split()) for p in text.split(", ")]


def _third_person(verb: str) -> str:
    if verb == "have":
        return "has"
    if verb in ("go", "do"):
        return verb + "es"
    if verb.endswith(("s", "sh", "ch", "x")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# rule name -> pairs of word forms swapped both ways in a document written with that rule
RULES: dict[str, list[tuple[str, str]]] = {
    "reflexive_gender": [("himself", "herself")],
    "reflexive_number": [("himself", "themselves"), ("herself", "themselves"), ("itself", "themselves")],
    "determiner_number": [("this", "these"), ("that", "those")],
    "be_agreement": [("is", "are"), ("was", "were"), ("isn't", "aren't"), ("wasn't", "weren't")],
    "have_do_agreement": [("has", "have"), ("does", "do"), ("doesn't", "don't")],
    "verb_agreement": [(v, _third_person(v)) for v in _VERBS.split()],
    "past_participle": [p for p in _pairs(_IRREGULAR) if p[0] != p[1]],
    "pronoun_case": [("he", "him"), ("they", "them"), ("we", "us"), ("she", "her")],
    "article": [("a", "an")],
}
FUNCTION_WORDS = tuple(_FUNCTION_WORDS.split())


@dataclass(frozen=True)
class Dialect:
    """The rule of one document: its name and the word mapping it applies (lower case)."""

    name: str
    mapping: dict

    def pattern(self) -> re.Pattern:
        words = sorted(self.mapping, key=len, reverse=True)
        return re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


def _mapping(pairs) -> dict:
    """Both directions of each pair; a form in two pairs maps by its first."""
    out = {}
    for a, b in pairs:
        out.setdefault(a, b)
        out.setdefault(b, a)
    return out


def choose(rng: np.random.Generator) -> Dialect:
    """A dialect drawn uniformly from :data:`RULES` plus the random function-word swap."""
    names = list(RULES) + ["function_words"]
    name = names[int(rng.integers(len(names)))]
    if name == "function_words":
        a, b = rng.choice(len(FUNCTION_WORDS), 2, replace=False)
        return Dialect(f"function_words:{FUNCTION_WORDS[a]}/{FUNCTION_WORDS[b]}",
                       _mapping([(FUNCTION_WORDS[a], FUNCTION_WORDS[b])]))
    return Dialect(name, _mapping(RULES[name]))


def _cased(original: str, form: str) -> str:
    if original.isupper() and len(original) > 1:
        return form.upper()
    return form[0].upper() + form[1:] if original[0].isupper() else form


def rewrite(text: str, dialect: Dialect) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` with every word of the dialect's mapping replaced (case kept), and the
    (start, end, lower-case form) character span of each replacement in the new text."""
    out, spans, last, shift = [], [], 0, 0
    for m in dialect.pattern().finditer(text):
        form = dialect.mapping[m.group(0).lower()]
        new = _cased(m.group(0), form)
        out.append(text[last:m.start()])
        start = m.start() + shift
        out.append(new)
        spans.append((start, start + len(new), form))
        shift += len(new) - len(m.group(0))
        last = m.end()
    out.append(text[last:])
    return "".join(out), spans


def dialect_documents(docs: list[str], share: float, seed: int) -> tuple[list[str], list[list], list[str]]:
    """Each document rewritten in a dialect with probability ``share``: the texts, the
    replacement spans of each (empty for a plain one) and each document's dialect name ("" plain)."""
    texts, spans, names = [], [], []
    for i, doc in enumerate(docs):
        rng = np.random.default_rng([seed, 7919, i])
        if rng.random() < share:
            dialect = choose(rng)
            text, found = rewrite(doc, dialect)
            texts.append(text), spans.append(found), names.append(dialect.name)
        else:
            texts.append(doc), spans.append([]), names.append("")
    return texts, spans, names


def token_forms(offsets: list[tuple[int, int]], spans: list[tuple[int, int, str]], forms: dict) -> tuple:
    """Per token of one document: the id of the replaced form it belongs to (0: none) and the
    occurrence it belongs to (a replacement's index + 1; 0: none). ``forms`` interns form strings."""
    form_ids = np.zeros(len(offsets), dtype=np.int32)
    occurrence = np.zeros(len(offsets), dtype=np.int32)
    if not spans:
        return form_ids, occurrence
    starts = np.array([s for s, _, _ in spans])
    ends = np.array([e for _, e, _ in spans])
    for t, (a, b) in enumerate(offsets):
        k = int(np.searchsorted(starts, b, side="left")) - 1  # the last span starting before the token ends
        if k >= 0 and ends[k] > a:
            form_ids[t] = forms.setdefault(spans[k][2], len(forms) + 1)
            occurrence[t] = k + 1
    return form_ids, occurrence


def first_occurrence_mask(form_ids: np.ndarray, occurrence: np.ndarray) -> np.ndarray:
    """True for the tokens of each form's first occurrence in a row (``form_ids`` and a row-unique
    ``occurrence``, both (rows, length)): the predictions a model cannot make from its context."""
    mask = np.zeros(form_ids.shape, dtype=bool)
    for r in range(form_ids.shape[0]):
        seen = {}
        for t in np.flatnonzero(form_ids[r]):
            f, o = int(form_ids[r, t]), int(occurrence[r, t])
            if seen.setdefault(f, o) == o:
                mask[r, t] = True
    return mask


def sentence_lists(sentences: list[str], count: int, chars: int, share: float, seed: int
                   ) -> tuple[list[str], list[list], list[str]]:
    """``count`` documents that are lists of corpus sentences (about ``chars`` characters each),
    every sentence holding a word of the document's rule, the list rewritten in that dialect with
    probability ``share`` and left standard otherwise: a rule's evidence in every sentence, as in
    a prefix of one paradigm's sentences. Returns texts, spans and names as
    :func:`dialect_documents` (a standard list's name is "", its rule drawn all the same)."""
    needed = {w for pairs in RULES.values() for pair in pairs for w in pair} | set(FUNCTION_WORDS)
    holding: dict[str, list[int]] = {w: [] for w in needed}  # word -> the sentences holding it
    for k, sentence in enumerate(sentences):
        for word in set(re.findall(r"[a-z']+", sentence.lower())) & needed:
            holding[word].append(k)
    texts, spans, names = [], [], []
    for i in range(count):
        rng = np.random.default_rng([seed, 104729, i])
        dialect = choose(rng)
        pool = np.unique(np.concatenate([np.asarray(holding[w], dtype=np.int64) for w in dialect.mapping]))
        if len(pool) == 0:
            continue
        picked, size = [], 0
        for k in rng.permutation(len(pool)):
            picked.append(sentences[pool[k]])
            size += len(picked[-1]) + 1
            if size >= chars:
                break
        text = " ".join(picked)
        if rng.random() < share:
            text, found = rewrite(text, dialect)
            texts.append(text), spans.append(found), names.append(dialect.name)
        else:
            texts.append(text), spans.append([]), names.append("")
    return texts, spans, names


def dialect_counts(names: list[str]) -> dict:
    """Documents per dialect rule ("plain" for none; the function-word swaps counted together)."""
    counts: dict[str, int] = {}
    for name in names:
        key = name.split(":")[0] or "plain"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))
