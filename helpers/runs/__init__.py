"""Runs: :class:`.run.Run`, the one door to scoring (settings, models, selection, the model loop),
and the builders of what a kind of run scores: priming prefixes (:mod:`.primed`, notebook 06),
Hu & Levy's tasks (:mod:`.hu_levy`, 03), 07's sentence jobs (:mod:`.across_models`), the
precision presets (:mod:`.precision`) and per-paradigm explanations (:mod:`.explanations`)."""
