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
"""
from .causal import CausalScorer
from .interface import SHARE_MODES, OptionReadout, Request, Scored, Scorer
from .kinds import SCORER_KINDS, scorer_for
from .masked import MaskedScorer
from .seq2seq import Seq2SeqScorer

__all__ = ["SHARE_MODES", "SCORER_KINDS", "CausalScorer", "MaskedScorer", "OptionReadout", "Request", "Scored",
           "Scorer", "Seq2SeqScorer", "scorer_for"]
