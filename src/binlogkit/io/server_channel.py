"""A server's asyncio byte channel to one client, which may turn to TLS mid-stream.

The MySQL protocol starts in the clear and turns to TLS after the client's
SSLRequest packet; the client sends its TLS ClientHello right behind that
packet, so those bytes may already sit in the stream's buffer when the
server decides to upgrade. :class:`ServerChannel` therefore runs TLS itself
over memory BIOs (:meth:`ssl.SSLContext.wrap_bio`) on top of the raw
stream: whatever was buffered goes into the handshake.

A peer that vanished without closing (a half-open connection) is found by TCP
keepalive probes (after :data:`KEEPALIVE_IDLE` seconds of silence), and a
peer that stops taking bytes by :attr:`ServerChannel.write_timeout`.
"""

from __future__ import annotations

import asyncio
import socket
import ssl

__all__ = ["ServerChannel"]

_READ = 1 << 16
_WRITE_BUFFER = 1 << 20
"""Bytes the transport may hold before a writer waits (asyncio's default, 64 KiB, makes a
fast dump wait on the socket every few events)."""
KEEPALIVE_IDLE = 60
"""Seconds of silence before TCP keepalive probes ask whether the peer is still there."""
_KEEPALIVE_PROBES = (("TCP_KEEPIDLE", KEEPALIVE_IDLE), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 6))


class ServerChannel:
    """Reads and writes of one client connection, in the clear or (after :meth:`start_tls`) TLS."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        writer.transport.set_write_buffer_limits(high=_WRITE_BUFFER)
        self.write_timeout: float | None = None
        """Seconds :meth:`drain` waits for the peer to take the bytes written (None: forever)."""
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            for name, value in _KEEPALIVE_PROBES:
                if hasattr(socket, name):
                    sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
        self._tls: ssl.SSLObject | None = None
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()

    @property
    def tls_active(self) -> bool:
        return self._tls is not None

    async def read(self, size: int = _READ) -> bytes:
        """Up to ``size`` bytes; b"" when the client closed the connection."""
        if self._tls is None:
            return await self.reader.read(size)
        while True:
            try:
                data = self._tls.read(size)
            except ssl.SSLWantReadError:
                if not await self._receive():
                    return b""
                continue
            except ssl.SSLZeroReturnError:
                return b""
            self._send_pending()
            return data

    async def read_exactly(self, size: int) -> bytes:
        """Exactly ``size`` bytes of the clear stream (reads nothing past them)."""
        return await self.reader.readexactly(size)

    def write(self, data: bytes) -> None:
        if self._tls is None:
            self.writer.write(data)
            return
        self._tls.write(data)
        self._send_pending()

    async def drain(self) -> None:
        """Wait until the transport's buffer is low (TimeoutError after :attr:`write_timeout`)."""
        async with asyncio.timeout(self.write_timeout):  # not wait_for: it can swallow a cancel
            await self.writer.drain()

    async def start_tls(self, context: ssl.SSLContext) -> None:
        """The TLS handshake, server side (the client's first bytes may be buffered already)."""
        tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._send_pending()
                await self.drain()
                if not await self._receive():
                    raise ConnectionResetError("the client left during the TLS handshake") from None
        self._tls = tls
        self._send_pending()
        await self.drain()

    async def _receive(self) -> bool:
        data = await self.reader.read(_READ)
        if not data:
            self._incoming.write_eof()
            return False
        self._incoming.write(data)
        return True

    def _send_pending(self) -> None:
        if self._outgoing.pending:
            self.writer.write(self._outgoing.read())
