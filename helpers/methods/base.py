"""What a judgment method is.

A :class:`Family` knows one kind of engine input: for one item (a minimal pair, a single
sentence, a Hu & Levy stimulus), one template and an optional priming ``context`` it builds
the engine requests, and from their scored results it builds the family's basis columns.
A :class:`Method` reduces those columns to a score per side (higher wins). Methods of one
family share one engine pass per template. The runner (:mod:`helpers.runner`) knows
nothing else about them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .fewshot import FewShot, as_fewshot
from .setting_readers import template_ids
from ..settings import METHOD_SETTINGS, RECORDED_AS, Settings, method_setting
from ..engine.interface import SCORER_FEATURES, Request, Scored

# Bump when a method's computation changes: it is part of every score file's configuration.
# 3: a context's trailing spaces are scored with the target (engine.encoding.target_start).
# 4: a Hu & Levy prefix ending in a space is continued after one space, not two (prompt_text.continued).
# 5: metaQuestionComplex writes the prefix as the item does ("rent -- ... What", not "rent --... What").
METHODS_VERSION = "5"

Item = Mapping[str, object]  # one row of a dataset selection's frame
# (basis table, side, **the method settings the method takes, by name) -> scores
Score = Callable[..., pd.Series]


@dataclass
class PassContext:
    """The context of one engine pass of a family (a method's score reads it too): the run's
    scorer, language and sides, a unigram table where one is counted, and the run's
    :class:`helpers.settings.Settings`, whose method settings it reads by name (instruct, ab_seed,
    use_outlines, fewshot, order_average, templates, penlp_alpha, unigram_corpus, syntaxgym_pass):
    it holds no setting's value of its own."""

    scorer: object
    language: str
    settings: Settings = field(default_factory=Settings)
    sides: tuple[str, ...] = ("good", "bad")  # item fields scored: a pair, or ("sentence",) for single sentences
    unigram: object | None = None  # helpers.methods.measures.UnigramTable (families that count one)
    unigram_source: str | None = None  # what the unigram table was counted over (recorded)
    cache: dict = field(default_factory=dict)  # e.g. the outlines generator, built once per run

    def _setting(self, name: str):
        return method_setting(name, getattr(self.settings, name))

    @property
    def instruct(self) -> bool:
        """Chat templates for prompts ("auto": the model's registry entry, else its chat template)."""
        given = self._setting("instruct")
        return given if given is not None else bool(self.scorer.is_instruct) if self.scorer is not None else False

    @property
    def templates(self) -> tuple:
        """Ide et al. template ids and Hu & Levy prompt types ("auto": every template of each family)."""
        return template_ids(self.settings)

    @property
    def fewshot(self) -> FewShot:
        return as_fewshot(self._setting("fewshot"))

    progress = property(lambda self: self.settings.progress)

    def __getattr__(self, name: str):
        """Any other method setting by its name (ab_seed, use_outlines, order_average, syntaxgym_pass,
        unigram_corpus, and each one added to the table), "auto" read as its default."""
        if name in METHOD_SETTINGS:
            return self._setting(name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}; the method settings are "
                             f"{', '.join(METHOD_SETTINGS)}")

    def but(self, **changes) -> "PassContext":
        """This pass context with settings ``changes`` (checked as any)."""
        return replace(self, settings=self.settings.but(**changes))

    def for_methods(self, methods: Sequence["Method"]) -> "PassContext":
        """The context of a pass computing ``methods``: the unigram table only where one of them
        reads it (a pass of the others is configured and computed without it)."""
        return replace(self, unigram=self.unigram if any(m.needs_unigram for m in methods) else None)


class Family:
    """A group of methods that share their engine requests.

    Subclasses set ``name``, ``template_set`` (the template family to iterate, or None),
    ``with_context`` (whether the engine returns the log-probs of request contexts too) and
    ``takes`` (the method settings they read besides templates and instruct:
    :mod:`helpers.methods.setting_readers`; with "fewshot" they put ``pass_context.fewshot``'s examples before
    each item), and implement :meth:`requests` and :meth:`table`.
    """

    name: str = ""
    template_set: str | None = None
    with_context: bool = False
    takes: tuple[str, ...] = ()  # the method settings it reads (besides templates and instruct)

    @property
    def takes_fewshot(self) -> bool:
        """Whether it puts ``pass_context.fewshot``'s examples before each item."""
        return "fewshot" in self.takes

    def pass_context_for(self, methods: Sequence["Method"], pass_context: PassContext) -> PassContext:
        """The context its passes for ``methods`` run with (e.g. with a unigram table counted);
        by default the run's."""
        return pass_context

    def templates(self, language: str, style: str, selected: Sequence) -> list:
        """The templates this family runs for ``language`` (None: one untemplated pass)."""
        return [None]

    def prepare(self, items: Sequence[Item], template, contexts: Sequence[str], pass_context: PassContext) -> list:
        """Per-item state built once for the run (e.g. rendered prompts, A/B slots); default none."""
        return [None] * len(items)

    def requests(self, item: Item, template, context: str, pass_context: PassContext, state) -> list[Request]:
        raise NotImplementedError

    def pass_requests(self, items: Sequence[Item], template, contexts: Sequence[str], pass_context: PassContext
                      ) -> tuple[list, list[list[Request]]]:
        """One template pass over ``items``: their states (:meth:`prepare`) and each item's requests."""
        states = self.prepare(items, template, contexts, pass_context)
        return states, [self.requests(item, template, c, pass_context, s) for item, c, s in zip(items, contexts, states)]

    def table(self, items: Sequence[Item], template, contexts: Sequence[str], scored: Sequence[Sequence[Scored]],
              pass_context: PassContext, states: Sequence) -> pd.DataFrame:
        """One row per item: the columns its methods reduce (see each family)."""
        raise NotImplementedError

    def score_pass(self, scorer, items: list, template, contexts: list[str], pass_context: PassContext,
                   positions: np.ndarray | None = None) -> tuple[pd.DataFrame, list[list]]:
        """One engine pass over ``items`` with ``template``: the table (one row per item) and each
        item's scored requests. With ``positions``, ``items`` are the whole run's, and only the
        items at those positions are scored (as part of the whole plan) and returned."""
        states, per_item = self.pass_requests(items, template, contexts, pass_context)
        flat = [r for reqs in per_item for r in reqs]
        starts = np.cumsum([0] + [len(reqs) for reqs in per_item])
        chosen = range(len(per_item)) if positions is None else positions
        only = None if positions is None else [i for p in positions for i in range(starts[p], starts[p + 1])]
        label = self.name if template is None else f"{self.name} {template.id}"
        results = scorer.score(flat, with_context=self.with_context, desc=label, only=only)
        scored, at = [], 0
        for p in chosen:
            scored.append(results[at:at + len(per_item[p])])
            at += len(per_item[p])
        if positions is not None:
            items, contexts, states = ([seq[p] for p in positions] for seq in (items, contexts, states))
        return self.table(items, template, contexts, scored, pass_context, states), scored

    def score_sides(self, sides: tuple[str, ...]) -> tuple[str, ...]:
        """The sides its methods score for items with these ``sides``: ("good", "bad") makes a
        pair decision, one side a single score."""
        return sides

    def reads(self, template) -> tuple[str, ...]:
        """The method settings its pass with ``template`` reads (default: all it ``takes``): their
        resolved values enter its files' configuration (:meth:`Method.config`)."""
        return self.takes

    def template_config(self, template, pass_context: PassContext) -> dict:
        """What a score file records about the template (text, system message, style...)."""
        if template is None:
            return {"template_id": None, "template_text": None}
        return {"template_id": template.id, "template_text": template.text or None}


@dataclass(frozen=True)
class Method:
    """A judgment method: a family and a reduction of its basis table to a score per side.

    Pair items have sides "good" and "bad" (the decision is good > bad; a tie is an error);
    single sentences the side "sentence"; other single items (a word after a prefix) "item".
    """

    name: str
    family: Family
    description: str
    score: Score
    target_score: Score | None = None  # in-template methods: the target sentence alone
    needs_unigram: bool = False
    # the per-pair credit (0..1; None: score_good > score_bad), e.g. averaged over answer orders
    decision: Callable[[pd.DataFrame, PassContext], pd.Series | None] | None = None
    options: dict = field(default_factory=dict, hash=False, compare=False)  # recorded in the configuration
    # what it needs of a scorer beyond score() (names of helpers.engine.interface.SCORER_FEATURES)
    needs: tuple[str, ...] = ()
    # the method settings its score reads (given to ``score`` and ``target_score`` by name, recorded)
    takes: tuple[str, ...] = ()

    @property
    def templated(self) -> bool:
        return self.family.template_set is not None

    def not_applicable(self, scorer) -> str | None:
        """Why this method cannot run on ``scorer`` (a scorer or a scorer class: a feature it needs
        that the scorer lacks), or None when it can."""
        missing = [f for f in self.needs if f not in scorer.features]
        if not missing:
            return None
        what = (scorer if isinstance(scorer, type) else type(scorer)).__name__ + \
            (f" of {scorer.name}" if not isinstance(scorer, type) else "")
        return f"{self.name} needs {'; and '.join(SCORER_FEATURES[f] for f in missing)}, which the {what} lacks"

    def reads(self, template=None) -> tuple[str, ...]:
        """The method settings a file of this method (with ``template``) depends on: its family's
        pass's and its own score's."""
        return (*self.family.reads(template), *self.takes)

    def config(self, pass_context: PassContext, template=None) -> dict:
        """What a score file of this method records beside the run's and the template's entries:
        its own options, the unigram table's source (None for methods without one), and the
        resolved value of every setting it reads, under its key (:data:`helpers.settings.RECORDED_AS`):
        a setting it does not read does not touch its files."""
        read = {RECORDED_AS[name]: getattr(pass_context, name) for name in self.reads(template) if name in RECORDED_AS}
        return {**self.options, "unigram_source": pass_context.unigram_source if self.needs_unigram else None, **read}

    def _scores(self, score: Score, table: pd.DataFrame, side: str, pass_context: PassContext | None) -> np.ndarray:
        """``score`` of ``side``, given the settings this method takes (their defaults without a pass_context)."""
        pass_context = pass_context or PassContext(None, "")
        return score(table, side, **{name: getattr(pass_context, name) for name in self.takes}).to_numpy(float)

    def decisions(self, table: pd.DataFrame, pass_context: PassContext | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A pair method's (score_good, score_bad, correct): correct is good > bad, or the method's
        own ``decision`` credit (e.g. averaged over answer orders) where it has one."""
        good = self._scores(self.score, table, "good", pass_context)
        bad = self._scores(self.score, table, "bad", pass_context)
        credit = self.decision(table, pass_context) if self.decision is not None and pass_context is not None else None
        return good, bad, good > bad if credit is None else np.asarray(credit, dtype=float)

    def frame(self, info: pd.DataFrame, table: pd.DataFrame, sides: tuple[str, ...],
              pass_context: PassContext | None = None) -> pd.DataFrame:
        """This method's score file: item ``info``, scores (and for pairs the decision: good > bad,
        or its own ``decision`` credit), the basis columns."""
        if self.family.score_sides(sides) == ("good", "bad"):
            good, bad, correct = self.decisions(table, pass_context)
            frame = info.assign(score_good=good, score_bad=bad, correct=correct, tie=good == bad)
            if self.target_score is not None:
                tg = self._scores(self.target_score, table, "good", pass_context)
                tb = self._scores(self.target_score, table, "bad", pass_context)
                frame = frame.assign(score_good_target=tg, score_bad_target=tb, correct_target=tg > tb,
                                     tie_target=tg == tb)
        else:
            (side,) = self.family.score_sides(sides)
            frame = info.assign(score=self._scores(self.score, table, side, pass_context))
            if self.target_score is not None:
                frame = frame.assign(score_target=self._scores(self.target_score, table, side, pass_context))
        keep = [c for c in table.columns if not c.startswith("uni_sum") or self.needs_unigram]
        return pd.concat([frame, table[keep]], axis=1)
