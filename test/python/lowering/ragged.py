"""Comparing a compiled run's outputs with the interpreter's: an output
over a dynamic dim is one array when every sequence has the same length,
else a list with one array per sequence."""

from __future__ import annotations

import numpy as np


def assert_same(got, want) -> None:
    """The same values, bit for bit, in the same (ragged or dense) form."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(got, want)
