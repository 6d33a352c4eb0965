"""Reverse-mode automatic differentiation of pdg programs.

    from pdg.autodiff import grad

    loss = ...                        # a scalar per point
    dw, db = grad(loss, [w, b])       # new nodes in the same program

It builds on pdg.frontend; the frontend knows nothing of it.

Gradients are ordinary nodes of the program (reverse.py), built from each
operator's vector-Jacobian rule (rules.py) and carried back through the
inverse of every read's access (transpose.py).
"""

from .reverse import grad

__all__ = ["grad"]
