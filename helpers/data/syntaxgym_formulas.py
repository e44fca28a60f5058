"""SyntaxGym prediction formulas: parsed once, evaluated on an item's region surprisals.

A formula compares region surprisals across the conditions of one item, e.g.
``[(6;%what_nogap%) > (6;%that_nogap%)] & [(6;%what_subjgap%) < (6;%that_subjgap%)]``.
The grammar is SyntaxGym's (``syntaxgym-core``, ``prediction.py``), written here as a small
recursive-descent parser with precedence from loosest to tightest:

    formula     := conjunction ('|' conjunction)*
    conjunction := comparison ('&' comparison)*
    comparison  := sum (('<' | '>' | '=') sum)?        -- at most one comparison operator
    sum         := operand (('+' | '-') operand)*      -- one left-associative level
    operand     := '-' operand | region | number | '(' formula ')' | '[' formula ']'
    region      := '(' digits ';' '%' condition '%' ')'  -- condition: letters, digits, '_', '-'

The 34 suites of Hu et al. (2020) use region terms, ``+``, ``-``, ``<``, ``>``, ``=``, ``&``,
the literal ``0`` and square brackets for grouping; parentheses group too (SyntaxGym's
later suites use them). ``=`` holds within SyntaxGym's tolerance, ``|a - b| <= 1e-3 +
1e-5 |b|`` (numpy.isclose with rtol 1e-5, atol 1e-3; surprisals in bits). SyntaxGym's
pyparsing grammar puts ``+`` above ``-``, which differs from the usual reading only for an
unbracketed ``a - b + c``; no suite formula has one. Types are checked when parsing: a
formula must be true or false, ``&``/``|`` join comparisons, ``+``/``-``/``<``/``>``/``=``
take numbers.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

EQUALITY_RTOL, EQUALITY_ATOL = 1e-5, 1e-3  # SyntaxGym's tolerance for "=" (bits)

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<region>\(\s*(?P<num>\d+)\s*;\s*%(?P<cond>[A-Za-z0-9_\-]+)%\s*\))
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<op>[-+<>=&|])
  | (?P<open>[(\[])
  | (?P<close>[)\]])
""", re.VERBOSE)
_REGION_LIKE = re.compile(r"\([^()\[\]]*[;%]")  # "(" opening something with ";" or "%": a region term
_CLOSING = {"(": ")", "[": "]"}


class FormulaError(ValueError):
    """A malformed SyntaxGym formula: names the formula, the position and the problem."""

    def __init__(self, formula: str, position: int, problem: str):
        self.formula, self.position, self.problem = formula, position, problem
        super().__init__(f"invalid SyntaxGym formula {formula!r}: {problem} at position {position}\n"
                         f"    {formula}\n    {' ' * position}^\n"
                         "(a formula compares region terms like (6;%cond%) with <, > or =, joined by &)")


@dataclass(frozen=True)
class Region:
    region: int
    condition: str


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Binary:
    op: str  # + - < > = & |
    left: Node
    right: Node


@dataclass(frozen=True)
class Negate:
    operand: Node


Node = Region | Number | Binary | Negate
BOOLEAN_OPS, COMPARISONS = ("&", "|"), ("<", ">", "=")


def _is_bool(node: Node) -> bool:
    return isinstance(node, Binary) and node.op in BOOLEAN_OPS + COMPARISONS


def _tokens(formula: str) -> list[tuple[str, object, int]]:
    """(kind, value, position) of each token; an unknown character is an error."""
    out, at = [], 0
    while at < len(formula):
        m = _TOKEN.match(formula, at)
        if m is not None and m.lastgroup == "open" and _REGION_LIKE.match(formula, at):
            raise FormulaError(formula, at, "malformed region term (expected a region number and a condition "
                                            "name of letters, digits, '_' or '-', like (6;%match_sing%))")
        if m is None:
            raise FormulaError(formula, at, f"unexpected character {formula[at]!r}")
        kind = m.lastgroup if m.lastgroup in ("space", "number", "op", "open", "close") else "region"
        if kind == "region":
            out.append(("region", Region(int(m.group("num")), m.group("cond")), at))
        elif kind == "number":
            out.append(("number", Number(float(m.group("number"))), at))
        elif kind != "space":
            out.append((kind, m.group(kind), at))
        at = m.end()
    return out


class _Parser:
    def __init__(self, formula: str):
        self.formula, self.tokens, self.i = formula, _tokens(formula), 0

    def peek(self) -> tuple[str, object, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", None, len(self.formula))

    def fail(self, problem: str, position: int | None = None):
        raise FormulaError(self.formula, self.peek()[2] if position is None else position, problem)

    def parse(self) -> Node:
        if not self.tokens:
            self.fail("empty formula", 0)
        node = self.logic("|")
        kind, value, _ = self.peek()
        if kind != "end":
            self.fail(f"unexpected {value!r} after a complete expression")
        if not _is_bool(node):
            self.fail("the formula is a number, not a comparison (add <, > or =)", 0)
        return node

    def logic(self, op: str) -> Node:
        start = self.peek()[2]
        node = self.logic("&") if op == "|" else self.comparison()
        while self.peek()[:2] == ("op", op):
            at = self.peek()[2]
            self.i += 1
            right = self.logic("&") if op == "|" else self.comparison()
            for side, pos in ((node, start), (right, at + 1)):
                if not _is_bool(side):
                    self.fail(f"{op!r} joins comparisons, but an operand is a number", pos)
            node = Binary(op, node, right)
        return node

    def comparison(self) -> Node:
        start = self.peek()[2]
        left = self.sum()
        kind, op, _ = self.peek()
        if kind != "op" or op not in COMPARISONS:
            return left
        self.i += 1
        right = self.sum()
        if _is_bool(left) or _is_bool(right):
            self.fail(f"{op!r} compares numbers, but an operand is already a comparison", start)
        kind, nxt, pos = self.peek()
        if kind == "op" and nxt in COMPARISONS:
            self.fail("chained comparison (write [a < b] & [b < c])", pos)
        return Binary(op, left, right)

    def sum(self) -> Node:
        node = self.operand()
        while self.peek()[0] == "op" and self.peek()[1] in "+-":
            _, op, at = self.peek()
            self.i += 1
            right = self.operand()
            if _is_bool(node) or _is_bool(right):
                self.fail(f"{op!r} adds numbers, but an operand is a comparison", at)
            node = Binary(op, node, right)
        return node

    def operand(self) -> Node:
        kind, value, at = self.peek()
        if kind in ("region", "number"):
            self.i += 1
            return value
        if (kind, value) == ("op", "-"):
            self.i += 1
            inner = self.operand()
            if _is_bool(inner):
                self.fail("'-' negates a number, not a comparison", at)
            return Negate(inner)
        if kind == "open":
            self.i += 1
            node = self.logic("|")
            kind2, close, pos = self.peek()
            if kind2 != "close":
                self.fail(f"{value!r} opened at position {at} is not closed (expected {_CLOSING[value]!r})", pos)
            if close != _CLOSING[value]:
                self.fail(f"{close!r} closes {value!r} opened at position {at}", pos)
            self.i += 1
            return node
        if kind == "end":
            self.fail("the formula ends where an operand (a region term, a number or a bracket) is expected")
        self.fail(f"expected a region term, a number or a bracket, found {value!r}")


@dataclass(frozen=True)
class Prediction:
    """One parsed formula; ``holds(surprisals)`` evaluates it on {(condition, region): bits}."""

    formula: str
    tree: Node

    @property
    def terms(self) -> list[Region]:
        """The region terms, in order of appearance (repeats kept once)."""
        out: list[Region] = []

        def walk(node):
            if isinstance(node, Region) and node not in out:
                out.append(node)
            elif isinstance(node, Binary):
                walk(node.left), walk(node.right)
            elif isinstance(node, Negate):
                walk(node.operand)

        walk(self.tree)
        return out

    def holds(self, surprisals: Mapping[tuple[str, int], float]) -> bool:
        return bool(_evaluate(self.tree, surprisals, self.formula))

    def condition_signs(self) -> dict[str, int] | None:
        """For a conjunction of directional comparisons (< and >): +1 for each condition whose
        terms are predicted higher (the ungrammatical side), -1 for the lower side; None when
        a condition falls on both sides or the formula has "=" or "|"."""
        signs: dict[str, int] = {}
        for comparison in _conjuncts(self.tree):
            if not isinstance(comparison, Binary) or comparison.op not in ("<", ">"):
                return None
            high, low = ((comparison.left, comparison.right) if comparison.op == ">"
                         else (comparison.right, comparison.left))
            for cond, coef in [*_coefficients(high, 1), *_coefficients(low, -1)]:
                sign = 1 if coef > 0 else -1
                if signs.setdefault(cond, sign) != sign:
                    return None
        return signs


def parse(formula: str) -> Prediction:
    """Parse one SyntaxGym formula; :class:`FormulaError` says where and what is wrong."""
    if not isinstance(formula, str):
        raise TypeError(f"a SyntaxGym formula is a string, got {type(formula).__name__}: {formula!r}")
    return Prediction(formula, _Parser(formula).parse())


def _evaluate(node: Node, surprisals: Mapping[tuple[str, int], float], formula: str):
    if isinstance(node, Region):
        key = (node.condition, node.region)
        if key not in surprisals:
            have = sorted({c for c, _ in surprisals})
            raise KeyError(f"formula {formula!r} needs region {node.region} of condition {node.condition!r}, "
                           f"which the item lacks (its conditions: {have})")
        return float(surprisals[key])
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Negate):
        return -_evaluate(node.operand, surprisals, formula)
    a = _evaluate(node.left, surprisals, formula)
    if node.op == "&" and not a:
        return False
    if node.op == "|" and a:
        return True
    b = _evaluate(node.right, surprisals, formula)
    if node.op in BOOLEAN_OPS:
        return bool(b)
    return {"+": lambda: a + b, "-": lambda: a - b, "<": lambda: a < b, ">": lambda: a > b,
            "=": lambda: abs(a - b) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(b)}[node.op]()


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, Binary) and node.op == "&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _coefficients(node: Node, sign: int) -> list[tuple[str, int]]:
    """(condition, +1/-1) of each region term of an arithmetic expression, with its sign."""
    if isinstance(node, Region):
        return [(node.condition, sign)]
    if isinstance(node, Negate):
        return _coefficients(node.operand, -sign)
    if isinstance(node, Binary) and node.op in "+-":
        return _coefficients(node.left, sign) + _coefficients(node.right, sign if node.op == "+" else -sign)
    return []


def condition_roles(formulas: list[str]) -> dict[str, str] | None:
    """Each condition's role across a suite's formulas: "bad" (predicted higher surprisal),
    "good" (lower), or None for the whole suite when a formula is not a conjunction of
    directional comparisons or a condition is on both sides. Formulas with "=" are
    skipped (they state no direction)."""
    roles: dict[str, str] = {}
    for formula in formulas:
        prediction = parse(formula)
        if any(isinstance(n, Binary) and n.op == "=" for n in _conjuncts(prediction.tree)):
            continue
        signs = prediction.condition_signs()
        if signs is None:
            return None
        for cond, sign in signs.items():
            role = "bad" if sign > 0 else "good"
            if roles.setdefault(cond, role) != role:
                return None
    return roles or None
