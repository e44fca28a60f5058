"""Runs built on the generic runner (:func:`helpers.runner.run_methods`): every method under
priming prefixes (:mod:`.primed`, notebook 06) and Hu & Levy's tasks over a list of models
(:mod:`.hu_levy`, notebook 03)."""
