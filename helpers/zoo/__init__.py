"""The project's own models: the demo LMs' trainer, the tiny random test models, their shared
BPE tokenizer trainer, and the demo models' cards."""
