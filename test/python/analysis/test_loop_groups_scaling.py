"""Loop grouping (pdg.analysis.groups) does work linear in the reads: a
component finds its reads through an index, not a scan of every read, and
a nest's reads are checked again only when its direction changes. Both
were quadratic, 73% of compiling a 12-layer GRPO program."""

from __future__ import annotations

import pytest
from pdg.analysis import groups
from pdg.analysis.graph import read_graph
from pdg.analysis.polyhedral import Polyhedral
from pdg.nn import GPTConfig
from pdg.programs import build_decode


class CountingList(list):
    """A list that counts the elements its iterations yield."""

    visits = 0

    def __iter__(self):
        for item in super().__iter__():
            CountingList.visits += 1
            yield item


def decode_graph(layers: int):
    cfg = GPTConfig(vocab=32, d_model=16, n_layers=layers, n_heads=2, max_positions=64)
    decode = build_decode(cfg, eos=0, max_len=64)
    module = decode.program.build()
    graph = read_graph(module.body.operations[0])
    return module, graph


@pytest.mark.parametrize("layers", [1, 6])
def test_grouping_visits_each_read_a_bounded_number_of_times(layers, monkeypatch):
    module, graph = decode_graph(layers)
    real_level, real_in_step = groups._level, groups._in_step
    levels: list[int] = []  # the reads each _level call was given
    in_step = [0]

    def level(graph, poly, values, reads, sequential, loops):
        levels.append(len(reads))
        return real_level(graph, poly, values, CountingList(reads), sequential, loops)

    def counted_in_step(*args):
        in_step[0] += 1
        return real_in_step(*args)

    monkeypatch.setattr(groups, "_level", level)
    monkeypatch.setattr(groups, "_in_step", counted_in_step)
    CountingList.visits = 0
    grouping = groups.loop_groups(graph, Polyhedral(graph))
    assert grouping.nests  # the decode loop is a nest
    reads = sum(levels)
    # a few passes over the reads per level (components, the order, the
    # index), not one per component; each read checked about once
    assert CountingList.visits <= 8 * reads, (CountingList.visits, reads)
    assert in_step[0] <= 4 * reads, (in_step[0], reads)
    del module
