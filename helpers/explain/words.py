"""Words of a sentence from its tokens: word spans (Chinese characters one by one), the word
of each token from the tokens' character offsets, and the two sentences of a pair lined up
word by word (which words differ)."""
from __future__ import annotations

import difflib
import re

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# a Chinese character, a word (letters and digits, with inner apostrophes: "haven't"), or a punctuation mark
_WORD = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+(?:['’][^\\W{_CJK}]+)*|[^\\w\\s]")


def language_of(text: str) -> str:
    """"zh" for text with Chinese characters, else "en" (the templates and answer words to use)."""
    return "zh" if re.search(f"[{_CJK}]", text) else "en"


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text``: runs of letters and digits (an inner apostrophe
    included), each punctuation mark, and each Chinese character on its own (Chinese is written
    without spaces)."""
    return [m.span() for m in _WORD.finditer(text)]


def group_tokens(text: str, offsets) -> tuple[list[tuple[int, int]], list[int]]:
    """Words of ``text`` and the word of each token, from the tokens' character offsets.

    A token belongs to every word its span overlaps; words that share a token are merged
    (a token "我喜" makes one word of two characters), so every token has exactly one word.
    Returns the words' spans and, per token, the index of its word."""
    spans = word_spans(text)
    parent = list(range(len(spans)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    touched = []
    for start, end in offsets:
        hit = [k for k, (ws, we) in enumerate(spans) if ws < end and start < we]
        if not hit:  # a token of spaces only: it joins the next word (or the last one)
            hit = [next((k for k, (ws, _) in enumerate(spans) if ws >= end), len(spans) - 1)]
        for k in hit[1:]:
            parent[root(k)] = root(hit[0])
        touched.append(hit[0])
    roots = sorted({root(k) for k in range(len(spans))})
    merged = {r: (min(spans[k][0] for k in range(len(spans)) if root(k) == r),
                  max(spans[k][1] for k in range(len(spans)) if root(k) == r)) for r in roots}
    order = sorted(merged, key=lambda r: merged[r][0])
    index = {r: i for i, r in enumerate(order)}
    return [merged[r] for r in order], [index[root(k)] for k in touched]


def align_words(good: list[str], bad: list[str]) -> list[tuple[int | None, int | None, bool]]:
    """Columns that line the two word sequences up: (good word, bad word, differs). Equal runs
    share columns; a replaced, inserted or deleted stretch gets columns of its own."""
    columns = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=good, b=bad, autojunk=False).get_opcodes():
        if tag == "equal":
            columns += [(i1 + k, j1 + k, False) for k in range(i2 - i1)]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            columns.append((i1 + k if i1 + k < i2 else None, j1 + k if j1 + k < j2 else None, True))
    return columns
