"""Reading a program for `pdg compile`: a .mlir file holding one pdg.graph,
or a Python file that defines `program`, a pdg.frontend.Program (or an
object with a `.program` that is one, like pdg.programs.DecodeProgram)."""

from __future__ import annotations

import runpy
from pathlib import Path

from mlir import ir

from pdg.cli.common import UserError
from pdg.ir import ParseFailure, make_context, parse_file, parse_text


def load_program(path: str) -> ir.Module:
    file = Path(path)
    if not file.is_file():
        raise UserError(f"cannot read program file '{path}'")
    ctx = make_context()
    if file.suffix == ".py":
        return _from_python(file, ctx)
    try:
        return parse_file(str(file), ctx)
    except ParseFailure as e:
        raise UserError(str(e)) from None


def _from_python(file: Path, ctx) -> ir.Module:
    from pdg.frontend import Program
    from pdg.frontend.errors import ProgramError

    try:
        namespace = runpy.run_path(str(file), run_name="pdg_program")
    except ProgramError:
        raise
    except SystemExit as e:  # sys.exit() in the script: no program to compile
        raise UserError(
            f"{file} exited early (sys.exit({e.code!r})) before defining `program`; "
            "a program script must run to its end (move the exit under "
            "`if __name__ == '__main__':`)"
        ) from None
    except Exception as e:  # the user's script failed
        raise UserError(f"running {file} failed: {type(e).__name__}: {e}") from None
    program = namespace.get("program")
    program = getattr(program, "program", program)
    if not isinstance(program, Program):
        raise UserError(
            f"{file} must define `program`, a pdg.frontend.Program (found "
            f"{type(program).__name__}); e.g. `program = pdg.Program('decode')`"
        )
    try:
        return parse_text(program.to_mlir(), str(file), ctx)
    except ParseFailure as e:
        raise UserError(str(e)) from None
