"""pdg's Python passes, by name.

Passes written in C++ (passes/ at the repository root) are registered with
MLIR and named in textual pipelines like upstream ones. Passes that need
Python (islpy analyses) register here; `pdg-opt` runs them between upstream
pipeline segments. The lowering (pdg.lowering, above this package) is a
pass of pdg-opt only: pdg.cli.lowering_pass registers it.
"""

from . import analysis_passes  # noqa: F401  (registers the isl passes)
from .registry import PassError, PdgPass, get_pass, register, registered_passes  # noqa: F401
