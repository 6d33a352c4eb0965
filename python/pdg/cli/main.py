"""pdg: the project's command line, a click group.

    pdg compile prog.mlir|prog.py -o prog.pdgx
    pdg run prog.pdgx --symbols B=2 --inputs in.npz [--out out.npz]
    pdg run --interpret prog.mlir --symbols B=2 --inputs in.npz [--udfs mod:attr]
    pdg generate MODEL_DIR --prompt TEXT [--max-new-tokens N] [--format json]
    pdg train CONFIG.yaml

`compile` writes an artifact (library + manifest) and prints how long each
phase took. `run` runs an artifact with the runtime, or with `--interpret` a
.mlir program with the reference interpreter; both print a summary of each
output (shape or ragged shapes, dtype, CRC-32 checksum) and the dynamic
bounds found. Errors are one message on stderr and exit code 1, never a
traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

import click

from pdg import __version__
from pdg.cli import common
from pdg.cli.common import UserError, parse_symbols
from pdg.cli.generate import generate_command
from pdg.cli.train import train_command


def _load_inputs(path: str | None) -> dict:
    """The arrays of an .npz file by name; a file that is not one (a .npy,
    an empty or damaged file) is the user's mistake, said in one line."""
    import numpy as np

    if path is None:
        return {}
    hint = "expected an .npz file of named arrays, e.g. from numpy.savez(path, x=...)"
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):  # a .npy: one unnamed array
            raise UserError(f"--inputs {path} holds one unnamed array (.npy); {hint}")
        with data:
            return {name: data[name] for name in data.files}
    except OSError as e:
        raise UserError(f"cannot read --inputs {path}: {e.strerror or e}") from None
    except EOFError:
        reason = "the file is empty or cut short"
        raise UserError(f"cannot read --inputs {path}: {reason}; {hint}") from None
    # A damaged .npz fails in zipfile, in decompressing or in an array's header.
    except (ValueError, zipfile.BadZipFile, zlib.error) as e:
        raise UserError(f"cannot read --inputs {path}: {e}; {hint}") from None


def _load_udfs(spec: str | None) -> Mapping[str, Callable]:
    """`module:attr` or `file.py:attr`, naming a dict of callables."""
    if spec is None:
        return {}
    where, colon, attr = spec.rpartition(":")
    if not colon or not where or not attr:
        raise UserError(f"--udfs takes module:attr (or file.py:attr), got '{spec}'")
    try:
        if where.endswith(".py"):
            loader = importlib.util.spec_from_file_location(Path(where).stem, where)
            if loader is None or loader.loader is None or not Path(where).exists():
                raise UserError(f"--udfs: cannot find {where}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except UserError:
        raise
    except Exception as e:  # the user's module failed to import
        raise UserError(f"--udfs: importing {where} failed: {type(e).__name__}: {e}") from None
    value: object = module
    for name in attr.split("."):
        if not hasattr(value, name):
            raise UserError(f"--udfs: {where} has no attribute '{attr}'")
        value = getattr(value, name)
    if not isinstance(value, Mapping) or not all(callable(f) for f in value.values()):
        raise UserError(f"--udfs: {spec} must be a dict from udf names to callables")
    return value


def _save(path: str, outputs: dict) -> None:
    arrays = {}
    for name, value in outputs.items():
        if isinstance(value, list):  # ragged: one array per group
            for i, part in enumerate(value):
                arrays[f"{name}/{i}"] = part
        else:
            arrays[name] = value
    import numpy as np

    try:
        np.savez(path, **arrays)
    except OSError as e:
        raise UserError(f"cannot write --out {path}: {e.strerror}") from None


@click.group(context_settings=dict(help_option_names=["-h", "--help"]))
@click.version_option(__version__, prog_name="pdg")
def cli() -> None:
    """pdg: compile and run RL fine-tuning programs written in the pdg dialect."""


@cli.command("compile")
@click.argument("program", metavar="PROGRAM.mlir|PROGRAM.py")
@click.option("-o", "--output", required=True, metavar="OUT.pdgx", help="The artifact directory.")
@click.option("--gpu/--no-gpu", default=True, help="Also write PTX kernels (sm_80, sm_90).")
@click.option("--vectorize", is_flag=True, help="Fold the batch dim b into the point type first.")
def compile_command(program: str, output: str, gpu: bool, vectorize: bool) -> None:
    """Compile PROGRAM to an artifact (host library, kernels, manifest)."""
    from pdg.cli.programs import load_program
    from pdg.lowering.artifact import compile_module

    module = load_program(program)
    compiled = compile_module(module, Path(output), gpu=gpu, vectorize=vectorize)
    if compiled.cached:
        click.echo(f"copied {program} -> {output} from the compile cache ($PDG_COMPILE_CACHE)")
        return
    for phase, seconds in compiled.seconds.items():
        click.echo(f"  {phase:<26} {seconds:7.2f} s")
    total = sum(compiled.seconds.values())
    click.echo(f"compiled {program} -> {output} in {total:.2f} s")


@cli.command("run")
@click.argument("program", metavar="PROGRAM.pdgx|PROGRAM.mlir")
@click.option(
    "--interpret",
    "use_interpreter",
    is_flag=True,
    help="Run a .mlir program with the reference interpreter instead.",
)
@click.option(
    "--symbols", multiple=True, metavar="NAME=VALUE", help="Launch bounds, e.g. B=2 (repeatable)."
)
@click.option(
    "--inputs",
    metavar="FILE.npz",
    help="One array per pdg.input, by name; under mpiexec, {rank} in the name is the rank.",
)
@click.option("--udfs", metavar="MODULE:ATTR", help="A dict from udf names to callables.")
@click.option("--max-steps", type=int, help="Cap on every dynamic dim's steps (interpreter).")
@click.option("--graph", help="The pdg.graph to run (interpreter; default: the first).")
@click.option(
    "--out",
    metavar="FILE.npz",
    help="Save the outputs (ragged: name/0, name/1, ...); under mpiexec, name it with {rank}.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show the step a compiled run is at (default: when stderr is a terminal).",
)
def run_command(
    program: str,
    use_interpreter: bool,
    symbols: tuple[str, ...],
    inputs: str | None,
    udfs: str | None,
    max_steps: int | None,
    graph: str | None,
    out: str | None,
    progress: bool | None,
) -> None:
    """Run PROGRAM on inputs and print a summary of its outputs.

    Started by mpiexec, each process runs one rank of the artifact on
    MPI.COMM_WORLD ({rank} in --inputs and --out is its number); rank 0
    prints the summary."""
    from pdg.interpreter import interpret
    from pdg.interpreter.result import Result

    if not use_interpreter:
        from pdg.cli.ranks import launched_world, per_rank, stopping_every_rank

        world = launched_world()
        with stopping_every_rank(world):
            if not Path(program).is_dir():
                hint = (
                    " (add --interpret to run a .mlir program)" if program.endswith(".mlir") else ""
                )
                raise UserError(f"'{program}' is not an artifact directory{hint}")
            if max_steps is not None or graph:
                raise UserError("--max-steps and --graph apply to --interpret runs only")
            import pdg.runtime

            out = per_rank(out, world, "--out", writes=True)
            compiled = pdg.runtime.load(program)
            show = progress if progress is not None else sys.stderr.isatty() and world.rank == 0
            ran = compiled.run(
                _load_inputs(per_rank(inputs, world, "--inputs")),
                parse_symbols(symbols, "--symbols"),
                _load_udfs(udfs),
                progress=_progress_line(compiled) if show else None,
                comm=world.comm,
            )
        if show:
            click.echo("\r" + " " * 60 + "\r", nl=False, err=True)
        result = Result(ran.outputs, ran.bounds)
        peak = f"peak memory {ran.peak_bytes} bytes ({ran.peak_bytes / 2**20:.3f} MiB)"
        if world.rank != 0:  # the ranks' summaries would interleave
            if out:
                _save(out, result.outputs)
            return
    else:
        if not Path(program).is_file():
            raise UserError(f"cannot read program file '{program}'")
        result = interpret(
            program,
            _load_inputs(inputs),
            symbols=parse_symbols(symbols, "--symbols"),
            udfs=_load_udfs(udfs),
            max_steps=max_steps,
            graph=graph,
        )
    click.echo(result.summary())
    if not use_interpreter:
        click.echo(peak)
    if out:
        _save(out, result.outputs)


@cli.command(
    "bench",
    context_settings=dict(ignore_unknown_options=True, allow_interspersed_args=False),
)
@click.argument("name", type=click.Choice(["decode"]))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def bench_command(name: str, args: tuple[str, ...]) -> None:
    """Run a benchmark of the repository's bench/ folder (e.g. `pdg bench
    decode --lengths 256`); its baselines come from `pip install -e .[bench]`."""
    import subprocess

    script = Path(__file__).resolve().parents[3] / "bench" / f"{name}.py"
    if not script.is_file():
        raise UserError(
            f"{script} is not here: the benchmarks live in a clone of the pdg repository "
            "(run `bash bench/run.sh` there)"
        )
    done = subprocess.run([sys.executable, str(script), *args])
    if done.returncode:
        raise UserError(f"bench {name} failed (exit code {done.returncode})")


def _progress_line(compiled) -> Callable[[int], None]:
    """A one-line display of the loop's step, rewritten in place."""
    dynamic = [s for s in compiled.manifest["symbols"] if s["kind"] == "dynamic"]
    limit = f" of at most {dynamic[0]['max']}" if dynamic and dynamic[0]["max"] else ""
    start = time.monotonic()

    def show(step: int) -> None:
        seconds = time.monotonic() - start
        rate = f", {step / seconds:.0f} steps/s" if seconds > 0 else ""
        click.echo(f"\rstep {step}{limit}{rate}   ", nl=False, err=True)

    return show


@cli.command("viz")
@click.argument("program", metavar="PROGRAM.mlir")
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    metavar="FILE.svg|FILE.dot",
    help="Writes FILE.dot and FILE.svg (the extension picks the base name).",
)
@click.option(
    "--plan/--no-plan",
    default=True,
    help="Schedule and plan storage first, to show the loop and stores.",
)
def viz_command(program: str, output: str, plan: bool) -> None:
    """Draw PROGRAM's graph (and schedule) as Graphviz DOT and SVG."""
    from pdg.cli.viz import write_views
    from pdg.ir import ParseFailure, make_context, parse_file

    try:
        module = parse_file(program, make_context())
    except ParseFailure as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot read {program}: {e.strerror}") from None
    for path in write_views(module, output, plan=plan):
        click.echo(f"wrote {path}")


@cli.command("memory")
@click.argument("program", metavar="PROGRAM.pdgx")
@click.option(
    "--symbols",
    multiple=True,
    metavar="NAME=VALUE",
    help="Launch bounds, e.g. P=1 (repeatable); dynamic bounds are taken at their max.",
)
@click.option("--top", default=20, show_default=True, help="How many of the largest stores.")
def memory_command(program: str, symbols: tuple[str, ...], top: int) -> None:
    """Show where PROGRAM's planned peak memory goes, store by store (the
    plan counts stores; a run also holds its bodies' temporaries and a
    partial sum per chunk of points)."""
    from pdg.runtime import load

    plan = load(program).plan(common.parse_symbols(symbols, "--symbols"))
    mib = 2**20
    at = ", ".join(f"{k}={v}" for k, v in sorted(plan.values.items())) or "no symbols"
    click.echo(f"planned peak of {program} at {at}: {plan.peak / mib:.1f} MiB")
    placed = plan.by_placement()
    in_block = sum(s.placed == "block" for s in plan.stores)
    click.echo(
        f"  inputs {placed.get('input', 0) / mib:.1f} MiB, stores of their own "
        f"{placed.get('own', 0) / mib:.1f} MiB, shared block {plan.block / mib:.1f} MiB "
        f"(its {in_block} stores apart: {plan.block_apart / mib:.1f} MiB)"
    )
    returned = [s.value for s in plan.stores if s.placed == "returned"]
    if returned:
        click.echo(
            f"  {len(returned)} outputs returned as the slot they copy (no bytes of their own)"
        )
    in_place = [s.value for s in plan.stores if s.placed == "in place"]
    if in_place:
        click.echo(
            f"  {len(in_place)} values updated in place along a loop (in their update's store)"
        )
    donated = [s.value for s in plan.stores if s.placed == "donated"]
    if donated:
        click.echo(
            f"  {len(donated)} stores in an input's buffer (the caller donates the array, "
            "or the run copies it)"
        )
    kinds = ", ".join(f"{k} {v / mib:.1f}" for k, v in plan.by_kind().items())
    click.echo(f"  by kind (MiB, each store apart): {kinds}")
    click.echo(f"  {'MiB':>9}  {'kind':<9} {'placed':<8} {'value':<32} extents x point")
    for s in plan.stores[: max(top, 0)]:
        shape = f"[{', '.join(s.extents)}] x [{', '.join(s.point)}] {s.element}"
        click.echo(f"  {s.bytes / mib:9.1f}  {s.kind:<9} {s.placed:<8} {s.value:<32} {shape}")


cli.add_command(generate_command)
cli.add_command(train_command)


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exception types that are the user's mistakes (imported when the
    command runs: they load MLIR and isl)."""
    from pdg.frontend.errors import ProgramError
    from pdg.interpreter import InterpreterError
    from pdg.lowering.artifact import CompileError
    from pdg.lowering.toolchain import ToolchainError
    from pdg.models.errors import ModelError
    from pdg.runtime import ArtifactError, RunError

    return (
        InterpreterError,
        ProgramError,
        CompileError,
        ToolchainError,
        ArtifactError,
        RunError,
        ModelError,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: every failure is one message on stderr and exit code 1."""
    return common.run_command(cli, argv, "pdg", _user_errors)


if __name__ == "__main__":
    sys.exit(main())
