"""What a run returns, and its one-screen summary."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

Output = np.ndarray | list[np.ndarray]


@dataclass
class Result:
    """`outputs`: name -> array of shape (*extents, *point shape), or, when a
    dynamic dim has different lengths per group, a list of one array per
    group (never padded). `bounds`: dynamic bound symbol -> its length (an
    int), or an array of per-group lengths shaped like the group dims.
    `stats`: points evaluated per node and udf."""

    outputs: dict[str, Output]
    bounds: dict[str, int | np.ndarray]
    stats: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [describe_output(name, value) for name, value in self.outputs.items()]
        for name, value in self.bounds.items():
            shown = value.tolist() if isinstance(value, np.ndarray) else value
            lines.append(f"bound {name} = {shown}")
        return "\n".join(lines)


def checksum(arrays: list[np.ndarray]) -> str:
    """CRC-32 of the arrays' bytes in order: equal outputs, equal checksums."""
    crc = 0
    for a in arrays:
        crc = zlib.crc32(np.ascontiguousarray(a).tobytes(), crc)
    return f"{crc:08x}"


def describe_output(name: str, value: Output) -> str:
    if isinstance(value, list):
        shapes = [list(a.shape) for a in value]
        dtype = value[0].dtype if value else "?"
        return (
            f"output {name}: ragged, {len(value)} groups of shapes {shapes}, {dtype}, "
            f"checksum {checksum(value)}"
        )
    return f"output {name}: shape {list(value.shape)}, {value.dtype}, checksum {checksum([value])}"
