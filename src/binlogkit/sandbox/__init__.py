"""Throwaway MariaDB servers and a deterministic workload, for tests and the demo."""

from binlogkit.sandbox.server import (
    DEFAULT_OPTIONS,
    DatadirTemplates,
    MariaDBSandbox,
    SandboxError,
    mariadbd_path,
)

__all__ = ["DEFAULT_OPTIONS", "DatadirTemplates", "MariaDBSandbox", "SandboxError", "mariadbd_path"]
