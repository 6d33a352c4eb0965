"""An artifact's memory plan store by store (`pdg memory`), from its
manifest alone: where the planned peak goes, at given launch symbols.

Each store is placed one of four ways, and counts toward the peak once:
  input     the caller's array
  block     a view of the shared block (lowering/arena.py): the block's
            bytes count once, however many stores take turns in it
  own       an allocation of its own (sized by launch symbols, growable,
            an output or a slot an output returns)
  returned  an output that is the slot of another store
            (lowering/returned_slots.py): no bytes of its own
  in place  a value whose update is written over it along a loop
            (lowering/updated_in_place.py): it lives in the update's
            store, no bytes of its own
  donated   a store that is an input's buffer (the same file): the
            input's bytes, counted once as the input
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .formula import evaluate, from_json

# Placements with no bytes of their own (in another store or an input).
BORROWED = ("returned", "in place", "donated")


@dataclass
class StoreBytes:
    value: str
    kind: str  # the storage plan's: point, window, growable, partial, input...
    placed: str  # input | block | own | returned | in place | donated
    extents: list[str]
    point: list[str]
    element: str
    bytes: int


@dataclass
class Breakdown:
    peak: int  # the manifest's planned peak at these symbols
    block: int  # the shared block's bytes
    block_apart: int  # its stores' bytes, each counted on its own (as if unshared)
    stores: list[StoreBytes]  # largest first
    values: dict[str, int]  # the symbols it was evaluated at

    def by_placement(self) -> dict[str, int]:
        """Bytes per placement; the block's stores as the block's size."""
        totals: dict[str, int] = defaultdict(int)
        for s in self.stores:
            if s.placed != "block" and s.placed not in BORROWED:
                totals[s.placed] += s.bytes
        totals["block"] = self.block
        return dict(totals)

    def by_kind(self) -> dict[str, int]:
        """Bytes per store kind, each store counted apart (the block's
        stores at their own size, so the sum exceeds the peak)."""
        totals: dict[str, int] = defaultdict(int)
        for s in self.stores:
            if s.placed not in BORROWED:
                totals[s.kind] += s.bytes
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def breakdown(manifest: dict, values: dict[str, int]) -> Breakdown:
    """The plan of `manifest` at `values` (every symbol its stores name:
    launch symbols and dynamic bounds)."""
    abi = manifest["abi"]
    shared = abi.get("shared", {"bytes": 0, "apart": 0, "stores": []})
    in_block = set(shared["stores"])
    returned = {r["value"] for r in abi.get("returned", [])}
    in_place = {p["value"] for p in abi.get("in_place", [])}
    donated = {d["store"] for d in abi.get("donated", [])}
    stores = []
    for s in manifest["stores"]:
        name = s["value"]
        if name in returned:
            placed, size = "returned", 0
        elif name in in_place:
            placed, size = "in place", 0
        elif name in donated:
            placed, size = "donated", 0
        else:
            placed = "input" if s["kind"] == "input" else "block" if name in in_block else "own"
            size = evaluate(from_json(s["bytes"]), values) or 0
        stores.append(
            StoreBytes(
                value=name,
                kind=s["kind"],
                placed=placed,
                extents=s["extents"],
                point=s["point"],
                element=s["element"],
                bytes=size,
            )
        )
    stores.sort(key=lambda s: -s.bytes)
    peak = evaluate(from_json(manifest["memory"]["peak"]), values) or 0
    return Breakdown(peak, shared["bytes"], shared["apart"], stores, dict(values))
