"""The compiled extension `_pdg_ext`, imported the safe way.

Its Python classes subclass those of `mlir.ir`, which must therefore be
loaded first; importing `_pdg_ext` directly aborts the process otherwise.
"""

import mlir.ir  # noqa: F401  (must precede the extension)
from mlir._mlir_libs import _mlir

from pdg._pdg_ext import (  # noqa: F401
    MLIR_VERSION,
    AccessAttr,
    StoreAttr,
    ValueType,
    add_pass_pipeline,
    bound_kind,
    integer_set_parts,
    is_registered_pass,
    parse_source,
    print_registered_passes,
    register_dialect,
)

# Ops parsed from text come back as the generated classes (GraphOp, NodeOp)
# only if MLIR knows where to look for the `pdg` namespace's module.
_mlir.globals.append_dialect_search_prefix("pdg.dialects")
