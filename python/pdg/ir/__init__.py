"""IR helpers: contexts with the pdg dialect, parsing with file names."""

# Generated enum bindings import this name from `..ir`, as upstream's do.
from mlir.ir import register_attribute_builder  # noqa: F401

from .context import make_context  # noqa: F401
from .source import ParseFailure, parse_file, parse_text  # noqa: F401
