"""Importing PyTorch modules as node bodies through torch-mlir (see
docs/torch_import.md): export.py (torch.export, weights as arguments),
worker.py (torch-mlir, in its own process), importer.py (running it, the
cache), validate.py (pdg's body rules), function.py (the operator)."""
