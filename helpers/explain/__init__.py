"""One minimal pair explained, for teaching (notebook 00_quickstart): :mod:`.pair` (surprisal per
token and per word, each method's decision as the runner computes it, a paradigm browser),
:mod:`.words` (words from token offsets), :mod:`.word_surprisal` (a text's words' surprisal, plain and
corrected for word boundaries), :mod:`.scorers` (the models a session keeps loaded)
and :mod:`.view` (live ipywidgets controls, or plain outputs headless)."""
