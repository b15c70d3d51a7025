"""``binlogkit.open``: the events of binlog files or of a live server, chosen by the source.

Files are read by :class:`~binlogkit.io.files.BinlogReader`; a ``mysql://`` or
``mariadb://`` URL is streamed by
:class:`~binlogkit.services.replica_stream.BinlogStream`, whose network code
is imported only when a URL is given.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.tables import SchemaSource
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import Source
from binlogkit.io.files import BinlogReader

if TYPE_CHECKING:
    from binlogkit.services.replica_stream import BinlogStream

__all__ = ["open_binlog"]


def open_binlog(
    source: Source,
    *,
    start_position: int | None = None,
    follow: bool = False,
    verify_checksum: bool = True,
    on_unknown: str = "error",
    on_corrupt: str = "error",
    raw_values: bool = False,
    schema: SchemaSource | Literal["auto"] | None = "auto",
    key_file: str | os.PathLike[str] | None = None,
    filekey: str | None = None,
    **kwargs: object,
) -> BinlogReader | BinlogStream:
    """Open binlog files (a path, a list, a directory, an index file, a glob or ``-``).

    Returns a context manager that iterates decoded events. See
    :class:`~binlogkit.binlog.context.DecodeOptions` for the decoding options.
    ``schema`` completes the columns of tables logged without
    ``binlog_row_metadata=FULL``: by default a
    :class:`~binlogkit.schema.history.SchemaHistory` that learns the tables
    from the DDL in the files (for a server stream that starts now: seeded from
    the server at that position, see :mod:`binlogkit.services.live_schema`);
    a schema source of your own (a history seeded from a server or a file); or
    None for the binlog's own columns alone.
    ``key_file`` decrypts encrypted binlogs: a MariaDB ``file_key_management``
    key file (``filekey``: its secret, when the key file is encrypted, as the
    server's ``file_key_management_filekey``) or a MySQL ``keyring_file``.
    A ``mysql://`` or ``mariadb://`` URL reads a live server's stream instead
    (:class:`~binlogkit.services.replica_stream.BinlogStream`: ``start``,
    ``server_id``, ``blocking`` and its other options).
    """
    if isinstance(source, str) and source.startswith(("mysql://", "mariadb://")):
        from binlogkit.services.replica_stream import open_stream  # network code only when asked

        if start_position is not None or follow:
            raise BinlogError("a server stream takes start=..., not start_position or follow")
        if key_file is not None:
            raise BinlogError("a server stream is decrypted by the server: no key_file")
        if schema == "auto":
            from binlogkit.services.live_schema import stream_schema

            schema, kwargs["start"] = stream_schema(source, kwargs.get("start", "now"))  # type: ignore[arg-type]
        return open_stream(
            source,
            verify_checksum=verify_checksum,
            on_unknown=on_unknown,
            on_corrupt=on_corrupt,
            raw_values=raw_values,
            schema=schema,
            **kwargs,
        )
    options = DecodeOptions(
        verify_checksum=verify_checksum,
        on_unknown=on_unknown,  # type: ignore[arg-type]
        on_corrupt=on_corrupt,  # type: ignore[arg-type]
        raw_values=raw_values,
        **kwargs,  # type: ignore[arg-type]
    )
    if schema == "auto":
        from binlogkit.schema.history import SchemaHistory  # the DDL parser only when used

        schema = SchemaHistory()
    return BinlogReader(
        source,
        options=options,
        start_position=start_position,
        follow=follow,
        schema=schema,
        key_file=key_file,
        filekey=filekey,
    )
