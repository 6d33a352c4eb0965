"""The error of a model directory that pdg cannot read or write."""


class ModelError(Exception):
    """A checkpoint pdg cannot use: a missing or damaged file, an
    unsupported model_type or option, a tensor that disagrees with the
    config. The message names the file and the key."""
