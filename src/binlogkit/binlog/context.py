"""What a decoder must know about the binlog it reads: the format and the caller's options.

A :class:`FormatContext` comes from the file's first event (START_EVENT_V3 or
FORMAT_DESCRIPTION) and is replaced, never changed, when a new format
description arrives. :class:`DecodeContext` bundles it with the caller's
:class:`DecodeOptions` and the decoder's table-map cache for the codecs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field
from datetime import tzinfo
from typing import Literal

from binlogkit.binlog.constants import (
    V1_HEADER_LENGTH,
    V4_HEADER_LENGTH,
    ChecksumAlg,
    EventType,
    Flavor,
)
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.tables import TableCache

_VERSION = re.compile(rb"^(\d+)\.(\d+)\.(\d+)")

# Post-header lengths of formats v1 and v3, which carry no format description
# (MySQL's Format_description_log_event for binlog_ver 1 and 3).
_OLD_POST_HEADER = {
    EventType.START_V3: 56,
    EventType.QUERY: 11,
    EventType.ROTATE: 8,
    EventType.LOAD: 18,
    EventType.CREATE_FILE: 4,
    EventType.APPEND_BLOCK: 4,
    EventType.EXEC_LOAD: 4,
    EventType.DELETE_FILE: 4,
    EventType.NEW_LOAD: 18,
}


# Some MySQL 5.1/5.2 pre-releases (the "a_drop5" and "a_drop6" trees of the
# row-based replication work) numbered types 16-22 differently: TABLE_MAP was
# 16, their rows events 17-19, XID 20, BEGIN/EXECUTE_LOAD_QUERY 21 and 22.
# MySQL's Format_description_event recognises them by these version patterns.
_PERMUTED_VERSION = re.compile(r"^5\.(1\.[1-5]-a_drop5|1\.4-a_drop6|2\.[0-2]-a_drop6)")
_PERMUTED_TYPES = {
    16: EventType.TABLE_MAP,
    17: EventType.PRE_GA_WRITE_ROWS,
    18: EventType.PRE_GA_UPDATE_ROWS,
    19: EventType.PRE_GA_DELETE_ROWS,
    20: EventType.XID,
    21: EventType.BEGIN_LOAD_QUERY,
    22: EventType.EXECUTE_LOAD_QUERY,
}
_UNPERMUTED_TYPES = {int(code): raw for raw, code in _PERMUTED_TYPES.items()}


def parse_version(server_version: str) -> tuple[int, int, int]:
    """The leading ``major.minor.patch`` of a server version string, ``(0, 0, 0)`` if absent."""
    m = _VERSION.match(server_version.encode("ascii", "replace"))
    if not m:
        return (0, 0, 0)
    return (int(m[1]), int(m[2]), int(m[3]))


def flavor_of(server_version: str) -> Flavor:
    return Flavor.MARIADB if "mariadb" in server_version.lower() else Flavor.MYSQL


def checksum_capable(server_version: str) -> bool:
    """Whether a server of this version appends the checksum algorithm to its FDE."""
    version = parse_version(server_version)
    if flavor_of(server_version) is Flavor.MARIADB:
        return version >= (5, 3, 0)
    return version >= (5, 6, 1)


@frozen_dataclass
class FormatContext:
    """The binlog format in force: header size, post-header sizes, checksum, server."""

    binlog_version: int = 4
    server_version: str = ""
    header_length: int = V4_HEADER_LENGTH
    post_header_lengths: bytes = b""
    checksum: ChecksumAlg = ChecksumAlg.OFF
    created: int = 0
    permuted_types: bool = field(init=False, repr=False, compare=False)
    """Whether the server numbered types 16-22 the pre-release way (see ``type_code``)."""

    def __post_init__(self) -> None:
        permuted = _PERMUTED_VERSION.match(self.server_version) is not None
        object.__setattr__(self, "permuted_types", permuted)

    @property
    def flavor(self) -> Flavor:
        return flavor_of(self.server_version)

    @property
    def version(self) -> tuple[int, int, int]:
        return parse_version(self.server_version)

    @property
    def checksum_length(self) -> int:
        return 4 if self.checksum == ChecksumAlg.CRC32 else 0

    def type_code(self, written: int) -> int:
        """Today's type code of an event whose header says ``written``.

        Identical except for a few MySQL 5.1/5.2 pre-releases ("-a_drop5", "-a_drop6")
        that numbered TABLE_MAP, their rows events, XID and the LOAD DATA events
        16-22 in another order.
        """
        if self.permuted_types:
            return _PERMUTED_TYPES.get(written, written)
        return written

    def written_type_code(self, type_code: int) -> int:
        """The code a header holds for today's ``type_code``: the inverse of :meth:`type_code`."""
        if self.permuted_types:
            return _UNPERMUTED_TYPES.get(type_code, type_code)
        return type_code

    def post_header_length(self, type_code: int, default: int = 0) -> int:
        """The post-header length announced for ``type_code``, else ``default``.

        ``type_code`` is today's code; the lengths are looked up in the order the
        server wrote them.
        """
        index = self.written_type_code(type_code) - 1
        if 0 <= index < len(self.post_header_lengths):
            return self.post_header_lengths[index]
        return default

    @classmethod
    def old_format(cls, binlog_version: int, server_version: str, created: int) -> FormatContext:
        """The implied context of a v1 (3.23) or v3 (4.x) binlog."""
        lengths = bytearray(EventType.FORMAT_DESCRIPTION - 1)
        for code, length in _OLD_POST_HEADER.items():
            lengths[code - 1] = length
        if binlog_version == 1:
            lengths[EventType.ROTATE - 1] = 0
        return cls(
            binlog_version=binlog_version,
            server_version=server_version,
            header_length=V1_HEADER_LENGTH if binlog_version == 1 else V4_HEADER_LENGTH,
            post_header_lengths=bytes(lengths),
            checksum=ChecksumAlg.OFF,
            created=created,
        )


@frozen_dataclass
class DecodeOptions:
    """How the caller wants events decoded.

    - ``verify_checksum``: check every event's CRC32 (default on).
    - ``on_unknown``: ``"error"`` stops at an unknown event type that lacks the
      ignorable flag; ``"pass"`` hands it on as an opaque event. Ignorable
      unknown events are always handed on.
    - ``on_corrupt``: ``"error"`` stops at an event that fails its checksum or
      decoding; ``"skip"`` hands it on as a :class:`SkippedEvent` and goes on.
    - ``raw_values``: row values as the binlog stores them (ints and bytes)
      instead of Python date/Decimal/str objects.
    - ``timezone``: the zone TIMESTAMP columns are given in (default UTC).
    - ``tables``: a predicate on (schema, table); TABLE_MAP and rows events of
      tables it rejects are dropped by the decoder, their rows never read.
    """

    verify_checksum: bool = True
    on_unknown: Literal["error", "pass"] = "error"
    on_corrupt: Literal["error", "skip"] = "error"
    raw_values: bool = False
    timezone: tzinfo | None = None
    tables: Callable[[str, str], bool] | None = None

    def __post_init__(self) -> None:
        if self.on_unknown not in ("error", "pass"):
            raise ValueError(f"on_unknown must be 'error' or 'pass', not {self.on_unknown!r}")
        if self.on_corrupt not in ("error", "skip"):
            raise ValueError(f"on_corrupt must be 'error' or 'skip', not {self.on_corrupt!r}")


@frozen_dataclass
class DecodeContext:
    """What an event codec receives: the format, the options and the tables mapped so far."""

    fmt: FormatContext = field(default_factory=FormatContext)
    options: DecodeOptions = field(default_factory=DecodeOptions)
    tables: TableCache = field(default_factory=TableCache)
