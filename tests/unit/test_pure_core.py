"""The layers import only downward (a walk over the imports), and every event type has a codec.

DESIGN.md: ``binlog/``, ``wire/``, ``protocol/`` and ``gtid.py`` take bytes and
give objects; they import no socket, file, thread or Spark code, which is what
lets one decoder serve files, stdin, sockets, asyncio and Spark executors.
The replication filters (``pipeline/filters.py``) are pure too and are walked
with it. ``io/`` drives them and imports nothing built on it (services, the
``binlogkit.open`` façade, cli, spark, dump, pipeline). The walk reads the
source (statically: importing ``binlogkit`` itself pulls in every layer) and
follows every binlogkit module the walked modules import.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.decoder import OPAQUE_TYPES
from binlogkit.binlog.events import EVENT_CODECS, Event

SRC = Path(binlogkit.__file__).resolve().parent
CORE = [
    "binlogkit.binlog",
    "binlogkit.wire",
    "binlogkit.gtid",
    "binlogkit.protocol",
    "binlogkit.pipeline.filters",
]
FORBIDDEN_MODULES = {
    "_thread",
    "asyncio",
    "concurrent",
    "fcntl",
    "glob",
    "mmap",
    "multiprocessing",
    "os",
    "pathlib",
    "pyspark",
    "select",
    "selectors",
    "shutil",
    "signal",
    "socket",
    "socketserver",
    "ssl",
    "subprocess",
    "tempfile",
    "threading",
}
FORBIDDEN_PACKAGES = {
    "binlogkit.cli",
    "binlogkit.io",
    "binlogkit.sandbox",
    "binlogkit.services",
    "binlogkit.spark",
}
FORBIDDEN_CALLS = {"open", "print", "input"}
ABOVE_IO = {
    "binlogkit.cli",
    "binlogkit.dump",
    "binlogkit.pipeline",
    "binlogkit.sandbox",
    "binlogkit.services",
    "binlogkit.sources",
    "binlogkit.spark",
}


def module_file(name: str) -> Path | None:
    """The source file of a binlogkit module, or None when it does not exist."""
    parts = name.split(".")[1:]
    base = SRC.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def package_modules(roots: list[str]) -> list[str]:
    """Every module of the packages (or modules) ``roots`` that exist."""
    names = []
    for root in roots:
        found = module_file(root)
        if found is None:
            continue
        names.append(root)
        if found.name == "__init__.py":
            for py in sorted(found.parent.rglob("*.py")):
                rel = py.relative_to(SRC).with_suffix("")
                parts = ["binlogkit", *rel.parts]
                if parts[-1] == "__init__":
                    parts.pop()
                names.append(".".join(parts))
    return sorted(set(names))


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """All nodes except those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def imports_of(name: str, source: Path) -> tuple[set[str], list[str]]:
    """The modules ``name`` imports at run time, and its calls of forbidden builtins."""
    tree = ast.parse(source.read_text(), str(source))
    package = name if source.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    calls: list[str] = []
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            for alias in node.names:
                if module_file(f"{module}.{alias.name}") is not None and module.startswith(
                    "binlogkit"
                ):
                    found.add(f"{module}.{alias.name}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FORBIDDEN_CALLS
        ):
            calls.append(f"{node.func.id}() at line {node.lineno}")
    return found, calls


def walk(
    roots: list[str], forbidden: Callable[[str], bool]
) -> Iterator[tuple[str, set[str], list[str]]]:
    """Each module of ``roots``, and each binlogkit module they import that is not
    ``forbidden`` (transitively), with its run-time imports and forbidden calls."""
    todo = list(roots)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        source = module_file(name)
        if source is None:
            continue
        modules, calls = imports_of(name, source)
        yield name, modules, calls
        todo += [m for m in modules if m.startswith("binlogkit.") and not forbidden(m)]


def _in_packages(module: str, packages: set[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _forbidden(module: str) -> bool:
    if module.split(".")[0] in FORBIDDEN_MODULES:
        return True
    if module == "binlogkit":
        return True  # the package root re-exports the file reader
    return _in_packages(module, FORBIDDEN_PACKAGES)


def _above_io(module: str) -> bool:
    return module == "binlogkit" or _in_packages(module, ABOVE_IO)  # the root re-exports the façade


def test_pure_core_imports_no_io() -> None:
    roots = package_modules(CORE)
    assert "binlogkit.binlog.decoder" in roots and "binlogkit.wire" in roots
    problems: list[str] = []
    for name, modules, calls in walk(roots, _forbidden):
        problems += [f"{name} calls {call}" for call in calls]
        problems += [f"{name} imports {module}" for module in sorted(modules) if _forbidden(module)]
    assert not problems, "\n".join(problems)


def test_io_imports_nothing_built_on_it() -> None:
    roots = package_modules(["binlogkit.io"])
    assert "binlogkit.io.files" in roots and "binlogkit.io.binlog_index" in roots
    problems = [
        f"{name} imports {module}"
        for name, modules, _calls in walk(roots, _above_io)
        for module in sorted(modules)
        if _above_io(module)
    ]
    assert not problems, "\n".join(problems)


def test_the_walk_catches_io(tmp_path: Path) -> None:
    """The walk itself can fail: it sees direct, relative and typed-only imports correctly."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import socket\n"
        "from ..io import files\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import threading\n"
        "def f():\n"
        "    import os.path\n"
        "    return open('x')\n"
    )
    modules, calls = imports_of("binlogkit.binlog.bad", bad)
    assert {"socket", "binlogkit.io", "os.path"} <= modules
    assert "threading" not in modules
    assert calls == ["open() at line 8"]
    assert all(_forbidden(m) for m in ("socket", "binlogkit.io", "os.path", "binlogkit"))
    assert not _forbidden("binlogkit.errors")
    assert all(_above_io(m) for m in ("binlogkit.services.relay", "binlogkit.sources", "binlogkit"))
    assert not any(_above_io(m) for m in ("binlogkit.io.files", "binlogkit.binlog", "socket"))


def test_every_event_type_has_a_codec_or_is_deliberately_opaque() -> None:
    missing = sorted(f"{t.name} ({t.value})" for t in EventType if t not in EVENT_CODECS)
    missing = [m for m in missing if EventType[m.split(" ")[0]] not in OPAQUE_TYPES]
    assert not missing, f"event types without a codec: {', '.join(missing)}"


def test_deliberately_opaque_types_have_no_codec() -> None:
    assert not OPAQUE_TYPES & EVENT_CODECS.keys()
    assert set(EventType) >= OPAQUE_TYPES


@pytest.mark.parametrize("code", sorted(EVENT_CODECS))
def test_codecs_are_whole(code: int) -> None:
    """Each registered codec is an Event subclass for that code, with both directions."""
    cls = EVENT_CODECS[code]
    assert issubclass(cls, Event)
    assert code in cls.type_codes
    assert cls.decode.__func__ is not Event.decode.__func__, f"{cls.__name__} has no decode"  # type: ignore[attr-defined]
    assert cls.encode_body is not Event.encode_body, f"{cls.__name__} has no encode_body"
