"""Helpers for the interpreter tests: program paths and runners."""

from __future__ import annotations

from pathlib import Path

from pdg.interpreter import Result, interpret

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[3]


def program(name: str) -> Path:
    return PROGRAMS / f"{name}.mlir"


def run(name: str, inputs: dict, **kwargs) -> Result:
    return interpret(program(name), inputs, **kwargs)


def body_program(body: str, args: dict[str, str], result: str) -> str:
    """A one-node graph over a single point: inputs named like `args` (name ->
    tensor type), bound to block arguments %name; `body` ends by defining
    %res of type `result`."""
    inputs = "\n".join(
        f'  %in_{n} = pdg.input "{n}" : !pdg.value<[], {t}>' for n, t in args.items()
    )
    reads = ", ".join(f"%{n} = %in_{n}[] : !pdg.value<[], {t}>" for n, t in args.items())
    reads = f" ({reads})" if reads else ""
    return f"""pdg.graph @g {{
{inputs}
  %r = pdg.node "r" []{reads} -> {result} {{
{body}
    pdg.yield %res : {result}
  }}
  pdg.output "r" %r : !pdg.value<[], {result}>
}}
"""


def run_body(body: str, args: dict[str, tuple[str, object]], result: str, **kwargs):
    """Runs `body_program` on the given (type, array) arguments; the output."""
    from pdg.ir import make_context, parse_text

    text = body_program(body, {n: t for n, (t, _) in args.items()}, result)
    module = parse_text(text, "<test>", make_context())
    out = interpret(module, {n: a for n, (_, a) in args.items()}, **kwargs)
    return out.outputs["r"]
