"""Lowering a planned, scheduled pdg program to loops over memrefs
(`lower.py`), then to LLVM and a shared library (`native.py`).

Imported lazily: `pdg.lowering.cache` finds compiled artifacts without
loading MLIR."""


def __getattr__(name: str):
    if name == "lower_to_loops":
        from .lower import lower_to_loops

        return lower_to_loops
    raise AttributeError(f"module 'pdg.lowering' has no attribute '{name}'")


__all__ = ["lower_to_loops"]
