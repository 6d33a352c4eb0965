"""Command lines: `pdg-opt` (opt.py)."""
