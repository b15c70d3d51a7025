"""Value types for the row values Python has no exact type for.

MySQL stores dates Python's ``date`` and ``datetime`` refuse (the zero date
``0000-00-00``, dates with a zero month or day, and with ALLOW_INVALID_DATES
days like February 30); spatial values carry an SRID in front of their WKB;
MariaDB compresses some columns. These small frozen types keep such values
exactly, so that encoding a decoded value gives back the bytes it came from.
"""

from __future__ import annotations

from typing import Final

from binlogkit.binlog.frozen import frozen_dataclass


@frozen_dataclass
class InvalidDate:
    """A DATE value that ``datetime.date`` cannot hold, such as ``0000-00-00`` or ``2020-02-00``."""

    year: int
    month: int
    day: int

    def isoformat(self) -> str:
        """The value as MySQL prints it: ``YYYY-MM-DD``."""
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    __str__ = isoformat


@frozen_dataclass
class InvalidDateTime:
    """A DATETIME or TIMESTAMP value that ``datetime.datetime`` cannot hold.

    The zero value ``0000-00-00 00:00:00`` is ``InvalidDateTime(0, 0, 0)``; it is
    also what a TIMESTAMP column's zero value decodes to.
    """

    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0

    @property
    def is_zero(self) -> bool:
        """Whether this is ``0000-00-00 00:00:00`` (with no fraction)."""
        return not (
            self.year
            or self.month
            or self.day
            or self.hour
            or self.minute
            or self.second
            or self.microsecond
        )

    def isoformat(self, sep: str = " ") -> str:
        """The value as MySQL prints it; the fraction appears only when it is not zero."""
        text = (
            f"{self.year:04d}-{self.month:02d}-{self.day:02d}{sep}"
            f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}"
        )
        return f"{text}.{self.microsecond:06d}" if self.microsecond else text

    def __str__(self) -> str:
        return self.isoformat()


ZERO_DATE = InvalidDate(0, 0, 0)
"""``0000-00-00``."""

ZERO_DATETIME = InvalidDateTime(0, 0, 0)
"""``0000-00-00 00:00:00``."""


@frozen_dataclass
class Geometry:
    """A spatial value as MySQL and MariaDB store it: an SRID and the WKB of the shape."""

    srid: int
    wkb: bytes

    def to_bytes(self) -> bytes:
        """MySQL's internal form: the SRID as 4 little-endian bytes, then the WKB."""
        return self.srid.to_bytes(4, "little") + self.wkb


@frozen_dataclass
class Compressed:
    """A value of a MariaDB ``COMPRESSED`` column.

    ``value`` is the column's value (``str`` for text in a known charset, else
    ``bytes``); ``stored`` is the compressed form the binlog carries, which is
    what gets written back, since recompressing may not give the same bytes.
    """

    value: str | bytes
    stored: bytes


class JsonNull:
    """The type of :data:`JSON_NULL`."""

    __slots__ = ()
    _instance: JsonNull | None = None

    def __new__(cls) -> JsonNull:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "JSON_NULL"

    def __reduce__(self) -> str:
        return "JSON_NULL"


JSON_NULL: Final = JsonNull()
"""A JSON column whose whole document is the JSON ``null`` literal.

Kept apart from ``None``, which in a row means SQL NULL (no document at all).
Inside a document, JSON null is ``None`` as usual.
"""
