"""Reverse-mode automatic differentiation of pdg programs.

    loss = ...                            # a scalar per point
    dw, db = pdg.grad(loss, [w, b])       # new nodes in the same program

Gradients are ordinary nodes of the program (reverse.py), built from each
operator's vector-Jacobian rule (rules.py) and carried back through the
inverse of every read's access (transpose.py).
"""

from .reverse import grad

__all__ = ["grad"]
