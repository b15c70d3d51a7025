"""Storage streams (WL#10956): what binlog code reads bytes from and writes bytes to.

:mod:`.base` holds the interfaces and how stages chain; the other modules are
its implementations: files, memory buffers, standard input and the binlog cache.
The encryption stages (:mod:`.mariadb_encryption`, :mod:`.mysql_encryption`,
built on :mod:`.decrypting_stage`, chosen by :mod:`.decryption`) are imported
from their modules only, so that ``cryptography`` loads only when a binlog is
decrypted or encrypted.
"""

from binlogkit.io.streams.base import InputStream, OutputStream, SeekableInputStream
from binlogkit.io.streams.cache import BinlogCache
from binlogkit.io.streams.file import FileInputStream, FileOutputStream
from binlogkit.io.streams.memory import MemoryInputStream, MemoryOutputStream
from binlogkit.io.streams.stdin import StdinInputStream

__all__ = [
    "BinlogCache",
    "FileInputStream",
    "FileOutputStream",
    "InputStream",
    "MemoryInputStream",
    "MemoryOutputStream",
    "OutputStream",
    "SeekableInputStream",
    "StdinInputStream",
]
