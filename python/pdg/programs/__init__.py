"""Reference programs written with the frontend (decode; RLFT ones later)."""

from .decode import DecodeProgram, build_decode

__all__ = ["DecodeProgram", "build_decode"]
