"""Input nested deeper than pdg's limit (256) is refused with a located
error before MLIR parses it: MLIR's recursive parser would overflow the
stack (SIGSEGV) on `module {` x 10000. Run as processes, so that a crash
shows as a signal instead of killing the test session."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
LIMIT = 256
MESSAGE = f"nesting deeper than {LIMIT} levels"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    exe = BIN / args[0]
    if not exe.exists():
        pytest.skip(f"{exe} is not installed")
    return subprocess.run(
        [str(exe), *args[1:]], input=stdin, capture_output=True, text=True, timeout=120
    )


def refused(r: subprocess.CompletedProcess, file: str, line: int = 1, column: int | None = None):
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    col = str(column) if column else r"\d+"
    assert re.search(rf"{re.escape(file)}:{line}:{col}: error: {MESSAGE}", r.stderr), r.stderr
    assert "hint:" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


DEEP = {
    "regions": "module {" * 10000 + "}" * 10000,
    "parentheses": "#m = affine_map<(d0) -> (" + "(" * 30000 + "d0" + ")" * 30000 + ")>\n",
    "arrays": "func.func private @f() attributes {a = " + "[" * 10000 + "]" * 10000 + "}\n",
    "types": "func.func private @f(" + "tensor<" * 30000 + "f32" + ">" * 30000 + ")\n",
    "pdg values": "func.func private @f("
    + "!pdg.value<[], " * 10000
    + "tensor<f32>"
    + ">" * 10000
    + ")\n",
    "unary minus": "#m = affine_map<(d0) -> (" + "- " * 30000 + "d0)>\n",
}


@pytest.mark.parametrize("kind", DEEP)
def test_01_pdg_opt_refuses_deep_nesting_with_a_location(tmp_path, kind):
    path = tmp_path / "deep.mlir"
    path.write_text(DEEP[kind])
    r = run("pdg-opt", str(path))
    refused(r, str(path))
    assert r.stdout == ""


def test_02_the_error_points_at_the_first_bracket_past_the_limit(tmp_path):
    path = tmp_path / "deep.mlir"
    path.write_text("// a comment\n" + "module {" * 10000 + "}" * 10000)
    # The 257th `module {` starts at column 8 * 256 + 1; its `{` is 7 later.
    refused(run("pdg-opt", str(path)), str(path), 2, 8 * LIMIT + 8)


def test_03_stdin_compile_and_viz_refuse_it_too(tmp_path):
    text = DEEP["regions"]
    refused(run("pdg-opt", "-", stdin=text), "<stdin>")
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    refused(run("pdg", "compile", str(path), "-o", str(tmp_path / "deep.pdgx")), str(path))
    refused(run("pdg", "viz", str(path), "-o", str(tmp_path / "deep.svg")), str(path))
    assert not (tmp_path / "deep.pdgx").exists()


def test_04_aliases_count_their_depth_where_they_are_used(tmp_path):
    """`#a1 = [#a0]`, `#a2 = [#a1]`, ...: no deep brackets in the text, but
    an attribute 20000 deep, which crashed the printer."""
    lines = ["#a0 = [1]", *(f"#a{i} = [#a{i - 1}]" for i in range(1, 20000))]
    lines.append("func.func private @f() attributes {x = #a19999}")
    path = tmp_path / "aliases.mlir"
    path.write_text("\n".join(lines) + "\n")
    refused(run("pdg-opt", str(path)), str(path), LIMIT + 1, 10)


def test_05_nesting_at_the_limit_parses_and_prints_parseably(tmp_path):
    path = tmp_path / "ok.mlir"
    path.write_text("module {" * LIMIT + "}" * LIMIT)
    for form in ((), ("--mlir-print-op-generic",)):
        r = run("pdg-opt", str(path), *form)
        assert r.returncode == 0, r.stderr[-2000:]
        printed = tmp_path / "printed.mlir"
        printed.write_text(r.stdout)
        again = run("pdg-opt", str(printed))
        assert again.returncode == 0, again.stderr[-2000:]


def test_06_comparisons_and_arrows_do_not_count_as_nesting(tmp_path):
    """pdg's own syntax uses `<` and `>` as comparisons (`pdg.dim @t < 4`,
    `case (t < 1, ...)`); arrows `->` and `>=` are not brackets either. A
    graph with many of each is far from nested."""
    many = 2 * LIMIT
    dims = "\n".join(f"  pdg.dim @d{i} < {i + 1}" for i in range(many))
    conditions = ", ".join(f"t < {i + 2}" for i in range(many))
    conditions += ", " + ", ".join(f"t >= 0, t <= {i + 9}, t > -1" for i in range(many))
    program = f"""\
pdg.graph @flat {{
{dims}
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[], tensor<f32>>
  %y = pdg.node "y" [t] -> tensor<f32>
    case ({conditions}) (%a = %x[] : !pdg.value<[], tensor<f32>>) {{
      pdg.yield %a : tensor<f32>
    }}
    default (%a = %x[] : !pdg.value<[], tensor<f32>>) {{
      pdg.yield %a : tensor<f32>
    }}
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}}
""" + "\n".join(
        f"#m{i} = affine_map<(d0) -> (d0)>\nfunc.func private @f{i}() -> (i32, f32)"
        for i in range(many)
    )
    path = tmp_path / "flat.mlir"
    path.write_text(program)
    r = run("pdg-opt", str(path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "pdg.graph @flat" in r.stdout
