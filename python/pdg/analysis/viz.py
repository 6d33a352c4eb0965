"""The graph and its schedule as pictures: Graphviz DOT text, and an SVG
drawn here (no Graphviz needed) with a layered layout.

Boxes are values (domain, point type, store and stage when planned); arrows
go from producer to consumer, labelled with the access; reads of an earlier
step (recurrences, windows) are dashed; values inside the loops over the
sequential dims sit in a shaded frame."""

from __future__ import annotations

import html
from dataclasses import dataclass

from .graph import Graph, Read, Value

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 170, 52, 24, 46, 30


@dataclass
class Box:
    value: Value
    layer: int
    column: int = 0

    @property
    def x(self) -> int:
        return MARGIN + self.column * (BOX_W + GAP_X)

    @property
    def y(self) -> int:
        return MARGIN + 20 + self.layer * (BOX_H + GAP_Y)


def _access_text(read: Read) -> str:
    parts = []
    for e in read.entries:
        parts.append(e[1] if e[0] == "point" else f"{','.join(e[1])}:{','.join(e[2])}")
    return "[" + ", ".join(parts) + "]"


def _dot(text: str) -> str:
    """`text` as a quoted DOT string. Names may hold any character: quotes
    and backslashes are escaped, line breaks become DOT's `\\n`, and other
    control characters `\\xHH`, so that distinct names stay distinct IDs."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _xml(text: str) -> str:
    """`text` escaped for SVG; characters XML forbids (control characters
    other than tab and line breaks) become U+FFFD."""
    allowed = "\t\n\r"
    clean = "".join(c if ord(c) >= 0x20 or c in allowed else "\ufffd" for c in text)
    return html.escape(clean)


def _attr(v: Value, name: str) -> str:
    if name not in v.op.attributes:
        return ""
    return str(v.op.attributes[name])


def _label_lines(v: Value) -> list[str]:
    shape = "x".join("?" if d is None else str(d) for d in v.shape)
    lines = [v.name, f"[{', '.join(v.domain)}] {shape + 'x' if shape else ''}{v.element}"]
    store = _attr(v, "pdg.store")
    if store:
        lines.append(store.replace("#pdg.store<", "store ").rstrip(">"))
    return lines


def _back_edges(graph: Graph) -> set[tuple[int, int]]:
    """Reads of strictly earlier steps (recurrences: `x[t - 1]`), found with
    isl; any cycle left is broken where a depth-first walk closes it."""
    from .polyhedral import Polyhedral

    poly = Polyhedral(graph)
    back: set[tuple[int, int]] = set()
    for r in graph.reads:
        for d in r.consumer.domain:
            deltas = poly.distances(r, d)
            low = poly.lower_bound(deltas) if deltas is not None else None
            if low is not None and low >= 1:
                back.add((id(r.producer), id(r.consumer)))
    state: dict[int, int] = {}
    readers = {id(v): [] for v in graph.values}
    for r in graph.reads:
        readers[id(r.producer)].append(r.consumer)
    for root in graph.values:
        if id(root) in state:
            continue
        stack = [(root, iter(readers[id(root)]))]
        state[id(root)] = 1
        while stack:
            v, it = stack[-1]
            for w in it:
                if (id(v), id(w)) in back:
                    continue
                if state.get(id(w)) == 1:
                    back.add((id(v), id(w)))
                elif id(w) not in state:
                    state[id(w)] = 1
                    stack.append((w, iter(readers[id(w)])))
                    break
            else:
                state[id(v)] = 2
                stack.pop()
    return back


def layout(graph: Graph) -> tuple[list[Box], set[tuple[int, int]]]:
    back = _back_edges(graph)
    layer: dict[int, int] = {}
    pending = list(graph.values)
    while pending:  # longest path from the sources, ignoring back edges
        progressed = False
        for v in list(pending):
            preds = [
                r.producer
                for r in v.reads
                if (id(r.producer), id(v)) not in back and r.producer is not v
            ]
            if all(id(p) in layer for p in preds):
                layer[id(v)] = 1 + max((layer[id(p)] for p in preds), default=-1)
                pending.remove(v)
                progressed = True
        if not progressed:
            for v in pending:
                layer[id(v)] = 0
            break
    # Inputs (weights) sit just above their first reader, not all at the top.
    for v in graph.values:
        if v.kind == "input":
            readers = [layer[id(r.consumer)] for r in graph.reads if r.producer is v]
            if readers:
                layer[id(v)] = max(0, min(readers) - 1)
    boxes = [Box(v, layer[id(v)]) for v in graph.values]
    columns: dict[int, int] = {}
    for b in boxes:
        b.column = columns.get(b.layer, 0)
        columns[b.layer] = b.column + 1
    return boxes, back


def to_dot(graph: Graph) -> str:
    _, back = layout(graph)
    out = [
        f"digraph {_dot(graph.name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    loop = [v for v in graph.values if '"loop"' in _attr(v, "pdg.schedule")]
    others = [v for v in graph.values if v not in loop]

    def label(v: Value) -> str:
        return _dot("\n".join(_label_lines(v)))  # DOT's `\n`: a line break

    if loop:
        out.append('  subgraph cluster_loop { label="loop"; style=filled; color="#eef3fb";')
        out += [f"    {_dot(v.name)} [label={label(v)}];" for v in loop]
        out.append("  }")
    for v in others:
        shape = ", shape=ellipse" if v.kind == "input" else ""
        out.append(f"  {_dot(v.name)} [label={label(v)}{shape}];")
    for r in graph.reads:
        style = ", style=dashed" if (id(r.producer), id(r.consumer)) in back else ""
        out.append(
            f"  {_dot(r.producer.name)} -> {_dot(r.consumer.name)} "
            f"[label={_dot(_access_text(r))}{style}];"
        )
    for name, v in graph.outputs:
        out.append(f"  {_dot('out_' + name)} [label={_dot('output ' + name)}, shape=plaintext];")
        out.append(f"  {_dot(v.name)} -> {_dot('out_' + name)};")
    out.append("}")
    return "\n".join(out) + "\n"


def to_svg(graph: Graph) -> str:
    boxes, back = layout(graph)
    by_id = {id(b.value): b for b in boxes}
    width = MARGIN * 2 + max(b.x for b in boxes) + BOX_W if boxes else 200
    height = MARGIN * 2 + max(b.y for b in boxes) + BOX_H if boxes else 100
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="Helvetica, Arial, sans-serif" font-size="10">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>',
        f'<text x="{MARGIN}" y="{MARGIN}" font-size="14">pdg.graph @{_xml(graph.name)}</text>',
    ]
    for r in graph.reads:
        a, b = by_id[id(r.producer)], by_id[id(r.consumer)]
        x1, y1 = a.x + BOX_W / 2, a.y + BOX_H
        x2, y2 = b.x + BOX_W / 2, b.y
        dashed = (id(r.producer), id(r.consumer)) in back or r.producer is r.consumer
        if dashed:  # curve around the side for reads of earlier steps
            x1, y1, x2, y2 = a.x + BOX_W, a.y + BOX_H / 2, b.x + BOX_W, b.y + BOX_H / 2
            cx = max(x1, x2) + 40
            path = f"M{x1},{y1} C{cx},{y1} {cx},{y2} {x2},{y2}"
        else:
            path = f"M{x1},{y1} L{x2},{y2}"
        dash = 'stroke-dasharray="4 3" ' if dashed else ""
        title = _xml(f"{r.consumer.name} reads {r.producer.name}{_access_text(r)}")
        svg.append(
            f'<path d="{path}" fill="none" stroke="#555" {dash}'
            f'marker-end="url(#arrow)"><title>{title}</title></path>'
        )
    for b in boxes:
        v = b.value
        fill = {"input": "#fff7e0", "udf": "#fde8e8"}.get(v.kind, "#ffffff")
        if '"loop"' in _attr(v, "pdg.schedule"):
            fill = "#eef3fb"
        stroke = "#2a6" if v.is_output else "#333"
        svg.append(
            f'<rect x="{b.x}" y="{b.y}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'fill="{fill}" stroke="{stroke}"/>'
        )
        for i, line in enumerate(_label_lines(v)[:3]):
            weight = ' font-weight="bold"' if i == 0 else ""
            svg.append(
                f'<text x="{b.x + 6}" y="{b.y + 15 + i * 14}"{weight}>{_xml(line[:30])}</text>'
            )
    svg.append("</svg>")
    return "\n".join(svg) + "\n"
