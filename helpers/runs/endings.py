"""A context and two endings (BHS; any dataset whose rows hold ``context``, ``ending_good`` and
``ending_bad``) scored as BHS's own code scores them: each ending after the context, the context's
tokens never counted (dariakryvosheieva/syntactic_generalization_multilingual 7f44015, evaluate.py
l.26-29: minicons' partial_score(context, ending), the mean of the ending's token log-probs, the two
joined with one space; right when good - bad > 0, l.19-22). With ``meanlp`` that is the reference's
score, with ``lp`` the ending's summed log-prob. 02's ``endings=True`` runs it; score files are tagged
"endings" and each row keeps its context (column ``context``). The whole sentences (context and
ending) stay in the rows as ``sentence_good`` and ``sentence_bad``.
"""
from __future__ import annotations

from dataclasses import replace

from ..data.selection import DatasetSelection
from ..runner import RunSetup

TAG = "endings"
COLUMNS = ("context", "ending_good", "ending_bad")


def as_endings(frame):
    """The items with the endings as the two sides and the whole sentences kept beside them."""
    return frame.assign(sentence_good=frame["good"], sentence_bad=frame["bad"], good=frame["ending_good"],
                        bad=frame["ending_bad"])


def endings_input(selection: DatasetSelection) -> tuple[DatasetSelection, RunSetup]:
    """What :meth:`helpers.runs.run.Run.files` scores to judge each pair by its endings after its
    context; a dataset without the three columns is an error that names them. A shard plans over
    its whole run's contexts (its scores are the unsharded run's, bit for bit)."""
    missing = [c for c in COLUMNS if c not in selection.frame]
    if missing:
        raise ValueError(f"{selection.name} has no {', '.join(missing)} column(s): endings=True scores datasets whose "
                         "rows hold a context and two endings (bhs); leave endings=False for the others")
    whole = selection.shard.whole if selection.shard is not None else None
    shard = replace(selection.shard, whole=as_endings(whole)) if whole is not None else selection.shard
    ended = replace(selection, frame=as_endings(selection.frame), shard=shard)
    return ended, RunSetup(context=list(ended.frame["context"]), context_column="context", tag=TAG,
                           extra_columns=["sentence_good", "sentence_bad"],
                           configuration={"endings": "each ending after its context (BHS's evaluate.py)"},
                           whole_context=list(whole["context"]) if whole is not None else None,
                           serves=("sentence",), serves_why="each ending is scored by its own log-probs after its "
                           "context; a template, a prompt or the two sentences side by side would hold the ending "
                           "without its context")
