"""Whole-graph analyses of pdg programs with islpy.

`graph` reads a pdg.graph; `polyhedral` turns domains and reads into isl
sets and maps; `roles` finds which dims carry dependences; `legality`
reports reads a schedule cannot honour; `storage` derives each value's
store from its footprint; `schedule` orders nodes in loops over the
sequential dims; `memory` reports the stores' sizes as formulas;
`overlap` proves that a training loop's generation of iteration i + 1
may run beside its update of iteration i (stale sampling).
"""

from .graph import Graph, read_graph
from .polyhedral import Polyhedral

__all__ = ["Graph", "Polyhedral", "read_graph"]
