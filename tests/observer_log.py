"""An observer that writes down every callout as a short line, for tests.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

from binlogkit.binlog.events import Event, RotateEvent
from binlogkit.pipeline.observers import Observer
from binlogkit.pipeline.transactions import Ending


class ObserverLog(Observer):
    """``lines``: ``start SRC``, ``begin @OFFSET``, ``event @OFFSET``, ``commit @FIRST..LAST
    OUTCOME`` (``prepare``, ``rollback`` alike), ``rotate FILE``, ``stop SRC [ERROR TYPE]``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def stream_start(self, source: str) -> None:
        self.lines.append(f"start {source}")

    def stream_stop(self, source: str, error: BaseException | None) -> None:
        self.lines.append(f"stop {source} {type(error).__name__ if error else ''}".rstrip())

    def transaction_begin(self, first: Event) -> None:
        self.lines.append(f"begin @{first.header.offset}")

    def _end(self, word: str, first: Event, ending: Ending) -> None:
        last = None if ending.last is None else ending.last.header.offset
        self.lines.append(f"{word} @{first.header.offset}..{last} {ending.outcome.value}")

    def transaction_commit(self, first: Event, ending: Ending) -> None:
        self._end("commit", first, ending)

    def transaction_prepare(self, first: Event, ending: Ending) -> None:
        self._end("prepare", first, ending)

    def transaction_rollback(self, first: Event, ending: Ending) -> None:
        self._end("rollback", first, ending)

    def rotate(self, event: RotateEvent) -> None:
        self.lines.append(f"rotate {event.next_file}")

    def each_event(self, event: Event) -> None:
        self.lines.append(f"event @{event.header.offset}")
