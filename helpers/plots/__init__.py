"""Figures, one module per notebook's figures (each function draws and returns a figure):
:mod:`.accuracy` (02, 04, 05), :mod:`.disagreement` (04), :mod:`.fewshot`, :mod:`.cross_model` and
:mod:`.introspection` (03),
:mod:`.priming` and :mod:`.similarity` (06), :mod:`.separability` and :mod:`.morcela` (07), :mod:`.explain` (00);
:mod:`.style` holds what they share. A notebook writes them through its :class:`helpers.reporting.notebook.NotebookReport`."""
