"""``mysqlbinlog`` / ``mariadb-binlog`` compatible text dumps of binlog events.

:class:`Dumper` prints events the way the tools do; :class:`DumpOptions`
holds the tools' output options. The formatters of the event families live
in :mod:`binlogkit.dump.formatters`, imported (so registered) by the first
:class:`Dumper`; the printing machinery is imported on first use (PEP 562),
so the options alone do not load the decoder.
"""

from __future__ import annotations

import importlib

from binlogkit.dump.options import Base64Output, DumpOptions

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from binlogkit.dump.dumper import Dumper, PrintState, formats

_LAZY = ("Dumper", "PrintState", "formats")
"""Names of :mod:`binlogkit.dump.dumper`, imported by :func:`__getattr__` on first use."""


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'binlogkit.dump' has no attribute {name!r}")
    value = getattr(importlib.import_module("binlogkit.dump.dumper"), name)
    globals()[name] = value
    return value


__all__ = ["Base64Output", "DumpOptions", "Dumper", "PrintState", "formats"]
