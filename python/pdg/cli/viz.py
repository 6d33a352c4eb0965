"""Writing a module's graphs as DOT and SVG files (`pdg viz`,
`pdg-opt --pdg-view-graph`)."""

from __future__ import annotations

from pathlib import Path

from mlir import ir

from pdg.cli.common import UserError


def write_views(module: ir.Module, output: str, plan: bool = False) -> list[Path]:
    """FILE.dot and FILE.svg for each pdg.graph (FILE-NAME.* when several)."""
    from pdg.analysis.graph import read_graph
    from pdg.analysis.viz import to_dot, to_svg

    if plan:
        from pdg.passes.analysis_passes import plan_storage_pass, schedule_pass

        # The compiler's order: the storage plan reads the schedule.
        schedule_pass(module)
        plan_storage_pass(module)
    base = Path(output)
    if base.suffix in (".dot", ".svg"):
        base = base.with_suffix("")
    graphs = [op for op in module.body.operations if op.operation.name == "pdg.graph"]
    written = []
    for op in graphs:
        graph = read_graph(op)
        stem = base if len(graphs) == 1 else base.with_name(f"{base.name}-{graph.name}")
        for ext, render in ((".dot", to_dot), (".svg", to_svg)):
            path = stem.with_suffix(ext)
            try:
                path.write_text(render(graph))
            except OSError as e:
                hint = "" if path.parent.is_dir() else f" (create {path.parent} first)"
                raise UserError(f"cannot write {path}: {e.strerror}{hint}") from None
            written.append(path)
    return written
