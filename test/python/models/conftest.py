"""The tiny checkpoints (models.checkpoints), made once per test session
and shared by the model tests, and one artifact cache for the programs
they compile (`pdg generate` finds the tests' programs there)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from models import checkpoints


@dataclass
class Checkpoint:
    family: str
    directory: Path
    reference: object  # the float32 transformers model read back from it


@pytest.fixture(scope="session")
def hf_checkpoints(tmp_path_factory) -> dict[str, Checkpoint]:
    root = tmp_path_factory.mktemp("hf")
    return {
        family: Checkpoint(family, root / family, checkpoints.build(family, root / family))
        for family in checkpoints.FAMILIES
    }


@pytest.fixture(scope="session")
def artifact_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pdg-cache")
