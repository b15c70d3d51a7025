"""Bounds-checked little-endian byte reading and writing, shared by every codec."""

from binlogkit.wire.reader import ByteReader
from binlogkit.wire.writer import ByteWriter

__all__ = ["ByteReader", "ByteWriter"]
