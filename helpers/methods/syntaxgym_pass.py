"""When a SyntaxGym item passes: which of its suite's predictions decide (option ``syntaxgym_pass``).

- ``"directional"`` (the default): every prediction that states a direction (a ``<`` or ``>``)
  must hold; a null prediction, made only of ``=`` comparisons, is evaluated and reported
  (``prediction_<i>``) but does not decide the item. This is the reading Hu et al. (2020)'s
  released per-item results follow.
- ``"strict"``: every prediction must hold.

The two differ on one suite: ``fgd_hierarchy``'s second prediction, ``[(9;%what_nogap%) =
(9;%that_nogap%)] & [(6;%what_subjgap%) = (6;%that_subjgap%)]``, asks equal what its first
asks strictly unequal (``(6;%what_subjgap%) < (6;%that_subjgap%)``; both hold only within
SyntaxGym's 0.001-bit tolerance), so under ``"strict"`` practically no item passes, while the
released results (``data/raw/sg_results`` of cpllab/syntactic-generalization) give GPT-2 15 and
GPT-2 XL 17 of its 24 items. The released files hold one verdict per item, no surprisals; what
they show: (1) the four unigram models fail all 842 items, fgd_hierarchy included, where a
unigram model makes the second prediction hold exactly (the compared regions have the same
words) and the first fail (a tie): the pass is not "any prediction holds"; (2) each seeded
n-gram model (ties broken at random per seed) passes fgd_hierarchy on all items but one or on
none but one, as the outcome of the first prediction's two tied comparisons, in about a
quarter of the seeds. SyntaxGym's evaluator read ``=`` only from May 2020 on (syntaxgym-core
09d3767), after these results. On the 34 suites this rule equals "the first prediction
decides" except on ``nn-nv-rpl`` (one item, two directional predictions, both counted here),
which the released data cannot separate.
"""
from __future__ import annotations

from ..data.syntaxgym_formulas import COMPARISONS, Binary, Negate, Prediction
from ..settings import method_setting


def comparisons(prediction: Prediction) -> list[str]:
    """The comparison operators of a prediction, in order of appearance."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, Binary):
            walk(node.left)
            if node.op in COMPARISONS:
                out.append(node.op)
            walk(node.right)
        elif isinstance(node, Negate):
            walk(node.operand)

    walk(prediction.tree)
    return out


def is_null(prediction: Prediction) -> bool:
    """Whether a prediction states no direction: every comparison in it is ``=``."""
    ops = comparisons(prediction)
    return bool(ops) and all(op == "=" for op in ops)


def counted(predictions: list[Prediction], rule: str) -> list[int]:
    """The indices of the predictions that decide an item's pass under ``rule`` (all of them
    when a suite has only null predictions, so that no item passes on nothing)."""
    rule = method_setting("syntaxgym_pass", rule)
    if rule == "strict":
        return list(range(len(predictions)))
    decisive = [i for i, p in enumerate(predictions) if not is_null(p)]
    return decisive or list(range(len(predictions)))


def item_passes(verdicts: list[bool], decisive: list[int]) -> bool:
    """An item's pass: every deciding prediction holds."""
    return all(verdicts[i] for i in decisive)
