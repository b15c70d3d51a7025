"""Names and statements the binlog stores as bytes, as text that keeps every byte.

The bytes are read as UTF-8; bytes that are not UTF-8 become lone surrogates
(``surrogateescape``), so ``encode(decode(raw)) == raw`` for any ``raw``.
"""

from __future__ import annotations

__all__ = ["decode", "encode"]


def decode(raw: bytes) -> str:
    """``raw`` as text; undecodable bytes are kept as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """The bytes :func:`decode` read ``text`` from."""
    return text.encode("utf-8", "surrogateescape")
