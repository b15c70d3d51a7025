"""Events that steer the log rather than change data: ROTATE, STOP and XID."""

from __future__ import annotations

from typing import ClassVar

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError
from binlogkit.wire import ByteReader, ByteWriter


@register(EventType.ROTATE)
@frozen_dataclass
class RotateEvent(Event):
    """Names the next binlog file and the position to continue at (absent in format v1)."""

    position: int
    next_file: str

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> RotateEvent:
        r = ByteReader(body)
        has_position = ctx.fmt.post_header_length(EventType.ROTATE, 8) >= 8
        position = r.u64("position") if has_position else 4
        return cls(header, position, utf8.decode(r.rest()))

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        if fmt.post_header_length(EventType.ROTATE, 8) >= 8:
            w.u64(self.position)
        w.write(utf8.encode(self.next_file))
        return w.getvalue()


@register(EventType.STOP)
@frozen_dataclass
class StopEvent(Event):
    """Written when the server shuts down; the file ends here."""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> StopEvent:
        if len(body):
            raise DecodeError(f"STOP event carries {len(body)} unexpected bytes")
        return cls(header)

    def encode_body(self, fmt: FormatContext) -> bytes:
        return b""


@register(EventType.XID)
@frozen_dataclass
class XidEvent(Event):
    """Commits a transaction of a transactional engine; ``xid`` is the server's transaction id."""

    transaction_role: ClassVar[TransactionRole] = TransactionRole.END

    xid: int

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> XidEvent:
        if len(body) != 8:
            raise DecodeError(f"XID body is {len(body)} bytes, not 8")
        return _new_xid(header, int.from_bytes(body, "little"))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return self.xid.to_bytes(8, "little")


_new_xid = fast_constructor(XidEvent)
