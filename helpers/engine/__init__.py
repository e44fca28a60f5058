"""The scoring engine: text in, token log-probabilities out.

- :mod:`.interface`: the request and result types, the share modes and the ``Scorer`` protocol;
- :mod:`.encoding`: text to token ids (one start token; where the target begins);
- :mod:`.plan`: a pure prefix tree of token segments, whose shared parts run once;
- :mod:`.executor` (:mod:`.schedule`, :mod:`.forward`, :mod:`.readout`): the plan run in
  batches with key/value cache reuse, log-probs read at the needed positions only;
- :mod:`.head`: the vocabulary head (chunked float32 log-softmax) and out-of-memory halving
  that every scorer shares;
- :mod:`.causal`, :mod:`.seq2seq` and :mod:`.masked`: the scorers of decoder-only, encoder-decoder
  and masked models (pseudo-log-likelihood);
- :mod:`.kinds`: which scorer a model gets (:func:`scorer_for`);
- :mod:`.unknown_tokens`: how much of a dataset's text a tokenizer makes its unknown token
  (:func:`~.unknown_tokens.unknown_share`), and the runner's warning when it is much.

The public names are importable from here: ``from helpers.engine import Request, scorer_for``.
They load on first use, so that importing :mod:`.interface` (as the methods do) loads no scorer.
"""
from importlib import import_module

_HOMES = {"SHARE_MODES": "interface", "Request": "interface", "Scored": "interface",
          "Scorer": "interface", "SCORER_KINDS": "kinds", "scorer_for": "kinds", "CausalScorer": "causal",
          "MaskedScorer": "masked", "Seq2SeqScorer": "seq2seq"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)
