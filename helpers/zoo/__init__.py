"""The demo models' making and their cards: the demo LMs' trainer and its training data (token
streams, dialect documents, template lists, a stage's end), ``python -m helpers train-demo`` and
``model-card``, and the cards' sections (LP accuracy, the agreement sample, priming, precision).
The tiny random test models and the tokenizer trainer live in :mod:`helpers.models`."""
