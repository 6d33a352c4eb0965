"""The names of the ops that communicate between ranks
(dialects/pdg/PdgCollectives.td), for the passes that read a graph's ops
by name (pdg.analysis.graph, the interpreter)."""

COLLECTIVES = (
    "pdg.all_reduce",
    "pdg.all_gather",
    "pdg.broadcast",
    "pdg.reduce_scatter",
    "pdg.shift",
)
