"""Each node body's destination is declared apart from the views it reads.

A body (`<node>_into`) writes its value into its destination, its last
argument; the driver never passes it a view that another argument reaches
(a value updated in place is read through the destination itself). LLVM
cannot see that: without it, a loop of a small constant trip count, which
LLVM unrolls whole before vectorizing, stayed scalar (an elementwise op over
a row of 32 in GRPO at d_model 32: one `vmulss` per element). So
pdg.lowering.native marks the destination's aligned pointer `noalias` in
the LLVM dialect. Checked here on a compiled decode program: every body
has that one parameter marked, and it is the last pointer of its signature
(a memref becomes its allocated and aligned pointers, offset, sizes and
strides); its outputs equal the interpreter's (test_matvec_split and the
rest of the suite check the numbers of every other program)."""

from __future__ import annotations

import re

import numpy as np
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.runtime import load

SHAPE = {"vocab": 64, "d_model": 32, "heads": 2, "layers": 1, "max_len": 8}


def test_every_body_marks_its_destination_apart(tmp_path, monkeypatch):
    # Compiled here, never copied from a compile cache: the lowered module
    # is what is read.
    monkeypatch.delenv("PDG_COMPILE_CACHE", raising=False)
    decode = small_decode("full", **SHAPE, eos=None, prompt_width=2, response_limit=True)
    text = str(decode.program.build())
    module = parse_text(text, "decode", make_context())
    compile_module(module, tmp_path / "d.pdgx", gpu=False)
    signature = r"llvm\.func internal @(\w+_into)\((.*?)\) attributes \{(.*?)\}"
    bodies = re.findall(signature, str(module))
    bodies = [(name, params) for name, params, attrs in bodies if "pdg.node" in attrs]
    assert len(bodies) > 5
    for name, params in bodies:
        params = re.split(r", (?=%arg)", params)
        marked = [i for i, p in enumerate(params) if "llvm.noalias" in p]
        pointers = [i for i, p in enumerate(params) if p.split(": ")[1].startswith("!llvm.ptr")]
        assert marked == [pointers[-1]], (name, params)

    weights = decode.model.init_weights(seed=3, scale=0.5)
    inputs = decode.inputs(weights, [[1, 2], [5]], [4, 4])
    ref = interpret(parse_text(text, "ref", make_context()), inputs, symbols={"B": 2})
    run = load(tmp_path / "d.pdgx").run(inputs, {"B": 2})
    for a, b in zip(ref.outputs["logits"], run.outputs["logits"], strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)
