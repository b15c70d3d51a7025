"""The MySQL client/server wire protocol as pure, sans-I/O state machines.

Nothing here touches a socket: :class:`~binlogkit.protocol.client.ClientConnection`
and :class:`~binlogkit.protocol.server.ServerConnection` take bytes in and give
events and bytes out; the drivers in :mod:`binlogkit.io.mysql` and
:mod:`binlogkit.io.mysql_async` move the bytes.
"""
