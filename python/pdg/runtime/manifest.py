"""The artifact's manifest: what `pdg compile` wrote and what the runtime
checks before running anything. An artifact is a directory:

    manifest.json   this description (format version, versions, target,
                    symbols, entry signature, stores, udfs, parts + sha256)
    program.so      the host library (entry `_mlir_ciface_<entry>`)
    kernels/sm_*.ptx  GPU kernels of the node bodies, one PTX file per
                    architecture (the host path does not launch them yet)

The manifest is written with sorted keys and no timestamps, so the same
program compiles to a byte-identical manifest.

What the runtime trusts: program.so is native code, and loading it runs
it, so an artifact is as trusted as any library. What it does not trust is
the manifest beside it: every part must lie inside the artifact and match
its sha256, and what the library is run with (its entry's signature,
symbols, stores and memory plan) must equal the description compiled into
the library itself (`DESCRIBED`, compared by the loader), so an edited
manifest cannot make the compiled code read or write past its buffers."""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
LIBRARY = "program.so"
# The keys the library describes itself (pdg.lowering.trampolines).
DESCRIBED = ("abi", "graph", "symbols", "stores", "memory", "udfs", "index_checks")


class ArtifactError(Exception):
    """The artifact cannot be used: missing, damaged, or built for another
    version or target. The message says which and what to do."""


def host_target() -> str:
    return f"{platform.machine()}-{platform.system().lower()}"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dump(manifest: dict) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def read_manifest(artifact: Path, pdg_version: str) -> dict:
    """The manifest of `artifact`, after checking its format, versions,
    target and every part's sha256."""
    path = artifact / MANIFEST
    if not artifact.is_dir() or not path.is_file():
        raise ArtifactError(
            f"{artifact} is not a pdg artifact (no {MANIFEST}); create one with "
            "`pdg compile PROGRAM -o OUT.pdgx`"
        )
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArtifactError(f"{path} is damaged ({e}); compile the program again") from None
    if not isinstance(manifest, dict):
        raise ArtifactError(f"{path} is damaged (not a JSON object); compile the program again")
    found = manifest.get("format")
    if found != FORMAT_VERSION:
        raise ArtifactError(
            f"{artifact} has manifest format {found!r}, this runtime reads format "
            f"{FORMAT_VERSION}; compile the program again with this pdg"
        )
    if manifest.get("pdg_version") != pdg_version:
        raise ArtifactError(
            f"{artifact} was compiled by pdg {manifest.get('pdg_version')}, this is pdg "
            f"{pdg_version}; compile the program again with this pdg"
        )
    if manifest.get("target") != host_target():
        raise ArtifactError(
            f"{artifact} was compiled for {manifest.get('target')}, this machine is "
            f"{host_target()}; compile it on (or for) this machine"
        )
    parts = manifest.get("parts")
    if not isinstance(parts, dict) or LIBRARY not in parts:
        raise ArtifactError(f"{path} lists no {LIBRARY}; compile the program again")
    for name, digest in sorted(parts.items()):
        part = _inside(artifact, name, path)
        if not isinstance(digest, str):
            raise ArtifactError(f"{path}: the sha256 of part '{name}' is not a string")
        if not part.is_file():
            raise ArtifactError(f"{artifact} is missing {name}; compile the program again")
        if sha256(part) != digest:
            raise ArtifactError(
                f"{part} does not match its sha256 in the manifest (changed or damaged "
                "after compilation); compile the program again"
            )
    return manifest


def _inside(artifact: Path, name: str, manifest: Path) -> Path:
    """The part `name` of the artifact; refuses a name that leaves it (an
    absolute path, `..`, or a symlink out)."""
    relative = Path(name) if isinstance(name, str) else None
    if (
        relative is None
        or not name
        or relative.is_absolute()
        or ".." in relative.parts
        or "\\" in name
    ):
        raise ArtifactError(
            f"{manifest} names a part outside the artifact ({name!r}); compile the program again"
        )
    part = artifact / relative
    root = artifact.resolve()
    if part.exists() and root not in part.resolve().parents:
        raise ArtifactError(
            f"{manifest}: part '{name}' resolves outside the artifact ({part.resolve()}); "
            "compile the program again"
        )
    return part
