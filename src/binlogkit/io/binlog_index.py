"""Binlog file names and index files: which files a source names, in which order.

A server names its binlogs ``base.NNNNNN`` (six digits or more) and lists
them in ``base.index``, one path per line as it was given the path
(``./mysql-bin.000001``, ``binlog/mysql-bin.000001`` or absolute). The files
are kept in the index's own folder, so only each line's file name counts:
that way an index still names its files once both are copied elsewhere.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from pathlib import Path

from binlogkit.errors import BinlogError
from binlogkit.io.atomic import replace_file

__all__ = [
    "Source",
    "add_to_index",
    "binlog_name",
    "binlog_order",
    "find_index",
    "generation_name",
    "index_name",
    "next_binlog_name",
    "read_index",
    "resolve_sources",
    "split_binlog_name",
    "split_generation",
    "write_index",
]

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

_NUMBERED = re.compile(r"\.(\d{6,})$")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
_GENERATION = re.compile(r"(\d+)~(.+)\Z", re.S)


def generation_name(name: str, generation: int) -> str:
    """``name`` of the server a stream reads after its ``generation``-th switch of server (a
    failover): ``2~mysql-bin.000004``; generation 0 (the first server) keeps the plain name.

    A failover's new server has binlog files of its own, whose names and positions do not
    follow the old one's; the prefix puts them after every position of the servers before
    (see :func:`split_generation`)."""
    return name if generation == 0 else f"{generation}~{name}"


def split_generation(name: str) -> tuple[int, str]:
    """``(2, "mysql-bin.000004")`` for ``2~mysql-bin.000004``; ``(0, name)`` for a plain name."""
    m = _GENERATION.match(name)
    return (0, name) if m is None else (int(m[1]), m[2])


def split_binlog_name(name: str) -> tuple[str, int] | None:
    """``("mysql-bin", 12)`` for ``mysql-bin.000012``; None for a name without a sequence number."""
    m = _NUMBERED.search(name)
    return None if m is None else (name[: m.start()], int(m[1]))


def binlog_name(base: str, number: int) -> str:
    """``mysql-bin.000012`` for ``("mysql-bin", 12)``: six digits at least, as servers name them."""
    return f"{base}.{number:06d}"


def next_binlog_name(name: str) -> str:
    """The file a server opens after ``name``: ``mysql-bin.000013`` after ``mysql-bin.000012``."""
    split = split_binlog_name(name)
    if split is None:
        raise BinlogError(f"{name!r} has no sequence number (name.NNNNNN)")
    return binlog_name(split[0], split[1] + 1)


def binlog_order(path: str) -> tuple[str, int, str]:
    """Sort key that puts ``name.999999`` before ``name.1000000``."""
    base, number = split_binlog_name(path) or (path, -1)
    return (base, number, path)


def index_name(binlog: str) -> str:
    """The index file that lists ``binlog``: ``mysql-bin.index`` for ``mysql-bin.000012``."""
    base, _ = split_binlog_name(binlog) or (binlog, 0)
    return f"{base}.index"


def find_index(directory: Path) -> Path | None:
    """The index file of a folder of binlogs (the first ``*.index`` by name), or None."""
    return min(directory.glob("*.index"), default=None)


def read_index(index: Path) -> list[str]:
    """The file names an index file lists, in its order (blank lines and spaces around ignored)."""
    lines = (line.strip() for line in index.read_text().splitlines())
    return [Path(line).name for line in lines if line]


def write_index(index: Path, names: Sequence[str], *, sync: bool = False) -> None:
    """Make ``index`` list ``names`` (as ``./name``, the way the server writes them).

    A crash leaves the old list or the new one, never a part
    (:func:`~binlogkit.io.atomic.replace_file`). ``sync``: the new list and the
    folder's rename are fsynced.
    """
    replace_file(index, "".join(f"./{name}\n" for name in names), sync=sync)


def add_to_index(directory: Path, name: str, *, sync: bool = False) -> None:
    """List the binlog ``name`` last in its index file in ``directory`` (made if missing)."""
    index = directory / index_name(name)
    names = read_index(index) if index.exists() else []
    if name not in names:
        write_index(index, [*names, name], sync=sync)


def resolve_sources(source: Source) -> list[str]:
    """The ordered list of inputs a source names.

    A path is itself; ``-`` is stdin; an ``.index`` file lists its binlogs
    (in its own folder); a directory holds the binlogs named in its index
    file, or else every ``name.NNNNNN`` file in it; a glob pattern is
    expanded; a list is each of these in turn. Directory and glob matches are
    ordered by name and then by number (``.999999`` before ``.1000000``).
    """
    if not isinstance(source, str | os.PathLike):
        return [path for item in source for path in resolve_sources(item)]
    text = os.fspath(source)
    if text == "-":
        return ["-"]
    path = Path(text)
    if _URI.match(text) and not path.exists():
        raise BinlogError(
            f"{text}: binlog files are read with Python's own file I/O (also on Spark's "
            "executors), from local paths, and a URI is not one",
            hint="copy or mount the binlogs into a local folder (on every Spark node)",
        )
    if path.is_dir():
        index = find_index(path)
        if index is not None:
            return _indexed_files(index)
        found = sorted(
            (str(p) for p in path.iterdir() if _NUMBERED.search(p.name)), key=binlog_order
        )
        if not found:
            raise BinlogError(f"no binlog files (name.NNNNNN) in directory {text}")
        return found
    if path.suffix == ".index" and path.is_file():
        return _indexed_files(path)
    if glob.has_magic(text):
        found = sorted(glob.glob(text), key=binlog_order)
        if not found:
            raise BinlogError(f"no files match {text}")
        return found
    if not path.exists():
        raise BinlogError(f"no such binlog file: {text}")
    return [text]


def _indexed_files(index: Path) -> list[str]:
    """The paths of the files ``index`` lists; each must exist."""
    paths = [index.parent / name for name in read_index(index)]
    for path in paths:
        if not path.exists():
            raise BinlogError(
                f"the index lists {path.name}, which is not in {index.parent}",
                file=str(index),
                hint="copy the file there, or remove its line from the index",
            )
    return [str(path) for path in paths]
