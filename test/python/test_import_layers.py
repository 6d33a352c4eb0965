"""The pdg package's imports point one way: down these layers.

Each unit (a subpackage or a top-level module of python/pdg) may import
only from units in layers below its own; units of one layer are
independent of each other. From the bottom:

    pdg (__version__), _pdg_ext   the package itself and the compiled extension
    interrupts                    Ctrl-C taken between compile phases
    atomic_files                  writes that replace a file in one step
    runtime                       loads and runs artifacts: NumPy only, no compiler
    _ext                          finds the extension and its MLIR
    ir, dialects                  contexts, parsing; the op classes
    analysis, interpreter         isl analyses; the reference interpreter
    frontend, passes              programs in Python -> IR <- pass registry, pipelines
    autodiff, lowering            gradients of frontend programs; IR -> native code
    optim, nn, losses             optimizers; layers; RL losses as frontend ops
    programs                      reference programs (decode, train, RL update, GRPO)
    models                        Hugging Face checkpoints, tokenizers, generation
    rl                            trainers that compile and run programs
    cli                           the command lines

Every import counts, also those inside functions or under TYPE_CHECKING,
and `importlib.import_module("pdg.…")` with a literal name: a dependency
hidden in a function is still a dependency.

bench/ has the same rule one level up: a driver (a script with a
`__main__`) may import implementations and shared modules; those never
import a driver.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python" / "pdg"
BENCH = REPO / "bench"

LAYERS: list[tuple[str, ...]] = [
    ("pdg", "_pdg_ext"),
    ("interrupts",),
    ("atomic_files",),
    ("runtime",),
    ("_ext",),
    ("ir", "dialects"),
    ("analysis", "interpreter"),
    ("frontend", "passes"),
    ("autodiff", "lowering"),
    ("optim", "nn", "losses"),
    ("programs",),
    ("models",),
    ("rl",),
    ("cli",),
]
LAYER_OF = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
# Built, not written: no .py file names it as a unit.
COMPILED = {"_pdg_ext"}


@dataclass(frozen=True)
class Edge:
    source: str  # importing unit
    target: str  # imported unit
    where: str  # file:line of the import

    def __str__(self) -> str:
        return f"{self.where}: {self.source} -> {self.target}"


def unit_names(package: Path) -> set[str]:
    """The units of the package: its subpackages and top-level modules."""
    units = {"pdg"}
    for p in package.iterdir():
        if p.is_dir() and (p / "__init__.py").exists():
            units.add(p.name)
        elif p.suffix == ".py" and p.name != "__init__.py":
            units.add(p.stem)
    return units


def module_of(path: Path, package: Path) -> tuple[str, bool]:
    """(dotted module name, is a package __init__) of a file in `package`."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    is_init = parts[-1] == "__init__"
    if is_init:
        parts.pop()
    return ".".join(parts), is_init


def imported_modules(tree: ast.AST, module: str, is_init: bool) -> list[tuple[str, int]]:
    """Every absolute module name `tree` imports (and the names it imports
    from each, as `module.name`), at any depth, with its line."""
    package = module if is_init else module.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            out.append((name, node.lineno))
            out += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.args[0].value, node.lineno))
    return out


def unit_of(name: str, units: set[str]) -> str | None:
    """The unit a dotted name belongs to; None outside pdg. `pdg.X` where X
    is no unit is an attribute of the package itself (`__version__`)."""
    parts = name.split(".")
    if parts[0] != "pdg":
        return None
    if len(parts) == 1:
        return "pdg"
    return parts[1] if parts[1] in units | COMPILED else "pdg"


@cache
def import_edges(package: Path) -> tuple[list[Edge], int]:
    """The imports between units of `package` (within a unit left out), and
    how many modules were read."""
    units = unit_names(package)
    edges: set[Edge] = set()
    files = sorted(package.rglob("*.py"))
    for path in files:
        module, is_init = module_of(path, package)
        source = unit_of(module, units)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, line in imported_modules(tree, module, is_init):
            target = unit_of(name, units)
            if target is not None and target != source:
                where = f"{path.relative_to(package.parent)}:{line}"
                edges.add(Edge(source, target, where))
    return sorted(edges, key=str), len(files)


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def report(edges: list[Edge]) -> str:
    return "\n".join(sorted({str(e) for e in edges}))


# -- the checker, on a made-up package: it must see what it is meant to see ----


def test_checker_sees_nested_relative_and_dynamic_imports(tmp_path):
    pkg = tmp_path / "pdg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "__init__.py").write_text("__version__ = '0'\n")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("from ..low import thing\n")
    (pkg / "low" / "thing.py").write_text(
        "from pdg import __version__\n"
        "def f():\n"
        "    if True:\n"
        "        from pdg.high import x\n"
        "def g():\n"
        "    import importlib\n"
        "    return importlib.import_module('pdg.high.y')\n"
    )
    edges, n = import_edges(pkg)
    assert n == 4
    assert sorted(str(e) for e in edges) == [
        "pdg/high/__init__.py:1: high -> low",
        "pdg/low/thing.py:1: low -> pdg",
        "pdg/low/thing.py:4: low -> high",
        "pdg/low/thing.py:7: low -> high",
    ]
    assert cycles(edges) == [["high", "low"]]


# -- the real package ----------------------------------------------------------


def test_every_unit_has_a_layer():
    edges, n = import_edges(PACKAGE)
    assert n > 100, f"read only {n} modules under {PACKAGE}"
    units = unit_names(PACKAGE)
    undeclared = sorted(units - set(LAYER_OF))
    assert not undeclared, f"units with no layer in LAYERS: {undeclared}"
    gone = sorted(set(LAYER_OF) - units - COMPILED)
    assert not gone, f"LAYERS names units that no longer exist: {gone}"
    # Known dependencies: if these vanish, the scan is broken, not the code.
    seen = {(e.source, e.target) for e in edges}
    for known in [("lowering", "passes"), ("autodiff", "frontend"), ("programs", "nn")]:
        assert known in seen, f"the scan missed {known[0]} -> {known[1]}"


def test_no_cycles_between_units():
    edges, _ = import_edges(PACKAGE)
    found = cycles(edges)
    detail = "\n\n".join(
        report([e for e in edges if e.source in c and e.target in c]) for c in found
    )
    assert not found, f"import cycles between units {found}:\n{detail}"


def test_runtime_imports_nothing_of_the_compiler():
    # The runtime runs artifacts on a machine without MLIR or the compiler:
    # NumPy and the package's version, nothing else of pdg.
    edges, _ = import_edges(PACKAGE)
    bad = [e for e in edges if e.source == "runtime" and e.target != "pdg"]
    assert not bad, f"pdg.runtime imports the compiler:\n{report(bad)}"
    mlir = []
    for path in sorted((PACKAGE / "runtime").rglob("*.py")):
        module, is_init = module_of(path, PACKAGE)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mlir += [
            f"{path.name}:{line}: {name}"
            for name, line in imported_modules(tree, module, is_init)
            if name.split(".")[0] == "mlir"
        ]
    assert not mlir, "pdg.runtime imports MLIR:\n" + "\n".join(mlir)


def test_imports_go_down_the_layers():
    edges, _ = import_edges(PACKAGE)
    # A unit with no layer counts as the top for what it imports from.
    top = len(LAYERS)
    upward = [e for e in edges if LAYER_OF.get(e.target, top) >= LAYER_OF.get(e.source, -1)]
    assert not upward, (
        "imports from a unit's own layer or above (see LAYERS in this file):\n" + report(upward)
    )


def test_bench_implementations_import_no_driver():
    modules = {p.stem: p for p in BENCH.glob("*.py")}

    def is_driver(path: Path) -> bool:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return any(
            isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body
        )

    drivers = {name for name, p in modules.items() if is_driver(p)}
    assert {"grpo", "decode"} <= drivers, f"drivers found: {sorted(drivers)}"
    bad = []
    for name, path in sorted(modules.items()):
        if name in drivers:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for imported, line in imported_modules(tree, name, False):
            driver = imported.split(".")[0]
            if driver in drivers:
                bad.append(f"bench/{path.name}:{line}: imports the driver {driver}.py")
    assert not bad, "\n".join(sorted(set(bad)))
