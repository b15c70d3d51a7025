"""The receiver threads of binary logs that are still running, for tests that no thread is left.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

import threading
import time


def receiver_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("binlogkit-")]


def receivers_left(seconds: float = 5.0) -> list[threading.Thread]:
    """The receiver threads still running after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while (left := receiver_threads()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left
