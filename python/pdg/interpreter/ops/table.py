"""A table from op name to handler, filled by decorators in each dialect module."""

from __future__ import annotations

from collections.abc import Callable

from ..body import Handler


class HandlerTable(dict[str, Handler]):
    def register(self, *names: str) -> Callable[[Handler], Handler]:
        def add(fn: Handler) -> Handler:
            for n in names:
                self[n] = fn
            return fn

        return add
