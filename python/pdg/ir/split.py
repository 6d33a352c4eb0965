"""`--split-input-file`: cut a file at `// -----` lines into chunks that
keep their original line numbers (each chunk is padded with blank lines), so
diagnostics point into the real file."""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = re.compile(r"^\s*// -----\s*$")


@dataclass
class Chunk:
    text: str  # padded: line N of `text` is line N of the file
    first_line: int  # 1-based line of the chunk's first line in the file


def split_input(text: str, split: bool) -> list[Chunk]:
    if not split:
        return [Chunk(text, 1)]
    chunks: list[Chunk] = []
    lines = text.splitlines(keepends=True)
    start = 0
    for i, line in enumerate(lines):
        if _MARKER.match(line):
            chunks.append(_chunk(lines, start, i))
            start = i + 1
    chunks.append(_chunk(lines, start, len(lines)))
    return chunks


def _chunk(lines: list[str], start: int, end: int) -> Chunk:
    return Chunk("\n" * start + "".join(lines[start:end]), start + 1)
