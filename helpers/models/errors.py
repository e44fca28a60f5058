"""The error of a model that cannot be loaded, with what to do about it."""


class ModelNotFoundError(LookupError):
    """A model name, id, folder or file that cannot be loaded, with what to do about it."""
