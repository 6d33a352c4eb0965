"""Every class of user mistake raises ProgramError naming the user's file
and the line of the mistake, with a readable message (no MLIR internals)."""

from __future__ import annotations

import pdg.frontend as pdg
import pytest
from pdg.frontend import ProgramError

HERE = __file__


def line_of(marker: str) -> int:
    with open(HERE) as f:
        for number, line in enumerate(f, start=1):
            if line.rstrip().endswith(f"# {marker}") and "line_of" not in line:
                return number
    raise AssertionError(marker)


def check(err: ProgramError, marker: str, *fragments: str) -> None:
    assert err.loc.filename == HERE
    assert err.loc.line == line_of(marker), str(err)
    text = str(err)
    assert text.startswith(f"{HERE}:{line_of(marker)}: error: ")
    for fragment in fragments:
        assert fragment in text, text
    assert "mlir" not in text.lower()


def program():
    prog = pdg.Program("p")
    b = prog.dim("b", 2)
    t = prog.dim("t", 8)
    return prog, b, t


def test_01_indexing_a_dim_outside_the_domain():
    prog, b, t = program()
    x = prog.input("x", (), "f32", domain=[t])
    with pytest.raises(ProgramError) as e:
        x[t, b]  # OUTSIDE
    check(e.value, "OUTSIDE", "dim 'b'", "not in the domain [t]")


def test_02_shape_mismatch_in_elementwise_op():
    prog, b, t = program()
    x = prog.input("x", (3,), "f32")
    y = prog.input("y", (4,), "f32")
    with pytest.raises(ProgramError) as e:
        x + y  # SHAPES
    check(e.value, "SHAPES", "(3,) and (4,) do not broadcast")


def test_03_shape_mismatch_in_matmul():
    prog, b, t = program()
    x = prog.input("x", (2, 3), "f32")
    w = prog.input("w", (4, 5), "f32")
    with pytest.raises(ProgramError) as e:
        x @ w  # MATMUL
    check(e.value, "MATMUL", "sizes 3 and 4")


def test_04_recurrence_without_a_base_case():
    prog, b, t = program()
    x = prog.recurrent((), "f32", domain=[t], name="x")  # RECURRENT
    x[t > 0] = x[t - 1] + 1.0
    prog.output("x", x)
    with pytest.raises(ProgramError) as e:
        prog.build()
    check(e.value, "RECURRENT", "recurrence without a base case", "x[t == 0]")


def test_05_unguarded_self_read_is_reported_at_the_value():
    prog, b, t = program()
    x = prog.recurrent((), "f32", domain=[t], name="x")
    x[...] = x[t - 1] + 1.0  # UNGUARDED
    prog.output("x", x)
    with pytest.raises(ProgramError) as e:
        prog.build()
    check(e.value, "UNGUARDED", "reads 'x'[t - 1]", "t >= 1")


def test_06_unknown_dim_in_a_domain():
    prog, b, t = program()
    other = pdg.Program("q").dim("u", 3)
    with pytest.raises(ProgramError) as e:
        prog.input("x", (), "f32", domain=[other])  # UNKNOWN
    check(e.value, "UNKNOWN", "dims of this program")


def test_07_unknown_name_in_an_index():
    prog, b, t = program()
    x = prog.input("x", (), "f32", domain=[t])
    with pytest.raises(ProgramError) as e:
        x[0 : pdg.index.SymRef("Q")]  # NAME
    check(e.value, "NAME", "unknown name(s) Q")


def test_08_case_value_of_the_wrong_type():
    prog, b, t = program()
    x = prog.recurrent((2,), "f32", domain=[t], name="x")
    with pytest.raises(ProgramError) as e:
        x[t == 0] = prog.input("i", (3,), "f32")  # CASETYPE
    check(e.value, "CASETYPE", "tensor<3xf32>", "tensor<2xf32>")


def test_09_dtype_mismatch():
    prog, b, t = program()
    x = prog.input("x", (), "f32")
    i = prog.input("i", (), "i64")
    with pytest.raises(ProgramError) as e:
        x * i  # DTYPE
    check(e.value, "DTYPE", "different dtypes", ".astype")


def test_10_python_max_in_a_slice_bound():
    prog, b, t = program()
    x = prog.input("x", (), "f32", domain=[t])
    with pytest.raises(ProgramError) as e:
        x[max(0, t - 3) : t + 1]  # PYMAX
    check(e.value, "PYMAX", "pdg.max")


def test_11_dynamic_dim_without_end():
    prog = pdg.Program("p")
    t = prog.dim("t", dynamic="T", max=8)  # NOEND
    prog.output("c", prog.coordinate(t))
    with pytest.raises(ProgramError) as e:
        prog.build()
    check(e.value, "NOEND", "never ends", "until")


def test_12_non_affine_index():
    prog, b, t = program()
    x = prog.input("x", (), "f32", domain=[t])
    with pytest.raises(ProgramError) as e:
        x[t * t]  # AFFINE
    check(e.value, "AFFINE", "not affine")


def test_13_coordinate_over_a_domain_without_its_dim():
    prog, b, t = program()
    with pytest.raises(ProgramError) as e:
        prog.coordinate(t, domain=[b])  # coordinate-domain
    check(e.value, "coordinate-domain", "coordinate(): the domain must include 't'")


def test_fixed_location_replaces_the_users_line_inside_its_block():
    """A program pdg builds for the user (a trainer's) is located where
    fixed_location() says, so its text does not depend on the caller."""
    from pdg.frontend.errors import SourceLoc, fixed_location

    def build():
        prog, b, _ = program()
        prog.output("y", prog.input("x", (), "f32", domain=[b]) * 2.0)
        return prog.to_mlir()

    with fixed_location(SourceLoc("pdg.rl.GRPOTrainer", 0)):
        inside = build()
        with pytest.raises(ProgramError) as e:
            pdg.Program("p").dim("b", 0)
        assert str(e.value).startswith("pdg.rl.GRPOTrainer:0: error: ")
    outside = build()
    assert 'loc("pdg.rl.GRPOTrainer":0:1)' in inside and HERE not in inside
    assert HERE in outside and "GRPOTrainer" not in outside
