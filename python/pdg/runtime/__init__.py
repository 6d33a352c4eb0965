"""The runtime for compiled pdg programs: load an artifact, check what the
caller gives against its manifest, run it. NumPy and the standard library
only, no MLIR."""

from .loader import ArtifactError, CompiledProgram, RunError, RunResult, load

__all__ = ["ArtifactError", "CompiledProgram", "RunError", "RunResult", "load"]
