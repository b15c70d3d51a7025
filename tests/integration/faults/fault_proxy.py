"""A TCP proxy for fault tests: forwards connections and breaks them on demand.

:class:`FaultProxy` listens on 127.0.0.1 and joins every client to a new
connection to its upstream (which may change, e.g. after a server restart).
:meth:`FaultProxy.cut_after` arms a break: once that many more bytes have gone
from the server to a client, the proxy forwards only the part of the chunk up
to that point and then closes both sides of that connection, so the client sees
its stream end in the middle of a packet (or of a header, or between packets).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class FaultProxy:
    """Forwards 127.0.0.1:``port`` to ``upstream``; a context manager (threads)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.cuts = 0
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._budget: int | None = None
        self._open: set[socket.socket] = set()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="proxy-accept", daemon=True)
        self._thread.start()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def cut_after(self, count: int) -> None:
        """Break the connection that carries the ``count``-th next server byte, right there."""
        with self._lock:
            self._budget = count

    @property
    def armed(self) -> bool:
        with self._lock:
            return self._budget is not None

    def drop_all(self) -> None:
        """Close every connection now."""
        with self._lock:
            sockets = list(self._open)
        for sock in sockets:
            self._shut(sock)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        self.drop_all()

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                self._shut(client)
                continue
            with self._lock:
                self._open.update((client, server))
                self.connections += 1
            for source, target, downstream in ((server, client, True), (client, server, False)):
                threading.Thread(
                    target=self._pump, args=(source, target, downstream), daemon=True
                ).start()

    def _take(self, size: int) -> int | None:
        """How much of a server chunk of ``size`` bytes may pass before an armed cut."""
        with self._lock:
            if self._budget is None:
                return None
            if size < self._budget:
                self._budget -= size
                return None
            allowed, self._budget = self._budget, None
            self.cuts += 1
            return allowed

    def _pump(self, source: socket.socket, target: socket.socket, downstream: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                allowed = self._take(len(data)) if downstream else None
                if allowed is not None:
                    target.sendall(data[:allowed])
                    break
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                self._shut(sock)
            with self._lock:
                self._open.difference_update((source, target))
