"""The pdg dialect in Python: generated op classes plus the type and
attribute classes of the extension (`ValueType`, `AccessAttr`, `StoreAttr`)."""

from pdg._ext import AccessAttr, StoreAttr, ValueType, register_dialect  # noqa: F401

from ._pdg_enum_gen import *  # noqa: F401,F403
from ._pdg_ops_gen import *  # noqa: F401,F403
