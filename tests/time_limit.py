"""A time limit for a block of a test, so that a hang fails instead of blocking the run.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class TimeLimitExceeded(BaseException):
    """The block ran past its time limit.

    Not even an Exception, so no code under test can take it for an error of
    its own (or for a reason to fall back to another path) and carry on.
    """


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in the block once it has run ``seconds`` (SIGALRM)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeLimitExceeded(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
