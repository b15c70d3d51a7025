"""The event base class, the codec registry, and the events kept as raw bytes."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import ClassVar, TypeVar

from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import BinlogError

Body = bytes | memoryview


class TransactionRole(Enum):
    """What the events of a type do to the transaction around them.

    :mod:`binlogkit.binlog.transactions` reads it (as ``Event.transaction_role``)
    to find where transactions begin and end; events of other types belong to
    the transaction they appear in, if any.
    """

    GTID = "gtid"
    """Begins a transaction and names it: MySQL's GTID (anonymous, tagged) and MariaDB's GTID."""
    STATEMENT = "statement"
    """A statement: transaction control (BEGIN, COMMIT, XA ...) or one that changes data."""
    CONTEXT = "context"
    """Belongs to the statement after it: INTVAR, RAND, USER_VAR."""
    END = "end"
    """Ends its transaction: XID (the commit) and XA_PREPARE."""
    ROWS = "rows"
    """A row event (TABLE_MAP, rows): with no transaction open, its statement is one."""


@frozen_dataclass
class Event:
    """A decoded event: its common header plus the fields of its type.

    Subclasses are frozen dataclasses that mirror the byte layout field for
    field: ``decode`` reads the body (the bytes between the common header and
    the checksum) and ``encode_body`` writes the same bytes back.
    """

    header: EventHeader

    type_codes: ClassVar[tuple[int, ...]] = ()
    transaction_role: ClassVar[TransactionRole | None] = None

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> Event:
        raise NotImplementedError

    def encode_body(self, fmt: FormatContext) -> bytes:
        raise NotImplementedError

    @property
    def type_name(self) -> str:
        return self.header.type_name


E = TypeVar("E", bound=type[Event])

EVENT_CODECS: dict[int, type[Event]] = {}
"""Type code → event class; filled at import time by :func:`register`, read-only after."""


def register(*codes: int) -> Callable[[E], E]:
    """Class decorator: make the class the codec of the given event type codes."""

    def mark(cls: E) -> E:
        for code in codes:
            if code in EVENT_CODECS:
                raise RuntimeError(f"type code {code} registered twice")
            EVENT_CODECS[code] = cls
        cls.type_codes = codes
        return cls

    return mark


@frozen_dataclass
class OpaqueEvent(Event):
    """An event kept as its raw body: an unknown type, or one passed on undecoded.

    ``ignorable`` is true when the server marked it LOG_EVENT_IGNORABLE_F, so a
    reader that does not know it may skip it (WL#4033).
    """

    payload: bytes

    @property
    def ignorable(self) -> bool:
        return self.header.ignorable

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> OpaqueEvent:
        return cls(header, bytes(body))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return self.payload


@frozen_dataclass
class SkippedEvent(Event):
    """An event that could not be read, passed on because the caller chose to skip it.

    ``raw`` is the whole event as read (header, body and checksum); ``error``
    says why it was skipped. Re-encoding gives the raw bytes back.
    """

    raw: bytes
    error: BinlogError

    def encode_body(self, fmt: FormatContext) -> bytes:
        return self.raw[fmt.header_length : len(self.raw) - fmt.checksum_length]
