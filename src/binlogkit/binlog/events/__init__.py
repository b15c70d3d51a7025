"""Every event type, one module per family; importing this package registers them all.

A new event type is one new module here with a class decorated by
:func:`register`; nothing else needs to change.
"""

import importlib
import pkgutil

from binlogkit.binlog.events.base import EVENT_CODECS, Event, OpaqueEvent, SkippedEvent, register
from binlogkit.binlog.events.control import RotateEvent, StopEvent, XidEvent
from binlogkit.binlog.events.format_description import FormatDescriptionEvent, StartEventV3

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "EVENT_CODECS",
    "Event",
    "FormatDescriptionEvent",
    "OpaqueEvent",
    "RotateEvent",
    "SkippedEvent",
    "StartEventV3",
    "StopEvent",
    "XidEvent",
    "register",
]
