"""A context that knows the pdg dialect and every upstream dialect."""

from mlir import ir


def make_context() -> ir.Context:
    """A fresh context with pdg and all upstream dialects registered.

    Each call creates a new context, so the pdg dialect is loaded exactly once
    per context (loading it twice would trip an assertion in MLIR).
    """
    from pdg._ext import register_dialect

    ctx = ir.Context()
    # Single-threaded: MLIR's parallel verifier would call the Python
    # diagnostic handler from worker threads while the parsing thread holds
    # the GIL (a deadlock); pdg graphs are small enough not to need it.
    ctx.enable_multithreading(False)
    register_dialect(ctx, load=True)
    return ctx
