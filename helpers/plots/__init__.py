"""Figures, one module per notebook's figures (each function draws and returns a figure):
:mod:`.accuracy` (02, 04, 05), :mod:`.fewshot` and :mod:`.cross_model` (03), :mod:`.priming` and
:mod:`.similarity` (06), :mod:`.separability` (07), :mod:`.explain` (00); :mod:`.style` holds
what they share. A notebook writes them through its :class:`helpers.reporting.notebook.NotebookReport`."""
