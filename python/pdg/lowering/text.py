"""Writing MLIR text for the lowered program: fresh SSA names, index
constants, memref types with their strided layouts, and rank-reducing
subviews. The driver is emitted as text and parsed once; MLIR then checks
every type written here."""

from __future__ import annotations

import re
from dataclasses import dataclass

DYNAMIC = None  # a `?` size or stride


@dataclass(frozen=True)
class MemRef:
    """A memref type: sizes (int or DYNAMIC), element type, and an optional
    strided layout (strides with DYNAMIC entries, offset always dynamic)."""

    shape: tuple
    element: str
    strides: tuple | None = None

    def __str__(self) -> str:
        dims = "".join(f"{'?' if d is DYNAMIC else d}x" for d in self.shape)
        if self.strides is None:
            return f"memref<{dims}{self.element}>"
        strides = ", ".join("?" if s is DYNAMIC else str(s) for s in self.strides)
        return f"memref<{dims}{self.element}, strided<[{strides}], offset: ?>>"

    def identity_strides(self) -> tuple:
        """Row-major strides of an identity-layout memref of this shape."""
        strides, running = [], 1
        for d in reversed(self.shape):
            strides.append(running)
            running = DYNAMIC if running is DYNAMIC or d is DYNAMIC else running * d
        return tuple(reversed(strides))

    def fully_dynamic(self) -> MemRef:
        """The same rank with every size and stride dynamic: any view of this
        rank casts to it."""
        return MemRef((DYNAMIC,) * len(self.shape), self.element, (DYNAMIC,) * len(self.shape))


def symbol(name: str) -> str:
    """`@name`, quoted when it is not a bare identifier (graph and node
    names may hold any character)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return f"@{name}"
    # MLIR's `\XX` (hex) escapes: quotes, backslashes and control characters
    # (a raw newline ends a string literal) would break the text otherwise.
    escaped = "".join(
        f"\\{ord(c):02X}" if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in name
    )
    return f'@"{escaped}"'


def c_identifier(name: str) -> str:
    """`name` made a C identifier, for symbols the support code defines."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


class Writer:
    """Lines of MLIR text with indentation and fresh SSA names."""

    def __init__(self, indent: int = 2, names: list[int] | None = None):
        self.lines: list[str] = []
        self.depth = indent
        self._names = names if names is not None else [0]  # shared by siblings

    def sibling(self) -> Writer:
        """Another writer at this depth whose names never clash with ours."""
        return Writer(self.depth, self._names)

    def fresh(self, hint: str = "v") -> str:
        self._names[0] += 1
        return f"%{hint}{self._names[0]}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, text: str, hint: str = "v") -> str:
        """Emits `%name = text` and returns the name."""
        name = self.fresh(hint)
        self.line(f"{name} = {text}")
        return name

    def const(self, value: int, type_: str = "index") -> str:
        return self.op(f"arith.constant {value} : {type_}", "c")

    def index(self, value: int | str) -> str:
        """An SSA index value for an int or an SSA name."""
        return self.const(value) if isinstance(value, int) else value

    def open(self, text: str) -> None:
        self.line(text)
        self.depth += 1

    def close(self, text: str = "}") -> None:
        self.depth -= 1
        self.line(text)

    def text(self) -> str:
        return "\n".join(self.lines)


def subview(
    w: Writer,
    source: str,
    source_type: MemRef,
    offsets: list,
    sizes: list,
    kept: list[bool],
) -> tuple[str, MemRef]:
    """A unit-stride view of `source`; dims with kept=False must have size 1
    and are dropped. Offsets and sizes are ints or SSA names; an int size
    gives a static size in the view's type."""
    if not sizes:  # a rank-0 memref is its own (only) view
        return source, source_type
    strides = (
        source_type.strides if source_type.strides is not None else source_type.identity_strides()
    )
    shape = tuple(
        s if isinstance(s, int) else DYNAMIC for s, k in zip(sizes, kept, strict=True) if k
    )
    kept_strides = tuple(s for s, k in zip(strides, kept, strict=True) if k)
    result = MemRef(shape, source_type.element, kept_strides)

    def render(items: list) -> str:
        return ", ".join(str(x) for x in items)

    # Offsets are always SSA values: the view's offset is then dynamic, as
    # its type says, whatever the constants are.
    offsets = [w.index(o) for o in offsets]
    name = w.op(
        f"memref.subview {source}[{render(offsets)}] [{render(sizes)}] "
        f"[{render([1] * len(sizes))}] : {source_type} to {result}",
        "view",
    )
    return name, result


def cast(w: Writer, value: str, from_type: MemRef | str, to_type: MemRef | str) -> str:
    if str(from_type) == str(to_type):
        return value
    return w.op(f"memref.cast {value} : {from_type} to {to_type}", "cast")
