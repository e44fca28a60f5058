"""The scoring engine in three parts, wired together by :class:`helpers.scoring.Scorer`.

- :mod:`.encoding`: text to token ids, with exactly one document-start token;
- :mod:`.plan`: the pure prefix tree of token segments (what runs once, what after what);
- :mod:`.executor`: batches, key/value cache reuse, out-of-memory halving, log-probs.

:mod:`.model_checks` holds what the engine must know about a model before it runs it.
"""
