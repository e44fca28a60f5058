"""How one priming prefix grows: sentences joined as Sinha et al. join them, tokens counted once
per sentence (alone and after a space), a seeded order per (pair, type, draw), and a prefix
extended sentence by sentence until it reaches its target length or the model's positions
(:mod:`helpers.data.priming` builds the tables)."""
from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

_FINAL = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
PREFETCH = 64  # sentences counted in one call as a prefix grows
NEAR = 8  # tokens below the position limit from which a prefix is checked on the joined text

Counter = Callable[[str], int]


def as_sentence(text: str) -> str:
    """``text`` with single spaces, ending in a period unless it ends in . ! or ? already."""
    text = " ".join(str(text).split())
    return text if not text or _FINAL.search(text) else text + "."


def join(sentences: Iterable[str]) -> str:
    """Sentences joined as Sinha et al. join them: each ending in its period, single spaces."""
    return " ".join(as_sentence(s) for s in sentences)


class TokenCounter:
    """Counts the tokens of a text under ``tokenizer``, without special tokens; ``many``
    counts a list in one call. A fast tokenizer's Rust backend is called directly (a third
    of the wrapper's time) while it is set, as the wrapper sets it, to neither truncate nor pad."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def _backend(self):
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None or backend.truncation is not None or backend.padding is not None or \
                backend.encode_special_tokens != bool(getattr(self.tokenizer, "split_special_tokens", False)):
            return None
        return backend

    def __call__(self, text: str) -> int:
        backend = self._backend()
        if backend is not None:
            return len(backend.encode(text, add_special_tokens=False))
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def many(self, texts: Sequence[str]) -> list[int]:
        backend, texts = self._backend(), list(texts)
        if backend is not None:
            return [len(e) for e in backend.encode_batch(texts, add_special_tokens=False)]
        return [len(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []


def token_counter(tokenizer) -> TokenCounter:
    """text -> its number of tokens under ``tokenizer`` (a :class:`TokenCounter`)."""
    return TokenCounter(tokenizer)


def _key(*parts) -> int:
    """A stable 64-bit integer of ``parts`` (Python's hash() changes between runs)."""
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "little")


def _rng(seed: int, *keys) -> np.random.Generator:
    return np.random.default_rng([seed, *(_key(k) for k in keys)])


class _Texts:
    """The unique sentences of a call (sorted, so pools do not depend on row order) and their
    token counts, each counted once: alone (first in a prefix) and after a space."""

    def __init__(self, texts: Iterable[str], count: Counter):
        self.texts = np.array(sorted(set(texts)), dtype=object)
        self.index = {t: i for i, t in enumerate(self.texts)}
        self.count = count
        self._costs = np.full((2, len(self.texts)), -1, dtype=np.int64)

    def ids(self, texts: Iterable[str]) -> np.ndarray:
        """The sorted unique ids of those ``texts`` that are known."""
        return np.unique(np.array([self.index[t] for t in texts if t in self.index], dtype=np.int64))

    def counted(self, i: int) -> bool:
        return self._costs[1, i] >= 0

    def prefetch(self, ids: np.ndarray) -> None:
        """Count the sentences ``ids`` (after a space) in one call, if the counter has ``many``."""
        todo = ids[self._costs[1, ids] < 0]
        if len(todo) and hasattr(self.count, "many"):
            self._costs[1, todo] = [self._check(n) for n in self.count.many([" " + t for t in self.texts[todo]])]

    def cost(self, i: int, first: bool) -> int:
        row = 0 if first else 1
        if self._costs[row, i] < 0:
            self._costs[row, i] = self.measure(self.texts[i] if first else " " + self.texts[i])
        return int(self._costs[row, i])

    def measure(self, text: str) -> int:
        return self._check(self.count(text))

    @staticmethod
    def _check(n) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"count_tokens must return an int, got {type(n).__name__}; "
                            "pass priming.token_counter(tokenizer)")
        return int(n)


class _Growth:
    """One prefix grown lazily along a random order of pool ids; ``limit`` caps the estimated
    tokens (sum of per-sentence counts), ``fits`` checks the joined text exactly."""

    def __init__(self, texts: _Texts, order: np.ndarray, limit: int | None, fits: Callable[[str], bool]):
        self.texts, self.order, self.limit, self._fits = texts, order, limit, fits
        self.ids: list[int] = []
        self.cumulative: list[int] = []  # estimated tokens of the first 1, 2, ... sentences
        self.stop = ""  # "capped" or "exhausted" once it cannot grow
        self._actual: dict[int, int] = {}
        self._fit: dict[int, bool] = {}

    def extend(self) -> bool:
        if self.stop:
            return False
        if len(self.ids) == len(self.order):
            self.stop = "exhausted"
            return False
        i = int(self.order[len(self.ids)])
        if self.ids and not self.texts.counted(i):
            self.texts.prefetch(self.order[len(self.ids):len(self.ids) + PREFETCH])
        estimate = (self.cumulative[-1] if self.ids else 0) + self.texts.cost(i, first=not self.ids)
        if self.limit is not None and estimate > self.limit:
            self.stop = "capped"
            return False
        self.ids.append(i)
        self.cumulative.append(estimate)
        return True

    def text(self, k: int) -> str:
        return " ".join(self.texts.texts[self.ids[:k]])

    def actual(self, k: int) -> int:
        if k not in self._actual:
            self._actual[k] = self.texts.measure(self.text(k)) if k else 0
        return self._actual[k]

    def fits(self, k: int) -> bool:
        """Whether prefix k + target fit; checked on the joined text near the limit (a join
        changes a count by a token or two, never by ``NEAR``)."""
        if self.limit is None or self.actual(k) <= self.limit - NEAR:
            return True
        if k not in self._fit:
            self._fit[k] = self._fits(self.text(k))
        return self._fit[k]

    def cut(self, length: int) -> tuple[int, str]:
        """(sentences of the shortest prefix of >= ``length`` tokens, "" or why it fell short)."""
        if length == 0:
            return 0, ""
        while (not self.ids or self.cumulative[-1] < length) and self.extend():
            pass
        k = min(bisect.bisect_left(self.cumulative, length) + 1, len(self.ids))
        if k and self.actual(k) != self.cumulative[k - 1]:  # the join changed the count: step by counting
            while k > 1 and self.actual(k - 1) >= length:
                k -= 1
        while self.actual(k) < length and (k < len(self.ids) or self.extend()):
            k += 1
        short = "" if self.actual(k) >= length else self.stop
        while k > 0 and not self.fits(k):
            k, short = k - 1, "capped"
        return k, short


def _fitter(texts: _Texts, row, max_positions: int | None, reserved: int) -> tuple[int | None, Callable[[str], bool]]:
    """(the estimated token limit of the prefix, exact check of prefix + " " + target) for one pair."""
    if max_positions is None:
        return None, lambda prefix: True
    targets = [" " + str(row.good), " " + str(row.bad)]
    limit = max_positions - reserved - max(texts.measure(t) for t in targets)

    def fits(prefix: str) -> bool:
        return not prefix or all(reserved + texts.measure(prefix + t) <= max_positions for t in targets)
    return limit, fits
