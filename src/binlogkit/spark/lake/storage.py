"""Where the lake lives: its binlogkit files on any filesystem Spark is configured for.

Delta tables and the streaming checkpoint are read and written by Spark, which
reaches any Hadoop filesystem (``s3a://``, ``abfss://``, ``gs://``,
``hdfs://`` ...). binlogkit's own files in the lake (``_binlogkit/sync.json``,
``snapshot.json``, ``schema.jsonl``), and what it reads beside Spark (a
table's ``_delta_log`` commit files, the checkpoint's offsets and commits) go
through this module, by the kind of path:

- a local path (a :class:`~pathlib.Path`, a string without a scheme, or a
  ``file:`` URI): Python's own file I/O, as before;
- a URI of another scheme (:class:`UriPath`): Hadoop's ``FileSystem`` of that
  URI through the JVM of the driver's SparkContext, with the session's Hadoop
  configuration (``spark.hadoop.*`` and the session's settings, as Delta reads
  them when the filesystem is first used), so it reaches what Delta reaches.
  Each ``scheme://authority`` is looked up once per SparkContext; a listing is
  one call into the JVM, not one per entry.

All of this runs in the driver's own Python process (the one holding the
SparkSession), the only place with the JVM at hand: no Python worker (the
binlog source's driver-side runner, executors) reads the lake. The stream's
schema history, which the source's runner writes, is kept in a local working
copy (:class:`WorkingCopy`) that the driver writes back to the lake.

:func:`replace_text` leaves a file with its old content or its new, never a
part: locally a temporary file, fsynced and renamed; on object stores
(:data:`PUT_SCHEMES`) one upload, which the store makes visible whole when it
ends; elsewhere a temporary file renamed over the old one: ``FileSystem.rename``
where it replaces (a local filesystem below), else
``FileContext.rename(OVERWRITE)``, atomic on HDFS; on other filesystems that
deletes the old file first, and a crash right then leaves the new content
under the temporary name ``.NAME.*.tmp`` beside it. The lake has one writer,
its driver.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.atomic import replace_file

__all__ = [
    "PUT_SCHEMES",
    "LakePath",
    "UriPath",
    "WorkingCopy",
    "exists",
    "is_dir",
    "lake_path",
    "names",
    "open_text",
    "read_text",
    "replace_json",
    "replace_text",
    "working_copy",
]

PUT_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs"})
"""Object stores whose upload replaces an object whole (no rename there: a copy)."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")
"""A URI's scheme, then a slash (two letters or more: ``C:/`` is a Windows drive)."""


@frozen_dataclass
class UriPath:
    """A path on a filesystem Spark reaches through Hadoop (``s3a://bucket/lake``): joined
    with ``/`` as a :class:`~pathlib.Path` is; it has no file methods, and Python's ``open``
    refuses it (no ``__fspath__``)."""

    uri: str

    def __truediv__(self, name: str) -> UriPath:
        return UriPath(f"{self.uri.rstrip('/')}/{name}")

    @property
    def name(self) -> str:
        return self.uri.rstrip("/").rpartition("/")[2]

    @property
    def scheme(self) -> str:
        return self.uri.partition(":")[0].lower()

    def __str__(self) -> str:
        return self.uri


LakePath = Path | UriPath
"""A path in the lake: local, or a URI for Hadoop."""


def lake_path(where: str | Path | UriPath) -> LakePath:
    """The lake path ``where`` names: a :class:`UriPath` for a URI with a scheme other than
    ``file``, else a local :class:`~pathlib.Path`."""
    if isinstance(where, UriPath):
        return where
    if isinstance(where, Path):
        return where
    scheme = _SCHEME.match(where)
    if scheme is None:
        return Path(where)
    if scheme[1].lower() == "file":
        return Path(unquote(urlsplit(where).path))
    return UriPath(where)


def read_text(path: LakePath) -> str | None:
    """The text of the file at ``path`` (UTF-8); None when there is no such file."""
    if isinstance(path, Path):
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
    data = _hadoop(path).read(path)
    return None if data is None else data.decode("utf-8")


def open_text(path: LakePath) -> TextIO:
    """The file at ``path`` opened for reading text (UTF-8): a local file itself, else its
    content read whole; FileNotFoundError when it is missing."""
    if isinstance(path, Path):
        return open(path, encoding="utf-8")
    text = read_text(path)
    if text is None:
        raise FileNotFoundError(f"no file {path}")
    return io.StringIO(text)


def replace_text(path: LakePath, text: str) -> None:
    """Make the file at ``path`` hold ``text``, whole or not at all (see the module doc);
    its folder is made when missing."""
    if isinstance(path, Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, text)
    else:
        _hadoop(path).replace(path, text.encode("utf-8"))


def replace_json(path: LakePath, data: Any) -> None:
    """:func:`replace_text` with ``data`` as indented JSON."""
    replace_text(path, json.dumps(data, indent=1) + "\n")


def exists(path: LakePath) -> bool:
    if isinstance(path, Path):
        return path.exists()
    hadoop = _hadoop(path)
    return bool(hadoop.fs.exists(hadoop.path(path)))


def is_dir(path: LakePath) -> bool:
    if isinstance(path, Path):
        return path.is_dir()
    hadoop = _hadoop(path)
    try:
        return bool(hadoop.fs.getFileStatus(hadoop.path(path)).isDirectory())
    except Exception as err:
        if _not_found(err):
            return False
        raise


def names(folder: LakePath) -> list[str]:
    """The names in ``folder`` (unsorted); none when it is missing."""
    if isinstance(folder, Path):
        try:
            return os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
    return _hadoop(folder).names(folder)


@contextmanager
def working_copy(path: LakePath) -> Iterator[Path]:
    """A local file to read the lake's file ``path`` from: itself when local, else a copy
    (empty when the lake has none), removed after."""
    copy = WorkingCopy(path)
    try:
        yield copy.local
    finally:
        copy.close()


class WorkingCopy:
    """A lake file kept in a local file while the driver works on it: the file itself for a
    local lake; for a lake elsewhere a temporary copy, read from the lake when made and
    written back whole (:func:`replace_text`) by :meth:`publish` when it changed."""

    def __init__(self, path: LakePath) -> None:
        self.lake = path
        self._folder: str | None = None
        self._published: str | None = None
        if isinstance(path, Path):
            self.local = path
            return
        self._folder = tempfile.mkdtemp(prefix="binlogkit-lake-")
        self.local = Path(self._folder, path.name)
        self._published = read_text(path) or ""
        self.local.write_text(self._published, encoding="utf-8")

    def publish(self) -> None:
        """Write the local copy back to the lake, if it changed since it was read or last
        written back (nothing to do for a local lake)."""
        if self._folder is None:
            return
        text = self.local.read_text(encoding="utf-8")
        if text != self._published:
            replace_text(self.lake, text)
            self._published = text

    def close(self) -> None:
        """Remove a temporary copy (not written back: :meth:`publish` does that)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


class _Hadoop:
    """The Hadoop filesystem of a URI, through the JVM of the driver's SparkContext."""

    def __init__(self, context: Any, uri: UriPath) -> None:
        self._jvm: Any = context._jvm
        self._gateway = context._gateway
        # What Delta reads with: the session's settings over the context's (spark.hadoop.*).
        session = self._jvm.org.apache.spark.sql.SparkSession.getDefaultSession()
        if session.isDefined():
            self.conf = session.get().sessionState().newHadoopConf()
        else:
            self.conf = context._jsc.hadoopConfiguration()
        self.fs = self.path(uri).getFileSystem(self.conf)

    def path(self, uri: UriPath) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(uri.uri)

    def read(self, uri: UriPath) -> bytes | None:
        try:
            stream = self.fs.open(self.path(uri))
        except Exception as err:
            if _not_found(err):
                return None
            raise
        try:
            return bytes(stream.readAllBytes())
        finally:
            stream.close()

    def names(self, folder: UriPath) -> list[str]:
        path = self.path(folder)
        try:
            found = self.fs.listStatus(path)
        except Exception as err:
            if _not_found(err):
                return []
            raise
        if len(found) == 0:
            return []
        # One call for the whole listing ("{URI/a,URI/b}"), not three per entry: the entries'
        # paths, each their folder's and "/name" (a comma may be in either).
        paths = self._jvm.org.apache.hadoop.fs.FileUtil.stat2Paths(found)
        text = str(self._jvm.org.apache.commons.lang3.ArrayUtils.toString(paths))[1:-1]
        prefix = f"{paths[0].getParent().toString()}/"
        return text.removeprefix(prefix).split("," + prefix)

    def replace(self, uri: UriPath, data: bytes) -> None:
        if uri.scheme in PUT_SCHEMES:
            self._write(self.path(uri), data)
            return
        parent = uri.uri.rstrip("/").rpartition("/")[0]
        temporary = self._jvm.org.apache.hadoop.fs.Path(
            f"{parent}/.{uri.name}.{secrets.token_hex(4)}.tmp"
        )
        self._write(temporary, data)
        if self.fs.rename(temporary, self.path(uri)):  # a rename that replaces (local files)
            return
        rename = self._jvm.org.apache.hadoop.fs.Options.Rename
        options = self._gateway.new_array(rename, 1)
        options[0] = rename.OVERWRITE
        context = self._jvm.org.apache.hadoop.fs.FileContext.getFileContext(
            self.fs.getUri(), self.conf
        )
        context.rename(temporary, self.path(uri), options)

    def _write(self, path: Any, data: bytes) -> None:
        self.fs.mkdirs(path.getParent())
        out = self.fs.create(path, True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()


_FILESYSTEMS: weakref.WeakKeyDictionary[Any, dict[str, _Hadoop]] = weakref.WeakKeyDictionary()
"""Per SparkContext, the filesystem of each ``scheme://authority`` reached: made on first use,
with the session's Hadoop settings then."""


def _hadoop(uri: UriPath) -> _Hadoop:
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        raise BinlogError(
            f"{uri}: a {uri.scheme}:// path is reached through Spark's Hadoop filesystems, "
            "and no SparkContext is running in this process",
            hint="start the Spark session first (binlogkit's commands do), or give a local path",
        )
    parts = urlsplit(uri.uri)
    known = _FILESYSTEMS.setdefault(context, {})
    key = f"{parts.scheme}://{parts.netloc}".lower()
    if key not in known:
        known[key] = _Hadoop(context, uri)
    return known[key]


def _not_found(err: Exception) -> bool:
    """Whether ``err`` is py4j's error around Java's ``FileNotFoundException``."""
    java = getattr(err, "java_exception", None)
    return java is not None and "FileNotFoundException" in str(java.getClass().getName())
