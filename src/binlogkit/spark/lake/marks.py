"""Which batch writes a lake table holds: a mark in each write's commit, read back from its log.

Delta's transaction ids (``txnAppId``/``txnVersion``) make a write look its id up
in the table's state, and Delta 4.4 reconstructs the table's whole state for it
(a Spark job over the checkpoint and the commits since; the ids it writes into
the ``.crc`` file are not read back), for every table at every batch
(docs/lakehouse.md, "Cost of a micro-batch"). A batch write of the apply
carries a :class:`Mark` in its commit's ``userMetadata`` instead: one commit
file holds it with the rows, so a table holds the mark exactly when it holds the
write. :func:`holds` reads the table's commit files from the newest back to the
first mark of an earlier batch. The lake has one writer, which writes each table
in batch order and a batch's writes in the same order when it applies the batch
again, so that is enough to know. A commit with Delta's transaction id of the
lake (what binlogkit wrote before marks) counts as its mark. :func:`write_once`
(a MERGE, an UPDATE) and :func:`append_once` are writes skipped when their
table holds their mark, and marked otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.tables import session_settings

__all__ = [
    "USER_METADATA",
    "Mark",
    "append_once",
    "holds",
    "holds_earlier",
    "marked",
    "write_once",
]

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
"""The session setting that gives a commit its ``userMetadata``."""

_SKIP_EMPTY = "spark.databricks.delta.skipRecordingEmptyCommits"
_COMMIT = re.compile(r"\d{20}\.json")
_FIRST = f"{0:020d}.json"
_KEY = "binlogkit"


@frozen_dataclass
class Mark:
    """A batch write: the lake's ``app`` id, the ``batch`` (micro-batch id) and which of the
    batch's writes of the table (``step``: ``""`` its first segment, ``"1"``, ``"2"`` ... the
    later ones, ``"truncate:FILE:POS"`` a TRUNCATE's change log row)."""

    app: str
    batch: int
    step: str = ""

    def text(self) -> str:
        """The commit's ``userMetadata``."""
        return json.dumps({_KEY: {"app": self.app, "batch": self.batch, "step": self.step}})


def write_once(spark: Any, path: str, mark: Mark, write: Callable[[], object]) -> bool:
    """Do ``write``, a MERGE or UPDATE of the Delta table at ``path``, as the batch write
    ``mark`` (the session's settings give its commit the mark meanwhile, :func:`marked`),
    unless the table holds it (or a later batch's write) already; whether it was done."""
    if holds(path, mark):
        return False
    with marked(spark, mark):
        write()
    return True


def append_once(rows: Any, path: str, mark: Mark, **options: str) -> bool:
    """Append ``rows`` (with the writer's ``options``) to the Delta table at ``path`` as the
    batch write ``mark``, unless it holds it already; whether it was done. The mark is the
    write's option ``userMetadata``, no session setting, so the append may run beside another
    write of the session (from another thread)."""
    if holds(path, mark):
        return False
    writer = rows.write.format("delta").mode("append").options(**options)
    writer.option("userMetadata", mark.text()).save(path)
    return True


def holds(path: str, mark: Mark) -> bool:
    """Whether the Delta table at ``path`` (a local folder or a URI,
    :mod:`~binlogkit.spark.lake.storage`) holds the write ``mark``, or a write of a later
    batch of its app. Commits without a mark (OPTIMIZE's) are passed over."""
    log = storage.lake_path(path) / "_delta_log"
    names = storage.names(log)
    for name in sorted((n for n in names if _COMMIT.fullmatch(n)), reverse=True):
        for batch, step in _marks(log / name, mark.app):
            if batch is None:  # an old TRUNCATE's transaction id: no batch
                if step == mark.step:
                    return True
            elif batch != mark.batch:
                return batch > mark.batch
            elif step == mark.step:
                return True
    return False


def holds_earlier(path: str, mark: Mark) -> bool:
    """Whether the Delta table at ``path`` holds a write of a batch of ``mark``'s app before
    ``mark``'s: its oldest commit file with a mark of the app tells (the writes come in batch
    order; commits without one, as OPTIMIZE's, are passed over). A log whose first commits
    are gone (Delta's log cleanup, after ``delta.logRetentionDuration``) holds earlier
    writes: the lake's only writer made those commits, days before the batch applied now."""
    log = storage.lake_path(path) / "_delta_log"
    commits = sorted(n for n in storage.names(log) if _COMMIT.fullmatch(n))
    if commits and commits[0] != _FIRST:
        return True
    for name in commits:
        for batch, _ in _marks(log / name, mark.app):
            if batch is not None:
                return batch < mark.batch
    return False


def _marks(commit: storage.LakePath, app: str) -> Iterator[tuple[int | None, str]]:
    """The (batch, step) marks of ``app`` in a commit file."""
    with storage.open_text(commit) as lines:
        for line in lines:
            if line.startswith('{"commitInfo"'):
                text = json.loads(line)["commitInfo"].get("userMetadata")
                found = _parsed(text)
                if found is not None and found.get("app") == app:
                    yield int(found["batch"]), str(found["step"])
            elif line.startswith('{"txn"'):
                txn = json.loads(line)["txn"]
                seen = _from_txn(str(txn["appId"]), int(txn["version"]), app)
                if seen is not None:
                    yield seen


def _parsed(text: str | None) -> dict[str, Any] | None:
    if not text or not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    found = value.get(_KEY) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else None


def _from_txn(app_id: str, version: int, app: str) -> tuple[int | None, str] | None:
    """The mark of a transaction id binlogkit wrote before marks: ``app`` (a table's first
    segment), ``app+N`` (its segment N), ``app:truncate:FILE:POS`` (version 0, any batch)."""
    if app_id == app:
        return version, ""
    rest = app_id.removeprefix(app)
    if rest.startswith("+") and rest[1:].isdigit():
        return version, rest[1:]
    if rest.startswith(":truncate:"):
        return None, rest[1:]
    return None


@contextmanager
def marked(spark: Any, mark: Mark) -> Iterator[None]:
    """The session's commits carry ``mark`` meanwhile, also one that changes no row: Delta
    skips such a commit unless told not to, and a later segment of the batch may put rows
    there that a second run of this write would change. The settings are the session's, not
    the thread's: no other write of the session may run meanwhile but one that sets its own
    ``userMetadata`` option (:func:`append_once`)."""
    with session_settings(spark, {USER_METADATA: mark.text(), _SKIP_EMPTY: "false"}):
        yield
