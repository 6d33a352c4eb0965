"""A flat profile of a `perf record` of a process that ran a compiled pdg
program, with the program's own functions named.

The runtime loads an artifact's library from a memfd (a private copy, see
pdg.runtime.loader), so perf cannot name the functions in it. This script
maps each sample that fell in such a mapping back to the library file's
symbols (its LOAD segments from `readelf`, its functions from `nm`); other
samples keep perf's names.

    perf record -F 299 -D 22000 -o perf.data python bench/grpo_calls.py --one \\
        --config gpt2-124m --prompts 4 --group 8 --new-tokens 8 --cache DIR --calls 5
    python bench/perf_symbols.py perf.data DIR/grpo-*.pdgx/program.so --top 40

Prints the share of samples per function, largest first (`pdg:` before the
compiled program's functions). With `--function NAME` (a function of the
compiled program, e.g. grpo_div_0_into), prints instead where in it the
samples fell: its hottest instructions, from `objdump -d` of the library
(a loop left scalar shows as `vmulss`/`vfmadd213ss` at the top). The
samples of each thread are counted at the end; `--tid N` keeps one
thread's (the caller's against the pool worker's: what the worker lacks,
and its `pdg_poll`, is time it waited).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import subprocess
from pathlib import Path


def run(*cmd: str) -> list[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()


def load_segments(library: str) -> list[tuple[int, int, int]]:
    """(file offset, virtual address, size in the file) of each LOAD segment."""
    out = []
    for line in run("readelf", "-lW", library):
        p = line.split()
        if p and p[0] == "LOAD":
            out.append((int(p[1], 16), int(p[2], 16), int(p[4], 16)))
    return out


def functions(library: str) -> tuple[list[int], list[str]]:
    """The library's functions by address, sorted."""
    found = []
    for line in run("nm", "-n", library):
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            found.append((int(p[0], 16), p[2]))
    found.sort()
    return [a for a, _ in found], [n for _, n in found]


def memfd_mappings(data: str, memfd: str) -> list[tuple[int, int, int]]:
    """(start, end, file offset) of the process's mappings of the memfd."""
    out = []
    for line in run("perf", "script", "-i", data, "--show-mmap-events", "-F", "ip,dso"):
        if "MMAP" in line and "memfd" in line and memfd in line:
            m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|\d+)", line)
            if m:
                start, length = int(m.group(1), 16), int(m.group(2), 16)
                out.append((start, start + length, int(m.group(3), 0)))
    return out


def print_instructions(library: str, function: str, hits: collections.Counter, top: int) -> None:
    """The `top` instructions of `function` with the most samples (`hits`:
    samples by virtual address), with their share of the function's."""
    text = {}
    for line in run("objdump", "-d", "--no-show-raw-insn", f"--disassemble={function}", library):
        address, _, instruction = line.strip().partition(":")
        if instruction and re.fullmatch(r"[0-9a-f]+", address):
            text[int(address, 16)] = instruction.strip()
    total = sum(hits.values())
    for va, n in hits.most_common(top):
        print(f"{100 * n / max(total, 1):6.2f}%  {va:x}  {text.get(va, '?')}")
    print(f"{total} samples in {function}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", help="the perf.data file")
    parser.add_argument("library", help="the artifact's program.so")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--memfd", help="the memfd's name (default: pdg-<the artifact's directory name>)"
    )
    parser.add_argument(
        "--function", help="a compiled function: print its hottest instructions instead"
    )
    parser.add_argument("--tid", help="only this thread's samples (ids: the counts at the end)")
    args = parser.parse_args()
    # The runtime names each memfd after its artifact: another program the
    # process loaded (the greedy evaluator's) is not mapped to these symbols.
    memfd = args.memfd or f"pdg-{Path(args.library).parent.name}"
    segments = load_segments(args.library)
    addresses, names = functions(args.library)
    mappings = memfd_mappings(args.data, memfd)
    count: collections.Counter = collections.Counter()
    hits: collections.Counter = collections.Counter()  # --function's samples by address
    total = 0
    threads: collections.Counter = collections.Counter()  # samples by thread id
    for line in run("perf", "script", "-i", args.data, "-F", "tid,ip,sym,dso"):
        p = line.split()
        if not p or "MMAP" in line:
            continue
        tid = p.pop(0)
        threads[tid] += 1
        if args.tid is not None and tid != args.tid:
            continue
        total += 1
        ip = int(p[0], 16)
        dso = line.split("(", 1)[1] if "(" in line else "?"
        if "memfd" not in dso:
            count[(" ".join(p[1:-1]) or "?") + " " + dso.split("/")[-1].rstrip(")")] += 1
            continue
        name = "?"
        for start, end, offset in mappings:
            if start <= ip < end:
                at = ip - start + offset  # in the file
                va = next((at - o + v for o, v, n in segments if o <= at < o + n), at)
                k = bisect.bisect_right(addresses, va) - 1
                name = names[k] if k >= 0 else "?"
                if name == args.function:
                    hits[va] += 1
        count["pdg:" + name] += 1
    if args.function:
        print_instructions(args.library, args.function, hits, args.top)
        return
    for name, n in count.most_common(args.top):
        print(f"{100 * n / max(total, 1):6.2f}%  {name}")
    print(f"{total} samples")
    print("by thread: " + ", ".join(f"{tid} {n}" for tid, n in threads.most_common()))


if __name__ == "__main__":
    main()
