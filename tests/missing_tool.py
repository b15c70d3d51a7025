"""A program a test needs is not installed: the test skips, except in CI.

In CI (the ``CI`` environment variable set) it fails instead: CI must install
what the tests need (scripts/test.sh does), and a silent skip would hide that it
did not.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing_tool(reason: str) -> NoReturn:
    """Skip the test for ``reason``; in CI fail it, saying CI must have the tool."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} — CI must have it", pytrace=False)
    pytest.skip(reason)
