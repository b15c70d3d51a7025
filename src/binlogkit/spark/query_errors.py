"""The error that stopped a streaming query, in one line, and whether a restart may cure it.

Spark reports a Python error of a data source or a ``foreachBatch`` function
as a long text holding its traceback; the binlogkit error at its end is what
the user needs to read. A lost connection, a killed dump thread or a server
shutting down is worth a restart of the query (from its checkpoint, so no
change is lost or doubled), and so is another server behind the URL when the
query may follow a failover (the restarted driver finds its point by GTID);
anything else is not.
"""

from __future__ import annotations

import re

from binlogkit.errors import BinlogError, ConnectionLost, ServerChanged, ServerError
from binlogkit.services.replica_stream import is_retryable

__all__ = ["query_error", "restartable", "server_changed"]

_BINLOGKIT = re.compile(r"^binlogkit\.errors\.(\w+): (.+)$", re.MULTILINE)
_PYTHON = re.compile(r"^([\w.]*(?:Error|Exception)): (.+)$", re.MULTILINE)
_SERVER_CODE = re.compile(r"^server error (\d+) ")
_NETWORK = frozenset(
    {"ConnectionRefusedError", "ConnectionResetError", "BrokenPipeError", "TimeoutError"}
)


def query_error(err: BaseException) -> BinlogError:
    """``err`` as a one-line :class:`BinlogError`: the binlogkit error that stopped the query,
    else the last Python error in its message, else the message's first line."""
    if isinstance(err, BinlogError):
        return err
    text = str(err)
    found = _BINLOGKIT.findall(text)
    if found:
        return BinlogError(found[-1][1])
    other = _PYTHON.findall(text)
    if other:
        kind, message = other[-1]
        return BinlogError(f"the streaming query failed: {kind.rpartition('.')[2]}: {message}")
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    if not type(err).__module__.startswith(("pyspark", "py4j")):
        first = f"{type(err).__name__}: {first}" if first else type(err).__name__
    return BinlogError(f"the streaming query failed: {first or type(err).__name__}")


def restartable(err: BaseException) -> bool:
    """Whether the query stopped on a broken connection to the source (a restart may work)."""
    if isinstance(err, ConnectionLost):
        return True
    if isinstance(err, ServerError):
        return is_retryable(err)
    if isinstance(err, BinlogError):
        return False
    text = str(err)
    found = _BINLOGKIT.findall(text)
    if found:
        kind, message = found[-1]
        if kind == "ConnectionLost":
            return True
        code = _SERVER_CODE.match(message)
        return kind == "ServerError" and code is not None and is_retryable(_server(code))
    other = _PYTHON.findall(text)
    return bool(other) and other[-1][0].rpartition(".")[2] in _NETWORK


def server_changed(err: BaseException) -> bool:
    """Whether the query stopped because the URL reached another server (:class:`ServerChanged`,
    raised on the driver or in a batch's task)."""
    if isinstance(err, BinlogError):
        return isinstance(err, ServerChanged)
    found = _BINLOGKIT.findall(str(err))
    return bool(found) and found[-1][0] == "ServerChanged"


def _server(code: re.Match[str]) -> ServerError:
    return ServerError(int(code[1]), "", "")
