"""Batched decoding with a GPT-2-style model written as one pdg program.

    python examples/decode.py                        # greedy, full attention
    python examples/decode.py --attention window:8 --sample --seed 3
    python examples/decode.py --attention block:4 --prompts "5 9 2" "7" "1 2 3 4"
    python examples/decode.py --engine both          # compiled and interpreted, compared

The program (pdg/programs/decode.py) is built with the frontend, verified
as a pdg.graph, compiled ahead of time to an artifact (library + kernels +
manifest) and run by the runtime with random seeded weights; `--engine
interpret` runs the reference interpreter instead, `--engine both` runs
both and checks they agree. Each sequence stops at its own EOS; outputs
come back ragged.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pdg.runtime
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.nn import AttentionPattern, GPTConfig
from pdg.programs import build_decode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attention", default="full", help="full | window:W | block:S")
    parser.add_argument("--vocab", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=None)
    parser.add_argument("--max-len", type=int, default=24)
    parser.add_argument("--eos", type=int, default=55, help="end-of-sequence token id")
    parser.add_argument("--sample", action="store_true", help="sample instead of greedy")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0, help="weights and sampling seed")
    parser.add_argument("--prompts", nargs="+", default=["3 14 15 9", "26 5", "35 8 9 7 9 3"])
    parser.add_argument("--print-ir", action="store_true", help="print the pdg.graph")
    parser.add_argument("--emit-ir", metavar="FILE.mlir", help="write the pdg.graph and stop")
    parser.add_argument(
        "--engine",
        choices=["compiled", "interpret", "both"],
        default="compiled",
        help="run the compiled artifact, the interpreter, or both (and compare)",
    )
    parser.add_argument("--artifact", metavar="DIR.pdgx", help="where to write the artifact")
    args = parser.parse_args()

    config = GPTConfig(
        vocab=args.vocab,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        n_kv_heads=args.kv_heads,
        max_positions=args.max_len,
        pattern=AttentionPattern.parse(args.attention),
    )
    prompts = [[int(x) for x in p.split()] for p in args.prompts]
    decode = build_decode(
        config,
        eos=args.eos,
        max_len=args.max_len,
        prompt_width=max(len(p) for p in prompts),
        sample_seed=args.seed if args.sample else None,
        temperature=args.temperature,
    )
    start = time.perf_counter()
    module = decode.program.build()
    built = time.perf_counter() - start
    if args.print_ir:
        print(module)
    if args.emit_ir:
        with open(args.emit_ir, "w") as f:
            f.write(str(module))
        print(f"wrote {args.emit_ir}")
        return
    weights = decode.model.init_weights(seed=args.seed, scale=0.5)
    inputs = decode.inputs(weights, prompts)
    symbols = {"B": len(prompts)}
    print(f"pdg.graph @decode: {str(module).count('pdg.node')} nodes, built in {built:.2f} s")
    results = {}
    if args.engine in ("compiled", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(args.artifact or Path(tmp) / "decode.pdgx")
            compiled = compile_module(parse_text(str(module), "decode", make_context()), path)
            start = time.perf_counter()
            ran = pdg.runtime.load(path).run(inputs, symbols)
            seconds = time.perf_counter() - start
        phases = ", ".join(f"{k} {v:.2f} s" for k, v in compiled.seconds.items())
        how = (
            "copied from the compile cache ($PDG_COMPILE_CACHE)"
            if compiled.cached
            else f"compiled in {sum(compiled.seconds.values()):.2f} s ({phases})"
        )
        print(f"{how}; ran in {seconds:.4f} s")
        results["compiled"] = (ran.outputs, ran.bounds)
    if args.engine in ("interpret", "both"):
        start = time.perf_counter()
        result = interpret(module, inputs, symbols=symbols)
        print(f"interpreted in {time.perf_counter() - start:.2f} s")
        results["interpreted"] = (result.outputs, result.bounds)
    outputs, bounds = next(iter(results.values()))
    lengths = np.atleast_1d(bounds["T"])
    for b, prompt in enumerate(prompts):
        tokens = np.asarray(outputs["tokens"][b])
        generated = tokens[len(prompt) - 1 :]
        print(f"  [{b}] prompt {prompt} -> {generated.tolist()}  (T = {int(lengths[b])})")
    if len(results) == 2:
        (a, ta), (c, tc) = results.values()
        same = np.array_equal(np.atleast_1d(ta["T"]), np.atleast_1d(tc["T"])) and all(
            np.array_equal(np.asarray(x), np.asarray(y))
            for x, y in zip(a["tokens"], c["tokens"], strict=True)
        )
        if not same:
            raise SystemExit("decode.py: the compiled and interpreted tokens differ")
        print("compiled and interpreted tokens agree")


if __name__ == "__main__":
    from pdg.frontend import ProgramError
    from pdg.interpreter import InterpreterError
    from pdg.lowering.artifact import CompileError

    try:
        main()
    except (ProgramError, InterpreterError, CompileError, pdg.runtime.RunError, ValueError) as e:
        raise SystemExit(f"decode.py: {e}") from None
