"""Node bodies as GPU kernels: NVVM, then PTX for each architecture.

The bufferized bodies (from pdg-lower-to-loops) have their linalg ops
turned into parallel loops, mapped to GPU blocks and threads, and outlined
as kernels; all kernels are gathered into one gpu.module so that each
architecture gets a single PTX file, lowered to NVVM and serialized with
gpu-module-to-binary. sm_90 needs `+ptx80` (without it this MLIR aborts).

What this does not do yet: the host side. The entry function still runs
the bodies on the CPU; launching these kernels from it (device stores,
gpu.launch_func lowered against a launch table the runtime fills from
cuda-python) is the next step."""

from __future__ import annotations

from mlir import ir

from pdg.passes.pipelines import TO_KERNELS, run_registered, to_ptx

# sm_80 takes PTX 7.0+, sm_90 needs 7.8+: one PTX ISA version for both.
ARCHITECTURES = {"sm_80": "+ptx80", "sm_90": "+ptx80"}


def _gather_kernels(module: ir.Module) -> int:
    """Moves every kernel into the first gpu.module and points each
    launch at it. Returns the number of kernels."""
    gpu_modules = [
        op.operation for op in module.body.operations if op.operation.name == "gpu.module"
    ]
    if not gpu_modules:
        return 0
    target = gpu_modules[0]
    target_name = ir.StringAttr(target.attributes["sym_name"]).value
    body = target.regions[0].blocks[0]
    # Kernels take their module's name, which outlining made unique (two
    # launches in one body give two modules holding same-named kernels).
    for gm in gpu_modules:
        name = gm.attributes["sym_name"]
        for op in list(gm.regions[0].blocks[0].operations):
            if op.operation.name == "gpu.func":
                op.operation.attributes["sym_name"] = name
            if gm is not target:
                body.append(op.detach_from_parent())
    for other in gpu_modules[1:]:
        other.erase()

    def retarget(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.launch_func":
            module_name = ir.SymbolRefAttr(op.attributes["kernel"]).value[0]
            op.attributes["kernel"] = ir.SymbolRefAttr.get([target_name, module_name])
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(retarget)
    return sum(1 for op in body.operations if op.operation.name == "gpu.func")


def kernels_ptx(lowered_text: str, context: ir.Context) -> tuple[dict[str, str], int]:
    """PTX per architecture for the bodies of a module lowered by
    pdg-lower-to-loops (given as text), and the number of kernels."""
    with context, ir.Location.unknown():
        module = ir.Module.parse(lowered_text)
    for op in list(module.body.operations):
        if "llvm.emit_c_interface" in op.operation.attributes:
            op.operation.erase()  # the entry (and its external callees) stays on the host
    run_registered(module, TO_KERNELS)
    count = _gather_kernels(module)
    if not count:
        return {}, 0
    kernels = str(module)  # outlined once; each architecture lowers a copy
    ptx: dict[str, str] = {}
    for chip, features in ARCHITECTURES.items():
        with context, ir.Location.unknown():
            copy = ir.Module.parse(kernels)
        run_registered(copy, to_ptx(chip, features))
        binary = next(op for op in copy.body.operations if op.operation.name == "gpu.binary")
        ptx[chip] = _object_text(ir.ArrayAttr(binary.operation.attributes["objects"])[0])
    return ptx, count


def _object_text(attr: ir.Attribute) -> str:
    """The serialized text of a #gpu.object attribute."""
    from mlir.dialects import gpu

    return bytes(gpu.ObjectAttr(attr).object).decode()
