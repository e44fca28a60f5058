"""Runs built on the generic runner (:func:`helpers.runner.run_methods`): every method under
priming prefixes (:mod:`.primed`, notebook 06), Hu & Levy's tasks over a list of models
(:mod:`.hu_levy`, notebook 03) and any runs over a list of models, each loaded in turn
(:mod:`.model_list`, 03's Part 1)."""
