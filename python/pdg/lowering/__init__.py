"""Lowering a planned, scheduled pdg program to loops over memrefs
(`lower.py`), then to LLVM and a shared library (`native.py`)."""

from .lower import lower_to_loops

__all__ = ["lower_to_loops"]
