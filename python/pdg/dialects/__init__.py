"""MLIR dialects defined by pdg."""
