"""An ordered list of callbacks that can change while it is being run through.

:class:`Roster` is changed copy-on-write: every change makes a new tuple
under a lock, and a run takes the tuple once. So a change from another
thread, or from inside one of the callbacks, never disturbs a run under way:
it applies from the next run on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["Roster"]

T = TypeVar("T")


class Roster(Generic[T]):
    """Members in order; :attr:`members` is a snapshot (a tuple) to run through."""

    def __init__(self, members: Iterable[T] = ()) -> None:
        self.members: tuple[T, ...] = tuple(members)
        self._lock = threading.Lock()

    def append(self, member: T) -> None:
        with self._lock:
            self.members = (*self.members, member)

    def insert(self, index: int, member: T) -> None:
        """Put ``member`` before position ``index`` (as ``list.insert``)."""
        with self._lock:
            members = list(self.members)
            members.insert(index, member)
            self.members = tuple(members)

    def remove(self, member: T) -> None:
        """Take ``member`` out (its first place); ``ValueError`` when it is not in."""
        with self._lock:
            members = list(self.members)
            members.remove(member)
            self.members = tuple(members)

    def clear(self) -> None:
        with self._lock:
            self.members = ()

    def index(self, member: T) -> int:
        return self.members.index(member)

    def __iter__(self) -> Iterator[T]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, member: object) -> bool:
        return member in self.members

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.members)!r})"
