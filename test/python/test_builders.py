"""Building pdg IR from Python: the generated op builders and the
ValueType / AccessAttr classes of the extension."""

from __future__ import annotations

from dataclasses import dataclass

import pdg.ir
import pytest
from mlir import ir
from mlir.dialects import arith, tensor
from pdg.dialects import pdg as P

DYN = ir.ShapedType.get_dynamic_size


# --------------------------------------------------------------------------
# Helpers (all need an active context and location)
# --------------------------------------------------------------------------


def f32_tensor(*shape: int) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), ir.F32Type.get())


def access(num_dims: int, num_symbols: int, exprs, layout) -> P.AccessAttr:
    return P.AccessAttr.get(ir.AffineMap.get(num_dims, num_symbols, list(exprs)), list(layout))


def always_true(num_dims: int, num_symbols: int = 0) -> ir.IntegerSetAttr:
    """The condition of a single-case node: `0 >= 0`."""
    zero = ir.AffineConstantExpr.get(0)
    return ir.IntegerSetAttr.get(ir.IntegerSet.get(num_dims, num_symbols, [zero], [False]))


def array(*attrs) -> ir.ArrayAttr:
    return ir.ArrayAttr.get(list(attrs))


@dataclass
class Built:
    module: ir.Module
    graph: P.GraphOp
    dims: dict
    w: P.InputOp
    x: P.NodeOp
    acc: P.NodeOp
    win: P.NodeOp
    done: P.NodeOp
    reward: P.UdfOp


def build_program(ctx: ir.Context) -> Built:
    """Builds, with the generated builders only:

    pdg.graph @built {
      pdg.dim @n < 8
      pdg.dim @b < launch B max 64
      pdg.dim @t < dynamic T max 256 until %done : ...
      %w = pdg.input "w"
      %x = pdg.node "x" [b, t] (%arg0 = %w[]) { addf }               (one case)
      %acc = pdg.node "acc" [b, t] case (t == 0) ... case (t >= 1) ...  (reads itself)
      %win = pdg.node "win" [b, t] (%arg0 = %x[b, t : t + 3]) -> tensor<3x4xf32>
      %done = pdg.node "done" [b, t] { pdg.point @t ... }
      %reward = pdg.udf "reward" [b] (%acc[b, 0 : T])
      pdg.output ...
    }
    """
    with ctx, ir.Location.unknown():
        t4 = f32_tensor(4)
        vbt = P.ValueType.get(["b", "t"], t4)
        d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
        s0 = ir.AffineSymbolExpr.get(0)
        c0 = ir.AffineConstantExpr.get(0)

        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            graph = P.GraphOp("built")
            # The generated builder does not create the body block (the C++
            # builder does): append it by hand.
            body = graph.body.blocks.append()
        with ir.InsertionPoint(body):
            dims = {
                "n": P.DimOp("n", P.BoundKind.Static, size=8),
                "b": P.DimOp("b", P.BoundKind.Launch, bound="B", size=64),
            }
            w = P.InputOp(P.ValueType.get([], t4), "w")

            # x[b, t] = w + w: one unconditional case.
            x = P.NodeOp(
                vbt, [w.result], array(access(2, 0, [], [])), array(always_true(2)), [], 1, name="x"
            )
            blk = x.cases[0].blocks.append(t4)
            with ir.InsertionPoint(blk):
                P.YieldOp(arith.addf(blk.arguments[0], blk.arguments[0]))

            # acc: case (t == 0) reads x[b, t]; case (t >= 1) reads x[b, t]
            # and acc[b, t - 1]. The self-read operand is patched in after
            # creation since the result does not exist before.
            point = access(2, 0, [d0, d1], [1, 0, 1, 0])
            prev = access(2, 0, [d0, d1 - 1], [1, 0, 1, 0])
            first = ir.IntegerSetAttr.get(ir.IntegerSet.get(2, 0, [d1], [True]))
            later = ir.Attribute.parse("affine_set<(d0, d1) : (d1 - 1 >= 0)>")
            acc = P.NodeOp(
                vbt,
                [x.result, x.result, x.result],
                array(point, point, prev),
                array(first, later),
                [],
                2,
                name="acc",
            )
            acc.operation.operands[2] = acc.result
            b0 = acc.cases[0].blocks.append(t4)
            with ir.InsertionPoint(b0):
                P.YieldOp(b0.arguments[0])
            b1 = acc.cases[1].blocks.append(t4, t4)
            with ir.InsertionPoint(b1):
                P.YieldOp(arith.addf(b1.arguments[0], b1.arguments[1]))

            # win: a slice of 3 steps: the block argument is tensor<3x4xf32>.
            t34 = f32_tensor(3, 4)
            window = access(2, 0, [d0, d1, d1 + 3], [1, 0, 1, 1])
            win = P.NodeOp(
                P.ValueType.get(["b", "t"], t34),
                [x.result],
                array(window),
                array(always_true(2)),
                [],
                1,
                name="win",
            )
            bw = win.cases[0].blocks.append(t34)
            with ir.InsertionPoint(bw):
                P.YieldOp(bw.arguments[0])

            # done[b, t] = (t >= 100), from pdg.point and a tensor op.
            ti1 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
            done = P.NodeOp(
                P.ValueType.get(["b", "t"], ti1),
                [],
                array(),
                array(always_true(2)),
                [],
                1,
                name="done",
            )
            bd = done.cases[0].blocks.append()
            with ir.InsertionPoint(bd):
                idx = ir.IndexType.get()
                pos = P.PointOp(idx, "t").result
                limit = arith.constant(idx, 100)
                cmp = arith.cmpi(arith.CmpIPredicate.uge, pos, limit)
                P.YieldOp(tensor.from_elements(ti1, [cmp]))

            # The dynamic dim needs %done: insert it before the input.
            dims["t"] = P.DimOp(
                "t",
                P.BoundKind.Dynamic,
                bound="T",
                size=256,
                until=done.result,
                ip=ir.InsertionPoint(w),
            )

            reward = P.UdfOp(
                P.ValueType.get(["b"], f32_tensor()),
                "reward",
                [acc.result],
                array(access(1, 1, [d0, c0, s0], [1, 0, 1, 1])),
                ["T"],
            )
            P.OutputOp("acc", acc.result)
            P.OutputOp("win", win.result)
            P.OutputOp("reward", reward.result)
    return Built(module, graph, dims, w, x, acc, win, done, reward)


@pytest.fixture
def built(ctx) -> Built:
    return build_program(ctx)


# --------------------------------------------------------------------------
# ValueType
# --------------------------------------------------------------------------


def test_01_value_type_get_exposes_domain_and_point_type(ctx):
    with ctx, ir.Location.unknown():
        t4 = f32_tensor(4)
        vt = P.ValueType.get(["b", "t"], t4)
        assert vt.domain == ["b", "t"]
        assert vt.point_type == t4
        assert isinstance(vt.point_type, ir.RankedTensorType)
        assert str(vt) == "!pdg.value<[b, t], tensor<4xf32>>"
        assert vt == ir.Type.parse("!pdg.value<[b, t], tensor<4xf32>>")


def test_02_value_type_with_empty_domain(ctx):
    with ctx, ir.Location.unknown():
        vt = P.ValueType.get([], f32_tensor(2, 3))
        assert vt.domain == []
        assert str(vt) == "!pdg.value<[], tensor<2x3xf32>>"


def test_03_value_type_takes_the_point_types_context_outside_with(ctx):
    with ctx, ir.Location.unknown():
        t4 = f32_tensor(4)
    vt = P.ValueType.get(["t"], t4)
    assert vt.context is ctx
    assert vt.domain == ["t"]


def test_04_value_type_rejects_a_dim_listed_twice(ctx):
    with ctx, ir.Location.unknown():
        with pytest.raises(ValueError, match="dimension 'b' appears twice"):
            P.ValueType.get(["b", "t", "b"], f32_tensor(4))


def test_05_value_type_rejects_an_empty_dim_name(ctx):
    with ctx, ir.Location.unknown():
        with pytest.raises(ValueError, match="must be an identifier"):
            P.ValueType.get(["b", ""], f32_tensor(4))


@pytest.mark.parametrize(
    "make_point_type",
    [
        pytest.param(lambda: ir.F32Type.get(), id="scalar-f32"),
        pytest.param(lambda: ir.IndexType.get(), id="index"),
        pytest.param(lambda: ir.UnrankedTensorType.get(ir.F32Type.get()), id="unranked-tensor"),
        pytest.param(lambda: ir.VectorType.get([4], ir.F32Type.get()), id="vector"),
    ],
)
def test_06_value_type_rejects_a_non_ranked_tensor_point_type(ctx, make_point_type):
    with ctx, ir.Location.unknown():
        with pytest.raises(ValueError, match="must be a ranked tensor"):
            P.ValueType.get(["t"], make_point_type())


def test_07_value_type_cast_from_generic_type(ctx):
    with ctx, ir.Location.unknown():
        generic = ir.Type.parse("!pdg.value<[t], tensor<i64>>")
        assert isinstance(generic, P.ValueType)  # parse already downcasts
        cast = P.ValueType(generic)
        assert cast.domain == ["t"]
        assert str(cast.point_type) == "tensor<i64>"
        assert not isinstance(f32_tensor(4), P.ValueType)
        with pytest.raises(ValueError, match="Cannot cast type to ValueType"):
            P.ValueType(f32_tensor(4))


# --------------------------------------------------------------------------
# AccessAttr
# --------------------------------------------------------------------------


def test_08_access_attr_of_points(ctx):
    with ctx, ir.Location.unknown():
        d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
        exprs = ir.AffineMap.get(2, 0, [d0, d1 - 1])
        a = P.AccessAttr.get(exprs, [1, 0, 1, 0])
        assert a.exprs == exprs
        assert a.layout == [1, 0, 1, 0]
        assert a.num_entries == 2
        assert (a.is_slice(0), a.is_slice(1)) == (False, False)
        assert str(a) == "#pdg.access<(d0, d1) : [d0, d1 - 1]>"


def test_09_access_attr_with_slice_and_max_lower_bound(ctx):
    with ctx, ir.Location.unknown():
        d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
        zero = ir.AffineConstantExpr.get(0)
        exprs = ir.AffineMap.get(2, 1, [d0, zero, d1 - 63, d1 + 1])
        a = P.AccessAttr.get(exprs, [1, 0, 2, 1])
        assert a.num_entries == 2
        assert a.layout == [1, 0, 2, 1]
        assert not a.is_slice(0)
        assert a.is_slice(1)
        assert str(a) == "#pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>"
        # The standalone syntax parses back to the same (uniqued) attribute.
        assert ir.Attribute.parse(str(a)) == a


def test_10_access_attr_with_no_entries(ctx):
    with ctx, ir.Location.unknown():
        a = P.AccessAttr.get(ir.AffineMap.get(2, 0, []), [])
        assert a.num_entries == 0
        assert a.layout == []
        assert str(a) == "#pdg.access<(d0, d1) : []>"


@pytest.mark.parametrize(
    "num_exprs, layout, message",
    [
        pytest.param(1, [1], "two counts per entry", id="odd-layout"),
        pytest.param(1, [0, 1], "must be a point", id="slice-without-lower-bound"),
        pytest.param(1, [1, -1], "must be a point", id="negative-count"),
        pytest.param(2, [2, 0], "must be a point", id="point-with-two-exprs"),
        pytest.param(2, [1, 0], "counts 1 expressions but the map has 2", id="count-mismatch"),
    ],
)
def test_11_access_attr_rejects_bad_layouts(ctx, num_exprs, layout, message):
    with ctx, ir.Location.unknown():
        exprs = [ir.AffineDimExpr.get(0)] * num_exprs
        with pytest.raises(ValueError, match=message):
            P.AccessAttr.get(ir.AffineMap.get(2, 0, exprs), layout)


def test_12_access_attr_is_slice_out_of_range_raises_index_error(ctx):
    with ctx, ir.Location.unknown():
        a = access(1, 0, [ir.AffineDimExpr.get(0)], [1, 0])
        with pytest.raises(IndexError, match="out of range"):
            a.is_slice(1)


def test_13_access_attr_parse_downcasts_and_cast_checks(ctx):
    with ctx:
        a = ir.Attribute.parse("#pdg.access<(d0)[s0] : [0 : s0]>")
        assert isinstance(a, P.AccessAttr)
        assert a.is_slice(0) and a.layout == [1, 1]
        assert str(a.exprs) == "(d0)[s0] -> (0, s0)"
        with pytest.raises(ValueError, match="Cannot cast attribute to AccessAttr"):
            P.AccessAttr(ir.StringAttr.get("x"))


@pytest.mark.parametrize(
    "text, kind, extents, symbols",
    [
        ("#pdg.store<window, [B, 64]>", "window", ["B", "64"], ["B"]),
        ("#pdg.store<growable, [B * 2 + 1, T, 8]>", "growable", ["B * 2 + 1", "T", "8"],
         ["B", "T"]),
        ("#pdg.store<point, []>", "point", [], []),
        ("#pdg.store<full, [T floordiv 16, max_len]>", "full", ["T floordiv 16", "max_len"],
         ["T", "max_len"]),
    ],
)  # fmt: skip
def test_13b_store_attr_reads_kind_and_extent_formulas(ctx, text, kind, extents, symbols):
    with ctx:
        a = ir.Attribute.parse(text)
        assert isinstance(a, P.StoreAttr)
        assert (a.kind, a.extents, a.symbols) == (kind, extents, symbols)
        with pytest.raises(ValueError, match="Cannot cast attribute to StoreAttr"):
            P.StoreAttr(ir.StringAttr.get("x"))


# --------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------


def test_14_built_program_verifies(built):
    assert built.module.operation.verify()


def test_15_built_program_prints_dims_inputs_and_single_case_node(built):
    text = str(built.module)
    assert "pdg.graph @built {" in text
    assert "pdg.dim @n < 8\n" in text
    assert "pdg.dim @b < launch B max 64\n" in text
    assert "pdg.dim @t < dynamic T max 256 until %done : !pdg.value<[b, t], tensor<i1>>\n" in text
    assert '%w = pdg.input "w" : !pdg.value<[], tensor<4xf32>>' in text
    assert (
        '%x = pdg.node "x" [b, t] (%arg0 = %w[] : !pdg.value<[], tensor<4xf32>>) '
        "-> tensor<4xf32> {" in text
    )
    assert "arith.addf %arg0, %arg0 : tensor<4xf32>" in text
    # Declaration order is kept: the dynamic dim was inserted before %w.
    assert text.index("pdg.dim @t") < text.index('pdg.input "w"') < text.index('pdg.node "x"')


def test_16_built_program_prints_multi_case_node(built):
    text = str(built.module)
    assert '%acc = pdg.node "acc" [b, t] -> tensor<4xf32>\n' in text
    assert "case (t == 0) (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<4xf32>>) {" in text
    assert (
        "case (t >= 1) (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<4xf32>>, "
        "%arg1 = %acc[b, t - 1] : !pdg.value<[b, t], tensor<4xf32>>) {" in text
    )
    assert "arith.addf %arg0, %arg1 : tensor<4xf32>" in text
    assert text.index("case (t == 0)") < text.index("case (t >= 1)")


def test_17_built_program_prints_slice_point_udf_and_outputs(built):
    text = str(built.module)
    assert (
        '%win = pdg.node "win" [b, t] (%arg0 = %x[b, t : t + 3] : '
        "!pdg.value<[b, t], tensor<4xf32>>) -> tensor<3x4xf32> {" in text
    )
    assert '%done = pdg.node "done" [b, t] -> tensor<i1> {' in text
    assert "pdg.point @t : index" in text
    assert "tensor.from_elements" in text
    assert (
        '%reward = pdg.udf "reward" [b] (%acc[b, 0 : T] : '
        "!pdg.value<[b, t], tensor<4xf32>>) -> tensor<f32>" in text
    )
    assert 'pdg.output "acc" %acc : !pdg.value<[b, t], tensor<4xf32>>' in text
    assert 'pdg.output "reward" %reward : !pdg.value<[b], tensor<f32>>' in text


def test_18_built_program_round_trips_through_the_parser(ctx, built):
    text = str(built.module)
    reparsed = pdg.ir.parse_text(text, "built.mlir", ctx)
    assert str(reparsed) == text
    generic = built.module.operation.get_asm(print_generic_op_form=True)
    assert '"pdg.node"' in generic and "#pdg.access<(d0, d1) : [d0, d1 - 1]>" in generic
    from_generic = pdg.ir.parse_text(generic, "built-generic.mlir", ctx)
    assert str(from_generic) == text
    assert from_generic.operation.get_asm(print_generic_op_form=True) == generic


def test_19_results_are_downcast_to_value_type(built):
    for value in (built.w.result, built.x.result, built.acc.result, built.reward.result):
        assert type(value.type) is P.ValueType, type(value.type)
    assert built.acc.result.type.domain == ["b", "t"]
    assert built.reward.result.type.domain == ["b"]
    assert str(built.reward.result.type.point_type) == "tensor<f32>"
    assert str(built.done.result.type.point_type) == "tensor<i1>"
    # Operands read back through the op are downcast too.
    assert all(isinstance(v.type, P.ValueType) for v in built.acc.inputs)


def test_20_block_arguments_have_the_accessed_types(built):
    def arg_types(node, case):
        return [str(a.type) for a in node.cases[case].blocks[0].arguments]

    assert arg_types(built.x, 0) == ["tensor<4xf32>"]
    assert arg_types(built.acc, 0) == ["tensor<4xf32>"]
    assert arg_types(built.acc, 1) == ["tensor<4xf32>", "tensor<4xf32>"]
    assert arg_types(built.win, 0) == ["tensor<3x4xf32>"]
    assert arg_types(built.done, 0) == []


def test_21_op_accessors_read_back_attributes(built):
    acc = built.acc
    assert acc.name.value == "acc"
    assert len(acc.cases) == 2
    assert list(acc.inputs) == [built.x.result, built.x.result, acc.result]
    accesses = list(acc.accesses)
    assert all(isinstance(a, P.AccessAttr) for a in accesses)
    assert [a.layout for a in accesses] == [[1, 0, 1, 0]] * 3
    assert str(accesses[2].exprs) == "(d0, d1) -> (d0, d1 - 1)"
    assert [str(c) for c in acc.conditions] == [
        "affine_set<(d0, d1) : (d1 == 0)>",
        "affine_set<(d0, d1) : (d1 - 1 >= 0)>",
    ]
    assert list(built.reward.symbols) == [ir.StringAttr.get("T", context=built.module.context)]
    assert built.reward.callee.value == "reward"


def test_22_dim_op_attributes(built):
    n, b, t = built.dims["n"], built.dims["b"], built.dims["t"]
    assert (n.sym_name.value, n.size.value, n.bound, n.until) == ("n", 8, None, None)
    assert str(n.kind) == "#pdg<bound static>"
    assert (b.bound.value, b.size.value, str(b.kind)) == ("B", 64, "#pdg<bound launch>")
    assert str(t.kind) == "#pdg<bound dynamic>"
    assert t.until == built.done.result


def test_23_slice_with_symbolic_extent_gives_dynamic_leading_dim(ctx):
    """`%x[max(0, t - 2) : t + 1]` has no constant size: tensor<?x4xf32>."""
    with ctx, ir.Location.unknown():
        t4 = f32_tensor(4)
        d0 = ir.AffineDimExpr.get(0)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            graph = P.GraphOp("g")
            body = graph.body.blocks.append()
        with ir.InsertionPoint(body):
            P.DimOp("t", P.BoundKind.Static, size=16)
            x = P.input(P.ValueType.get(["t"], t4), "x")
            dyn = ir.RankedTensorType.get([DYN(), 4], ir.F32Type.get())
            zero = ir.AffineConstantExpr.get(0)
            node = P.NodeOp(
                P.ValueType.get(["t"], dyn),
                [x],
                array(access(1, 0, [zero, d0 - 2, d0 + 1], [2, 1])),
                array(always_true(1)),
                [],
                1,
                name="win",
            )
            blk = node.cases[0].blocks.append(dyn)
            with ir.InsertionPoint(blk):
                P.yield_(blk.arguments[0])
            P.output("win", node.result)
        assert module.operation.verify()
        text = str(module)
    assert (
        '%win = pdg.node "win" [t] (%arg0 = %x[max(0, t - 2) : t + 1] : '
        "!pdg.value<[t], tensor<4xf32>>) -> tensor<?x4xf32>" in text
    )


def test_24_wrong_block_argument_type_is_a_verifier_error(ctx):
    """A slice read gives the body a leading dim: tensor<4xf32> is wrong."""
    with ctx, ir.Location.file("built.mlir", 7, 3):
        t4 = f32_tensor(4)
        d0 = ir.AffineDimExpr.get(0)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            graph = P.GraphOp("g")
            body = graph.body.blocks.append()
        with ir.InsertionPoint(body):
            P.DimOp("t", P.BoundKind.Static, size=16)
            x = P.input(P.ValueType.get(["t"], t4), "x")
            node = P.NodeOp(
                P.ValueType.get(["t"], t4),
                [x],
                array(access(1, 0, [d0, d0 + 2], [1, 1])),
                array(always_true(1)),
                [],
                1,
                name="bad",
            )
            blk = node.cases[0].blocks.append(t4)  # should be tensor<2x4xf32>
            with ir.InsertionPoint(blk):
                P.yield_(blk.arguments[0])
        with pytest.raises(ir.MLIRError) as info:
            module.operation.verify()
    [diag] = info.value.error_diagnostics
    assert "body argument #0 of case #0 has type 'tensor<4xf32>'" in diag.message
    assert "gives 'tensor<2x4xf32>'" in diag.message
    assert str(diag.location) == 'loc("built.mlir":7:3)'


def _malformed(ctx, kind: str) -> ir.Module:
    """A graph with one deliberately malformed op, built from Python."""
    with ctx, ir.Location.unknown():
        t4 = f32_tensor(4)
        vt = P.ValueType.get(["t"], t4)
        d0 = ir.AffineDimExpr.get(0)
        point = access(1, 0, [d0], [1, 0])
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            graph = P.GraphOp("g")
            body = graph.body.blocks.append()
        with ir.InsertionPoint(body):
            P.DimOp("t", P.BoundKind.Static, size=4)
            w = P.input(vt, "w")

            def node(accesses, conditions, num_cases, arg_types):
                n = P.NodeOp(vt, [w], array(*accesses), array(*conditions), [], num_cases)
                for k in range(num_cases):
                    blk = n.cases[k].blocks.append(*arg_types)
                    with ir.InsertionPoint(blk):
                        P.yield_(blk.arguments[0])

            if kind == "missing-access":
                node([], [always_true(1)], 1, [t4])
            elif kind == "missing-condition":
                node([point], [], 1, [t4])
            elif kind == "extra-block-argument":
                node([point], [always_true(1)], 1, [t4, t4])
            elif kind == "access-over-wrong-dims":
                node([access(2, 0, [d0], [1, 0])], [always_true(1)], 1, [t4])
            elif kind == "non-affine-access":
                node([access(1, 0, [d0 * d0], [1, 0])], [always_true(1)], 1, [t4])
            elif kind == "yield-outside-node":
                P.yield_(w)
            elif kind == "static-dim-without-size":
                P.DimOp("s", P.BoundKind.Static)
            elif kind == "unknown-domain-dim":
                P.input(P.ValueType.get(["zz"], t4), "q")
    return module


@pytest.mark.parametrize(
    "kind, message",
    [
        ("missing-access", "has 1 inputs but 0 accesses"),
        ("missing-condition", "has 1 cases but 0 conditions"),
        ("extra-block-argument", "case bodies take 2 arguments in all, but the node has 1 inputs"),
        ("access-over-wrong-dims", "access #0 is written over 2 dims"),
        ("non-affine-access", "must be affine"),
        ("yield-outside-node", "expects parent op 'pdg.node'"),
        ("static-dim-without-size", "static dim 's' needs a size"),
        ("unknown-domain-dim", "uses unknown dim 'zz'"),
    ],
)
def test_25_malformed_built_ops_are_verifier_errors_not_crashes(ctx, kind, message):
    module = _malformed(ctx, kind)
    with pytest.raises(ir.MLIRError) as info:
        module.operation.verify()
    messages = [d.message for d in info.value.error_diagnostics]
    assert any(message in m for m in messages), messages
    # Printing an invalid module falls back to the generic form, no crash.
    assert '"pdg.graph"' in str(module)
