"""The engine's one error that is not about settings or files: a model that cannot be found or loaded. Kept apart
from `checkpoint.py` so that the command line can name it without importing torch."""


class ModelLoadError(RuntimeError):
    """The model could not be found or loaded; the message says what to install or pass instead."""
