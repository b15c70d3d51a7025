"""The error family: every failure binlogkit raises is a :class:`BinlogError`.

Pure decoders raise without knowing where they are; the stream layers that do
know call :meth:`BinlogError.locate` to add the file, offset and event type,
so every message that reaches a user says what went wrong and where.
"""

from __future__ import annotations


class BinlogError(Exception):
    """Base class of all binlogkit errors.

    ``file``, ``offset`` and ``event_type`` say where the problem is, when known;
    ``hint`` says what the caller can do about it.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        offset: int | None = None,
        event_type: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.offset = offset
        self.event_type = event_type
        self.hint = hint

    def locate(
        self, *, file: str | None = None, offset: int | None = None, event_type: str | None = None
    ) -> BinlogError:
        """Fill in location fields that are still unknown; returns ``self`` for ``raise``."""
        if self.file is None:
            self.file = file
        if self.offset is None:
            self.offset = offset
        if self.event_type is None:
            self.event_type = event_type
        return self

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.event_type is not None:
            where.append(f"event {self.event_type}")
        text = f"{', '.join(where)}: {self.message}" if where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class DecodeError(BinlogError):
    """Bytes that do not follow the binlog format."""


class TruncatedError(DecodeError):
    """The input ended in the middle of an event (or of the file header)."""


class ChecksumError(DecodeError):
    """An event's CRC32 does not match its bytes."""


class NotABinlogError(DecodeError):
    """The input does not start with the binlog magic bytes."""


class UnknownEventError(DecodeError):
    """An event type this library cannot decode, without the ignorable flag."""


class EncryptedBinlogError(DecodeError):
    """The binlog is encrypted and no key was given to decrypt it."""


class EncodeError(BinlogError):
    """A value or event that cannot be written in the binlog format."""


class ProtocolError(BinlogError):
    """The MySQL client/server protocol went wrong: bad bytes, or a call out of turn.

    A state machine that raises it is either still usable (a call out of turn
    changes nothing) or closed; it never stays half-way.
    """


class ServerError(ProtocolError):
    """The server answered with an ERR packet: its error code, SQL state and message."""

    def __init__(
        self, code: int, sql_state: str, server_message: str, *, hint: str | None = None
    ) -> None:
        super().__init__(
            f"server error {code} ({sql_state or 'HY000'}): {server_message}", hint=hint
        )
        self.code = code
        self.sql_state = sql_state
        self.server_message = server_message

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuild from the fields (the default would call __init__ with the text only).
        return (type(self), (self.code, self.sql_state, self.server_message), self.__dict__)


class AuthError(ServerError):
    """The server refused to authenticate us (wrong password, unknown user, plugin...)."""


class ConnectionLost(ProtocolError):
    """The connection closed (or broke) before the expected packet arrived."""


class ServerChanged(BinlogError):
    """The connection reached another server than the one a stream's position belongs to
    (a failover, a virtual IP or DNS name moved), or that server's binlog no longer has the
    position (reset, restored)."""
