"""What a notebook shows and writes: :class:`.notebook.NotebookReport` names and writes its tables
and figures (:mod:`.outputs`: files with JSON provenance sidecars) and runs its paper check
(:mod:`.paper_check`: the papers' published numbers beside this run's)."""
