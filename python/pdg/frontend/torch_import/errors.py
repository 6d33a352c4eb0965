"""The error of an import that pdg cannot take: a ProgramError, reported at
the user's line (the from_torch() call), naming the op and the module's
source line where there is one."""

from __future__ import annotations

from ..errors import ProgramError


class TorchImportError(ProgramError):
    pass
