"""bench/sgemm_shapes.py reads the arguments a perf uprobe recorded for
each sgemm call (the lines `perf script` prints) and counts them by shape."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from sgemm_shapes import count  # noqa: E402

PROBE = "probe_libscipy_openblas:scipy_cblas_sgemm: (7f76b5096170)"


def test_calls_are_counted_by_shape_and_transposes():
    lines = [
        f"  python  3075 [001] 33685.407091: {PROBE} M=16 N=256 K=768 TA=111 TB=111",
        f"  python  3075 [001] 33685.407601: {PROBE} M=16 N=256 K=768 TA=111 TB=111",
        f"  python  3075 [000] 33685.407702: {PROBE} M=768 N=128 K=288 TA=112 TB=111",
        "  python  3075 [000] 33685.407800: some other event",
    ]
    assert count(lines) == {(16, 256, 768, False, False): 2, (768, 128, 288, True, False): 1}
