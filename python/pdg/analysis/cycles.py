"""Cycles of values: the strongly connected components of the read graph.
A value on a cycle depends on itself at other points (a recurrence)."""

from __future__ import annotations

from .graph import Graph


def components(graph: Graph, reads: list | None = None) -> dict[int, int]:
    """Strongly connected component index of each value (Tarjan), over
    `reads` (default: every read)."""
    index, low, on_stack, stack, comp = {}, {}, set(), [], {}
    counter = [0]
    edges: dict[int, list] = {id(v): [] for v in graph.values}
    for r in graph.reads if reads is None else reads:
        edges[id(r.consumer)].append(r.producer)

    def visit(v):
        work = [(v, iter(edges[id(v)]))]
        index[id(v)] = low[id(v)] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(id(v))
        while work:
            node, it = work[-1]
            for nxt in it:
                if id(nxt) not in index:
                    index[id(nxt)] = low[id(nxt)] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(id(nxt))
                    work.append((nxt, iter(edges[id(nxt)])))
                    break
                if id(nxt) in on_stack:
                    low[id(node)] = min(low[id(node)], index[id(nxt)])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[id(parent)] = min(low[id(parent)], low[id(node)])
                if low[id(node)] == index[id(node)]:
                    while True:
                        w = stack.pop()
                        on_stack.discard(id(w))
                        comp[id(w)] = index[id(node)]
                        if w is node:
                            break

    for v in graph.values:
        if id(v) not in index:
            visit(v)
    return comp
