"""Replacing a small file atomically: a crash leaves the old content or the new, never a part."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

__all__ = ["replace_file", "replace_json", "sync_file", "sync_folder"]


def replace_file(path: Path, text: str, *, sync: bool = True) -> None:
    """Make ``path`` hold ``text``: written to a temporary name in its folder, then renamed
    over it. ``sync``: the new file is fsynced before the rename and the folder after it, so
    the change also survives a power loss."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
        if sync:
            out.flush()
            os.fsync(out.fileno())
    os.replace(temporary, path)
    if sync:
        sync_folder(path.parent)


def replace_json(path: Path, data: Any, *, sync: bool = True) -> None:
    """:func:`replace_file` with ``data`` as indented JSON."""
    replace_file(path, json.dumps(data, indent=1) + "\n", sync=sync)


def sync_folder(folder: Path) -> None:
    """fsync a folder, so the names created or renamed in it are on disk."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_file(path: Path) -> None:
    """fsync a file written and closed before, so its content is on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
