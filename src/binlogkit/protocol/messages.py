"""The messages of the connection and command phases, each decoded and encoded side by side.

Every message is a frozen dataclass with ``decode(payload, ...)`` and
``encode(...)`` mirrored field for field: ``X.decode(p).encode() == p`` for
every payload a server or client sends. Messages whose layout depends on the
negotiated capabilities take them as an argument. Text is decoded as UTF-8 with
``surrogateescape`` so that any byte survives the round trip.

Layouts: MySQL's "Client/Server Protocol" pages (connection phase, generic
response packets, text resultset) and MariaDB's ``sql/sql_acl.cc``,
``sql/protocol.cc`` and ``sql-common/client.c``.
"""

from __future__ import annotations

from dataclasses import field

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import DecodeError, ProtocolError
from binlogkit.protocol.constants import (
    AUTH_MORE_DATA_HEADER,
    AUTH_SWITCH_HEADER,
    EOF_HEADER,
    ERR_HEADER,
    OK_HEADER,
    Capability,
    Command,
)
from binlogkit.wire import ByteReader, ByteWriter

_DEFAULT_CAPS = int(Capability.PROTOCOL_41)
_LOW32 = 0xFFFFFFFF


def text(data: bytes) -> str:
    """Bytes from the wire as text; ``raw(text(b)) == b`` for any bytes."""
    return data.decode("utf-8", "surrogateescape")


def raw(value: str) -> bytes:
    """Text back to the bytes it came from."""
    return value.encode("utf-8", "surrogateescape")


def _decoding(name: str, payload: bytes) -> ByteReader:
    if not payload:
        raise ProtocolError(f"empty {name} packet")
    return ByteReader(payload)


def _wrap(name: str, exc: DecodeError) -> ProtocolError:
    return ProtocolError(f"malformed {name} packet: {exc.message}")


@frozen_dataclass
class Handshake:
    """The server's greeting (Protocol::HandshakeV10).

    ``capabilities`` holds all 64 bits: a MariaDB server clears bit 0
    (``CLIENT_MYSQL``) and puts its extended capabilities in the last four of
    the ten reserved bytes, which land in bits 32-63 here. ``auth_data`` is the
    plugin data as sent (both parts, normally 20 bytes and a NUL); ``scramble``
    is it without the NUL.
    """

    server_version: str
    connection_id: int
    auth_data: bytes
    capabilities: int
    charset: int
    status: int
    auth_plugin_name: str
    protocol_version: int = 10
    auth_data_length: int | None = None
    reserved: bytes = bytes(10)

    @property
    def scramble(self) -> bytes:
        data = self.auth_data
        return data[:-1] if data.endswith(b"\0") else data

    @property
    def is_mariadb(self) -> bool:
        return "MariaDB" in self.server_version or not self.capabilities & Capability.LONG_PASSWORD

    @classmethod
    def decode(cls, payload: bytes) -> Handshake:
        r = _decoding("handshake", payload)
        try:
            version = r.u8("protocol version")
            if version != 10:
                raise ProtocolError(
                    f"server speaks protocol version {version}; only version 10 is supported"
                )
            server_version = text(r.cstring("server version"))
            connection_id = r.u32("connection id")
            auth_data = r.take(8, "auth plugin data part 1")
            r.skip(1, "filler")
            caps = r.u16("capability flags")
            charset = status = 0
            length: int | None = None
            reserved = bytes(10)
            plugin = ""
            if not r.at_end():
                charset = r.u8("character set")
                status = r.u16("status flags")
                caps |= r.u16("capability flags") << 16
                length = r.u8("auth plugin data length")
                reserved = r.take(10, "reserved")
                if not caps & Capability.LONG_PASSWORD:
                    caps |= int.from_bytes(reserved[6:], "little") << 32
                if caps & Capability.SECURE_CONNECTION:
                    auth_data += r.take(max(13, length - 8), "auth plugin data part 2")
                if caps & Capability.PLUGIN_AUTH:
                    rest = r.rest()
                    plugin = text(rest[: rest.index(0)] if 0 in rest else rest)
        except DecodeError as exc:
            raise _wrap("handshake", exc) from None
        return cls(
            server_version=server_version,
            connection_id=connection_id,
            auth_data=auth_data,
            capabilities=caps,
            charset=charset,
            status=status,
            auth_plugin_name=plugin,
            protocol_version=version,
            auth_data_length=length,
            reserved=reserved,
        )

    def encode(self) -> bytes:
        w = ByteWriter()
        caps = self.capabilities
        w.u8(self.protocol_version)
        w.cstring(raw(self.server_version))
        w.u32(self.connection_id)
        w.write(self.auth_data[:8])
        w.u8(0)
        w.u16(caps & 0xFFFF)
        w.u8(self.charset)
        w.u16(self.status)
        w.u16((caps >> 16) & 0xFFFF)
        if self.auth_data_length is not None:
            w.u8(self.auth_data_length)
        else:
            w.u8(len(self.auth_data) if caps & Capability.PLUGIN_AUTH else 0)
        reserved = self.reserved[:6]
        if caps & Capability.LONG_PASSWORD:
            reserved += self.reserved[6:10]
        else:
            reserved += (caps >> 32).to_bytes(4, "little")
        w.write(reserved)
        if caps & Capability.SECURE_CONNECTION:
            w.write(self.auth_data[8:])
        if caps & Capability.PLUGIN_AUTH:
            w.cstring(raw(self.auth_plugin_name))
        return w.getvalue()


def _caps_word(caps: int, reserved: bytes, size: int) -> bytes:
    """The reserved filler of a client packet, MariaDB extended caps in its last 4 bytes."""
    filler = reserved[: size - 4]
    if caps & Capability.LONG_PASSWORD:
        return filler + reserved[size - 4 : size]
    return filler + (caps >> 32).to_bytes(4, "little")


@frozen_dataclass
class SslRequest:
    """The first 32 bytes of a handshake response, sent alone to ask for TLS."""

    capabilities: int
    max_packet_size: int
    charset: int
    reserved: bytes = bytes(23)

    @classmethod
    def decode(cls, payload: bytes) -> SslRequest:
        if len(payload) < 32:
            raise ProtocolError(f"SSL request is {len(payload)} bytes, expected 32")
        r = ByteReader(payload)
        caps = r.u32()
        max_packet = r.u32()
        charset = r.u8()
        reserved = r.take(23)
        if not caps & Capability.LONG_PASSWORD:
            caps |= int.from_bytes(reserved[19:], "little") << 32
        return cls(caps, max_packet, charset, reserved)

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u32(self.capabilities & _LOW32)
        w.u32(self.max_packet_size)
        w.u8(self.charset)
        w.write(_caps_word(self.capabilities, self.reserved, 23))
        return w.getvalue()


@frozen_dataclass
class HandshakeResponse:
    """The client's answer to the handshake (Protocol::HandshakeResponse41).

    ``auth_response`` never shows in the repr: for some plugins it is the password.
    """

    capabilities: int
    max_packet_size: int
    charset: int
    user: str
    auth_response: bytes = field(repr=False)
    database: str | None = None
    auth_plugin_name: str | None = None
    attributes: tuple[tuple[str, str], ...] | None = None
    reserved: bytes = bytes(23)
    extra: bytes = b""

    @classmethod
    def decode(cls, payload: bytes) -> HandshakeResponse:
        head = SslRequest.decode(payload)
        caps = head.capabilities
        if not caps & Capability.PROTOCOL_41:
            raise ProtocolError("client does not speak protocol 4.1 (CLIENT_PROTOCOL_41)")
        r = ByteReader(payload, 32)
        try:
            user = text(r.cstring("user name"))
            if caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
                response = r.packed_bytes("auth response")
            elif caps & Capability.SECURE_CONNECTION:
                response = r.take(r.u8("auth response length"), "auth response")
            else:
                response = r.cstring("auth response")
            database = text(r.cstring("database")) if caps & Capability.CONNECT_WITH_DB else None
            plugin = None
            if caps & Capability.PLUGIN_AUTH:
                rest = bytes(r.buf[r.pos : r.end])
                end = rest.find(b"\0")
                plugin = text(rest if end < 0 else rest[:end])
                r.skip(len(rest) if end < 0 else end + 1)
            attrs = None
            if caps & Capability.CONNECT_ATTRS and not r.at_end():
                sub = r.sub(r.packed_length("connection attributes length"), "attributes")
                pairs = []
                while not sub.at_end():
                    key = text(sub.packed_bytes("attribute name"))
                    pairs.append((key, text(sub.packed_bytes("attribute value"))))
                attrs = tuple(pairs)
            extra = r.rest()
        except DecodeError as exc:
            raise _wrap("handshake response", exc) from None
        return cls(
            capabilities=caps,
            max_packet_size=head.max_packet_size,
            charset=head.charset,
            user=user,
            auth_response=response,
            database=database,
            auth_plugin_name=plugin,
            attributes=attrs,
            reserved=head.reserved,
            extra=extra,
        )

    def encode(self) -> bytes:
        caps = self.capabilities
        w = ByteWriter()
        w.write(SslRequest(caps, self.max_packet_size, self.charset, self.reserved).encode())
        w.cstring(raw(self.user))
        if caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
            w.packed_bytes(self.auth_response)
        elif caps & Capability.SECURE_CONNECTION:
            if len(self.auth_response) > 255:
                raise ProtocolError("auth response over 255 bytes needs PLUGIN_AUTH_LENENC")
            w.u8(len(self.auth_response))
            w.write(self.auth_response)
        else:
            w.cstring(self.auth_response)
        if caps & Capability.CONNECT_WITH_DB:
            w.cstring(raw(self.database or ""))
        if caps & Capability.PLUGIN_AUTH:
            w.cstring(raw(self.auth_plugin_name or ""))
        if caps & Capability.CONNECT_ATTRS and self.attributes is not None:
            attrs = ByteWriter()
            for key, value in self.attributes:
                attrs.packed_bytes(raw(key))
                attrs.packed_bytes(raw(value))
            w.packed_bytes(attrs.getvalue())
        w.write(self.extra)
        return w.getvalue()


@frozen_dataclass
class Ok:
    """An OK packet (header 0x00, or 0xFE when it ends a result set under DEPRECATE_EOF)."""

    affected_rows: int = 0
    last_insert_id: int = 0
    status: int = 0
    warnings: int = 0
    info: str = ""
    session_state: bytes | None = None
    header: int = OK_HEADER

    @classmethod
    def decode(cls, payload: bytes, capabilities: int = _DEFAULT_CAPS) -> Ok:
        r = _decoding("OK", payload)
        try:
            header = r.u8()
            if header not in (OK_HEADER, EOF_HEADER):
                raise ProtocolError(f"OK packet starts with 0x{header:02x}")
            affected = r.packed_length("affected rows")
            insert_id = r.packed_length("last insert id")
            status = warnings = 0
            if capabilities & Capability.PROTOCOL_41:
                status = r.u16("status flags")
                warnings = r.u16("warnings")
            elif capabilities & Capability.TRANSACTIONS:
                status = r.u16("status flags")
            state = None
            if capabilities & Capability.SESSION_TRACK:
                info = r.packed_bytes("info") if not r.at_end() else b""
                if status & 0x4000:  # SERVER_SESSION_STATE_CHANGED
                    state = r.packed_bytes("session state")
            else:
                info = r.rest()
        except DecodeError as exc:
            raise _wrap("OK", exc) from None
        return cls(affected, insert_id, status, warnings, text(info), state, header)

    def encode(self, capabilities: int = _DEFAULT_CAPS) -> bytes:
        w = ByteWriter()
        w.u8(self.header)
        w.packed_int(self.affected_rows)
        w.packed_int(self.last_insert_id)
        if capabilities & Capability.PROTOCOL_41:
            w.u16(self.status)
            w.u16(self.warnings)
        elif capabilities & Capability.TRANSACTIONS:
            w.u16(self.status)
        if capabilities & Capability.SESSION_TRACK:
            if self.info or self.session_state is not None:
                w.packed_bytes(raw(self.info))
            if self.session_state is not None:
                w.packed_bytes(self.session_state)
        else:
            w.write(raw(self.info))
        return w.getvalue()


@frozen_dataclass
class Err:
    """An ERR packet: error code, SQL state ("" when the server sent none) and message."""

    code: int
    message: str
    sql_state: str = ""

    @classmethod
    def decode(cls, payload: bytes) -> Err:
        r = _decoding("ERR", payload)
        try:
            if r.u8() != ERR_HEADER:
                raise ProtocolError(f"ERR packet starts with 0x{payload[0]:02x}")
            code = r.u16("error code")
            state = ""
            if not r.at_end() and payload[r.pos] == 0x23:  # '#'
                r.skip(1)
                state = text(r.take(5, "SQL state"))
            message = text(r.rest())
        except DecodeError as exc:
            raise _wrap("ERR", exc) from None
        return cls(code, message, state)

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u8(ERR_HEADER)
        w.u16(self.code)
        if self.sql_state:
            state = raw(self.sql_state)
            if len(state) != 5:
                raise ProtocolError(f"SQL state must be 5 characters, not {self.sql_state!r}")
            w.u8(0x23)
            w.write(state)
        w.write(raw(self.message))
        return w.getvalue()


@frozen_dataclass
class Eof:
    """An EOF packet (0xFE, warnings, status; under 9 bytes)."""

    warnings: int = 0
    status: int = 0

    @classmethod
    def decode(cls, payload: bytes) -> Eof:
        if not payload or payload[0] != EOF_HEADER or len(payload) >= 9:
            raise ProtocolError("not an EOF packet")
        if len(payload) < 5:
            return cls()
        r = ByteReader(payload, 1)
        return cls(r.u16(), r.u16())

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u8(EOF_HEADER)
        w.u16(self.warnings)
        w.u16(self.status)
        return w.getvalue()


def is_eof(payload: bytes, capabilities: int) -> bool:
    """Whether ``payload`` ends a row list: an EOF, or an 0xFE OK under DEPRECATE_EOF.

    A text row may also start with 0xFE (the prefix of an 8-byte length) but is
    then at least 9 bytes long, and over 16 MiB when it has to be.
    """
    if not payload or payload[0] != EOF_HEADER:
        return False
    if capabilities & Capability.DEPRECATE_EOF:
        return len(payload) < 0xFFFFFF
    return len(payload) < 9


@frozen_dataclass
class AuthSwitchRequest:
    """The server asks for another auth plugin (0xFE, plugin name, plugin data).

    A lone 0xFE is the pre-4.1 request for ``mysql_old_password``.
    """

    plugin_name: str
    data: bytes = b""

    @classmethod
    def decode(cls, payload: bytes) -> AuthSwitchRequest:
        if not payload or payload[0] != AUTH_SWITCH_HEADER:
            raise ProtocolError("not an auth switch request")
        if len(payload) == 1:
            return cls("mysql_old_password")
        r = ByteReader(payload, 1)
        try:
            name = r.cstring("plugin name")
        except DecodeError as exc:
            raise _wrap("auth switch request", exc) from None
        return cls(text(name), r.rest())

    def encode(self) -> bytes:
        if self.plugin_name == "mysql_old_password" and not self.data:
            return bytes([AUTH_SWITCH_HEADER])
        return bytes([AUTH_SWITCH_HEADER]) + raw(self.plugin_name) + b"\0" + self.data


@frozen_dataclass
class AuthMoreData:
    """Extra auth data from the server (0x01 then the plugin's bytes)."""

    data: bytes

    @classmethod
    def decode(cls, payload: bytes) -> AuthMoreData:
        if not payload or payload[0] != AUTH_MORE_DATA_HEADER:
            raise ProtocolError("not an auth more-data packet")
        return cls(payload[1:])

    def encode(self) -> bytes:
        return bytes([AUTH_MORE_DATA_HEADER]) + self.data


@frozen_dataclass
class ColumnDefinition:
    """One column of a result set (Protocol::ColumnDefinition41)."""

    name: str
    type: int
    schema: str = ""
    table: str = ""
    org_table: str = ""
    org_name: str = ""
    catalog: str = "def"
    charset: int = 33
    column_length: int = 0
    flags: int = 0
    decimals: int = 0
    fixed_length: int = 0x0C
    reserved: bytes = b"\0\0"
    extra: bytes = b""

    @classmethod
    def decode(cls, payload: bytes) -> ColumnDefinition:
        r = _decoding("column definition", payload)
        try:
            catalog = text(r.packed_bytes("catalog"))
            schema = text(r.packed_bytes("schema"))
            table = text(r.packed_bytes("table"))
            org_table = text(r.packed_bytes("org_table"))
            name = text(r.packed_bytes("name"))
            org_name = text(r.packed_bytes("org_name"))
            fixed = r.packed_length("fixed fields length")
            fixed_reader = r.sub(fixed, "fixed fields")
            charset = fixed_reader.u16("character set")
            length = fixed_reader.u32("column length")
            col_type = fixed_reader.u8("column type")
            flags = fixed_reader.u16("flags")
            decimals = fixed_reader.u8("decimals")
            reserved = fixed_reader.rest()
            extra = r.rest()
        except DecodeError as exc:
            raise _wrap("column definition", exc) from None
        return cls(
            name=name,
            type=col_type,
            schema=schema,
            table=table,
            org_table=org_table,
            org_name=org_name,
            catalog=catalog,
            charset=charset,
            column_length=length,
            flags=flags,
            decimals=decimals,
            fixed_length=fixed,
            reserved=reserved,
            extra=extra,
        )

    def encode(self) -> bytes:
        w = ByteWriter()
        for value in (
            self.catalog,
            self.schema,
            self.table,
            self.org_table,
            self.name,
            self.org_name,
        ):
            w.packed_bytes(raw(value))
        w.packed_int(self.fixed_length)
        fixed = ByteWriter()
        fixed.u16(self.charset)
        fixed.u32(self.column_length)
        fixed.u8(self.type)
        fixed.u16(self.flags)
        fixed.u8(self.decimals)
        fixed.write(self.reserved)
        if len(fixed) != self.fixed_length:
            raise ProtocolError("column definition fixed fields do not match their length")
        w.write(fixed.getvalue())
        w.write(self.extra)
        return w.getvalue()


def decode_column_count(payload: bytes) -> int:
    """The number of columns that starts a text result set."""
    r = _decoding("column count", payload)
    try:
        count = r.packed_length("column count")
    except DecodeError as exc:
        raise _wrap("column count", exc) from None
    if count == 0 or not r.at_end():
        raise ProtocolError("malformed column count packet")
    return count


def encode_column_count(count: int) -> bytes:
    w = ByteWriter()
    w.packed_int(count)
    return w.getvalue()


_LENGTH_BYTES = {0xFC: 2, 0xFD: 3, 0xFE: 8}
"""Bytes of a length-encoded integer after its first byte, by that byte (0xFB is NULL)."""


def decode_text_row(payload: bytes, columns: int) -> tuple[bytes | None, ...]:
    """A text result row: each value a length-encoded string or NULL (0xFB).

    Read with plain indexing (the hot loop of every result set) rather than a
    :class:`ByteReader`; bounds are checked all the same.
    """
    values: list[bytes | None] = []
    pos, end = 0, len(payload)
    for number in range(columns):
        if pos >= end:
            raise ProtocolError(f"text row ends before its value {number + 1} of {columns}")
        size = payload[pos]
        pos += 1
        if size >= 0xFB:
            if size == 0xFB:
                values.append(None)
                continue
            width = _LENGTH_BYTES.get(size)
            if width is None or pos + width > end:
                raise ProtocolError(f"text row: bad length of value {number + 1}")
            size = int.from_bytes(payload[pos : pos + width], "little")
            pos += width
        stop = pos + size
        if stop > end:
            raise ProtocolError(f"text row: value {number + 1} runs past the packet's end")
        values.append(payload[pos:stop])
        pos = stop
    if pos != end:
        raise ProtocolError(f"text row has {end - pos} bytes after its {columns} values")
    return tuple(values)


def encode_text_row(values: tuple[bytes | None, ...] | list[bytes | None]) -> bytes:
    w = ByteWriter()
    for value in values:
        if value is None:
            w.packed_int(None)
        else:
            w.packed_bytes(value)
    return w.getvalue()


def command_packet(command: Command | int, body: bytes = b"") -> bytes:
    """The payload of a command: its code byte and its body."""
    return bytes([int(command)]) + body
