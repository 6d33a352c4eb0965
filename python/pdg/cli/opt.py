"""pdg-opt: mlir-opt for pdg programs.

    pdg-opt [options] [input.mlir|-] [--PASS[=OPTIONS] ...]

Reads IR, runs a pass pipeline (pdg's passes and upstream's), prints the
result. Errors are reported as `file:line:col: error: message` on stderr and
make the exit code 1; a user mistake never produces a traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import TextIO

import click

from pdg import __version__
from pdg.cli.common import UserError, parse_symbols, run_command
from pdg.ir.context import make_context
from pdg.ir.expected_diagnostics import check, parse_expectations
from pdg.ir.source import DiagnosticCollector, ParseFailure, decode_source, read_source
from pdg.ir.split import split_input
from pdg.passes.pipeline import PipelineError, Stage, parse_pipeline, run_pipeline
from pdg.passes.registry import registered_passes

from . import lowering_pass  # noqa: F401  (registers pdg-lower-to-loops)


def _version_text() -> str:
    from pdg import _ext

    return f"pdg-opt {__version__}\npdg {__version__}, MLIR {_ext.MLIR_VERSION}"


def _list_passes() -> None:
    from pdg import _ext

    python_passes = registered_passes()
    if python_passes:
        click.echo("pdg passes (Python):")
        for p in python_passes:
            click.echo(f"  --{p.name:<32} {p.summary}")
    click.echo("Passes registered with MLIR (pdg's C++ passes and upstream's):")
    sys.stdout.flush()
    # LLVM prints to file descriptor 1 and aborts on a closed pipe; print to a
    # file instead and copy it through Python, which handles that case.
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(1)
        try:
            os.dup2(tmp.fileno(), 1)
            _ext.print_registered_passes()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        sys.stdout.write(tmp.read().decode("utf-8", "replace"))


# pdg-opt's own options, and those of them that take a value.
_OPTIONS = {
    "-o",
    "--output",
    "--split-input-file",
    "--verify-diagnostics",
    "--pass-pipeline",
    "--list-passes",
    "--mlir-print-ir-after-all",
    "--mlir-print-op-generic",
    "--version",
    "-h",
    "--help",
    "--pdg-memory-report",
    "--pdg-symbols",
    "--pdg-view-graph",
}
_VALUED = {"-o", "--output", "--pass-pipeline", "--pdg-symbols", "--pdg-view-graph"}


def _split_pass_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    """Separates `--PASS[=OPTIONS]` flags (anywhere on the line) from the
    rest, which click parses."""
    rest, flags = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if arg == "--":
            rest += argv[i:]
            break
        if name in _OPTIONS or not arg.startswith("--"):
            rest.append(arg)
            if name in _VALUED and "=" not in arg and i + 1 < len(argv):
                rest.append(argv[i + 1])
                i += 1
        else:
            flags.append(arg)
        i += 1
    return rest, flags


def _pass_flags_to_pipeline(flags: list[str]) -> str:
    """`--canonicalize --cse='x=1'` -> `canonicalize,cse{x=1}`."""
    from pdg import _ext
    from pdg.passes.registry import get_pass

    elements = []
    for arg in flags:
        name, _, options = arg[2:].partition("=")
        if get_pass(name) is None and not _ext.is_registered_pass(name):
            raise UserError(
                f"unknown option '{arg}': not a pdg-opt option nor a registered "
                "pass; `pdg-opt --list-passes` lists the passes"
            )
        elements.append(f"{name}{{{options}}}" if options else name)
    return ",".join(elements)


def _read_input(path: str) -> tuple[str, str]:
    """(text, name for locations); ParseFailure if it is not UTF-8."""
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # a text stream in tests
        if stdin is None:
            return sys.stdin.read(), "<stdin>"
        return decode_source(stdin.read(), "<stdin>"), "<stdin>"
    try:
        return read_source(path), path
    except OSError as e:
        raise UserError(f"cannot read input file '{path}': {e.strerror}") from None


def _process_chunk(
    text: str,
    filename: str,
    stages: list[Stage],
    print_after_all: bool,
    generic: bool,
    memory_report: dict[str, int] | None = None,
    view_graph: str | None = None,
) -> tuple[str | None, list]:
    """Parses, verifies and transforms one chunk in a fresh context.

    Returns (printed IR or None on failure, diagnostics)."""
    from pdg import _ext

    ctx = make_context()
    with DiagnosticCollector(ctx) as diags:
        module = _ext.parse_source(text, filename, ctx)
        if module is None:
            return None, diags.diagnostics
        try:
            failures = run_pipeline(module, stages, print_after_all, dump=sys.stderr)
        except PipelineError as e:
            raise UserError(f"invalid pass pipeline: {e}") from None
    if failures:
        return None, diags.diagnostics + failures
    if view_graph:
        from pdg.cli.viz import write_views

        try:
            write_views(module, view_graph)
        except OSError as e:
            raise UserError(f"cannot write '{view_graph}': {e.strerror}") from None
    if memory_report is not None:
        return _memory_report(module, memory_report), diags.diagnostics
    printed = module.operation.get_asm(print_generic_op_form=generic, assume_verified=True)
    return printed, diags.diagnostics


def _memory_report(module, symbols: dict[str, int]) -> str:
    """Each graph's stores and peak, as formulas and for `symbols`."""
    from pdg.analysis.graph import read_graph
    from pdg.analysis.memory import communication_lines, render, report_lines, stores_of

    graphs = [read_graph(op) for op in module.body.operations if op.operation.name == "pdg.graph"]
    _check_symbol_values(symbols, graphs)
    reports = [
        render(g.name, report_lines(stores_of(g)), symbols, communication_lines(g)) for g in graphs
    ]
    return "\n".join(reports) + "\n"


def _check_symbol_values(symbols: dict[str, int], graphs: list) -> None:
    """--pdg-symbols names bound symbols of the program's launch or dynamic
    dims, each a count within the dim's max: a typo or a negative value
    would otherwise give a report for a program that cannot run."""
    bounds = {d.symbol: (g, d) for g in graphs for d in g.dims.values() if d.symbol}
    for name, value in symbols.items():
        if name not in bounds:
            known = ", ".join(sorted(bounds)) or "none"
            raise UserError(
                f"--pdg-symbols: '{name}' is not a bound symbol of the program "
                f"(its symbols: {known})"
            )
        graph, dim = bounds[name]
        if value < 1:
            raise UserError(
                f"--pdg-symbols {name}={value}: {name} bounds dim '{dim.name}' of "
                f"@{graph.name}, a count of points: give at least 1"
            )
        if dim.size is not None and value > dim.size:
            raise UserError(
                f"--pdg-symbols {name}={value}: dim '{dim.name}' of @{graph.name} is "
                f"declared with max {dim.size}"
            )


def run(
    input_path: str,
    output: str,
    split: bool,
    verify_diagnostics: bool,
    pipeline_text: str | None,
    pass_flags: list[str],
    print_after_all: bool,
    generic: bool,
    out_stream: TextIO,
    memory_report: dict[str, int] | None = None,
    view_graph: str | None = None,
) -> int:
    flag_pipeline = _pass_flags_to_pipeline(pass_flags)
    if pipeline_text and flag_pipeline:
        raise UserError("give passes either with --pass-pipeline or as flags, not both")
    try:
        stages = parse_pipeline(pipeline_text or flag_pipeline)
    except PipelineError as e:
        raise UserError(f"invalid pass pipeline: {e}") from None

    try:
        text, filename = _read_input(input_path)
    except ParseFailure as e:
        for d in e.diagnostics:
            click.echo(d.render(), err=True)
        return 1
    outputs, failed, problems = [], False, []
    for chunk in split_input(text, split):
        printed, diagnostics = _process_chunk(
            chunk.text, filename, stages, print_after_all, generic, memory_report, view_graph
        )
        if verify_diagnostics:
            problems += check(parse_expectations(chunk.text), diagnostics, filename)
        else:
            for d in diagnostics:
                click.echo(d.render(), err=True)
            failed |= printed is None
        if printed is not None:
            outputs.append(printed.rstrip("\n") + "\n")
    if verify_diagnostics:
        for p in problems:
            click.echo(p, err=True)
        failed = bool(problems)
    result = "// -----\n".join(outputs)
    if output == "-":
        try:
            out_stream.write(result)
            out_stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise UserError(f"cannot write the output: {e.strerror}") from None
    elif result or not failed:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(result)
        except OSError as e:
            raise UserError(f"cannot write output file '{output}': {e.strerror}") from None
    return 1 if failed else 0


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Any registered pass is also a flag: `pdg-opt --pdg-dce --canonicalize in.mlir`.",
)
@click.argument("input_path", default="-", metavar="[INPUT]")
@click.option("-o", "--output", default="-", help="Output file ('-' for stdout).")
@click.option(
    "--split-input-file",
    "split",
    is_flag=True,
    help="Process each '// -----' chunk on its own.",
)
@click.option(
    "--verify-diagnostics",
    is_flag=True,
    help="Check diagnostics against expected-* comments.",
)
@click.option(
    "--pass-pipeline",
    "pipeline_text",
    default=None,
    help="e.g. 'builtin.module(pdg-dce,canonicalize)'.",
)
@click.option("--list-passes", is_flag=True, help="List pdg's and upstream's passes and exit.")
@click.option(
    "--mlir-print-ir-after-all",
    "print_after_all",
    is_flag=True,
    help="Print the IR after every pass to stderr.",
)
@click.option(
    "--mlir-print-op-generic",
    "generic",
    is_flag=True,
    help="Print operations in the generic form.",
)
@click.option("--version", is_flag=True, help="Print the pdg and MLIR versions and exit.")
@click.option(
    "--pdg-memory-report",
    "memory_report",
    is_flag=True,
    help="Print each store and the peak memory (formulas, and values for --pdg-symbols) "
    "instead of the IR.",
)
@click.option(
    "--pdg-symbols",
    "symbol_values",
    multiple=True,
    metavar="NAME=INT,...",
    help="Bound symbol values for --pdg-memory-report, e.g. B=1,T=4096.",
)
@click.option(
    "--pdg-view-graph",
    "view_graph",
    metavar="FILE.dot",
    help="Also write the graph (and schedule, if planned) as FILE.dot and FILE.svg.",
)
@click.option("--pass-flag", "pass_flags", multiple=True, hidden=True)
@click.pass_context
def command(
    ctx: click.Context,
    input_path,
    output,
    split,
    verify_diagnostics,
    pipeline_text,
    list_passes,
    print_after_all,
    generic,
    version,
    memory_report,
    symbol_values,
    view_graph,
    pass_flags,
) -> None:
    if version:
        click.echo(_version_text())
        return
    if symbol_values and not memory_report:
        raise UserError("--pdg-symbols gives values for --pdg-memory-report; add that option")
    if list_passes:
        _list_passes()
        return
    ctx.exit(
        run(
            input_path,
            output,
            split,
            verify_diagnostics,
            pipeline_text,
            list(pass_flags),
            print_after_all,
            generic,
            sys.stdout,
            parse_symbols(symbol_values, "--pdg-symbols") if memory_report else None,
            view_graph,
        )
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point; maps every failure to exit code 1 with a one-line error."""
    rest, flags = _split_pass_flags(list(sys.argv[1:] if argv is None else argv))
    return run_command(command, rest + [f"--pass-flag={f}" for f in flags], "pdg-opt")


if __name__ == "__main__":
    sys.exit(main())
