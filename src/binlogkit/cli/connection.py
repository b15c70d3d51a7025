"""A server connection from the command line: its password, kept out of ``ps``, and retries.

In order: ``-p``/``--password`` (with no value: a prompt), the URL's
password, ``--password-file`` (its first line), ``--defaults-extra-file``
(the ``password`` of its ``[client]`` section, as in a MySQL option file),
then the ``MYSQL_PWD`` environment variable. A password that had to come on
the command line is overwritten in the process's arguments (what ``ps`` and
``/proc/PID/cmdline`` show), as the MySQL clients do.

A first connection that fails is final unless ``--connect-retries`` says
otherwise (a wrong host or port does not heal); once one has worked, the
services reconnect by themselves.
"""

from __future__ import annotations

import configparser
import logging
import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import click

if TYPE_CHECKING:
    from binlogkit.protocol.spec import ConnectionSpec
    from binlogkit.services.replica_stream import Backoff

__all__ = [
    "PROMPT",
    "client_settings",
    "credential_options",
    "first_retries",
    "resolve_password",
    "retry_option",
    "scrub_argv",
    "server_spec",
    "settings_port",
]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

PROMPT = "\0prompt"
"""The value of ``-p`` given without a password: ask for it."""


def credential_options(command: F) -> F:
    """Decorator: ``-p/--password [PASSWORD]``, ``--password-file``, ``--defaults-extra-file``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def retry_option(command: F) -> F:
    """Decorator: ``--connect-retries N`` (see :func:`first_retries`)."""
    return click.option(
        "--connect-retries",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Retry a first connection that fails this many times (later ones: always).",
    )(command)


def first_retries(backoff: Backoff, retries: int) -> Backoff:
    """``backoff`` with ``retries`` attempts before a connection has worked."""
    return replace(backoff, first_attempts=retries)


_OPTIONS = (
    click.option(
        "-p",
        "--password",
        is_flag=False,
        flag_value=PROMPT,
        help="Password on the server; with no value, asked for (also: MYSQL_PWD).",
    ),
    click.option(
        "--password-file",
        type=click.Path(dir_okay=False),
        help="Read the password from this file's first line.",
    ),
    click.option(
        "--defaults-extra-file",
        type=click.Path(dir_okay=False),
        help="A MySQL option file: user, password, host, port, socket of its [client] section.",
    ),
)


def client_settings(path: str | None) -> dict[str, str]:
    """The ``[client]`` settings of a MySQL option file (quotes removed); none without a file."""
    if path is None:
        return {}
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False)
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
    except configparser.Error as err:
        raise click.BadParameter(
            f"{path}: not a MySQL option file ({err.message.splitlines()[0]})",
            param_hint="--defaults-extra-file",
        ) from None
    if not parser.has_section("client"):
        return {}
    out = {}
    for key, value in parser.items("client"):
        text = (value or "").strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        out[key.replace("_", "-")] = text
    return out


def settings_port(settings: dict[str, str]) -> int | None:
    """The port of :func:`client_settings`, when it is a number."""
    port = settings.get("port", "")
    return int(port) if port.isdigit() else None


def resolve_password(
    url: str | None, password: str | None, password_file: str | None, settings: dict[str, str]
) -> str | None:
    """The password the options give (see the module doc); None: the URL's, or none.

    A password on the command line (``-pSECRET``, the URL's) is scrubbed from ``ps``.
    """
    url_password = urlsplit(url).password if url else None
    if url and url_password:
        hidden = "x" * len(url_password)
        scrub_argv(url, url.replace(f":{url_password}@", f":{hidden}@", 1))
    if password == PROMPT:
        return click.prompt("Enter password", hide_input=True, default="", show_default=False)
    if password is not None:
        scrub_argv(password, "x" * len(password))
        return password
    if url_password:
        return None
    if password_file is not None:
        with open(password_file, encoding="utf-8") as f:
            return f.readline().rstrip("\r\n")
    if "password" in settings:
        return settings["password"]
    return os.environ.get("MYSQL_PWD")


def server_spec(
    url: str, password: str | None, password_file: str | None, defaults_file: str | None
) -> ConnectionSpec:
    """The connection of ``url`` with the password and ``[client]`` settings of the options."""
    from binlogkit.protocol.spec import ConnectionSpec

    settings = client_settings(defaults_file)
    spec = ConnectionSpec.from_url(url)
    parts = urlsplit(url)
    changes: dict[str, Any] = {}
    if parts.username is None and "user" in settings:
        changes["user"] = settings["user"]
    if not parts.hostname and "host" in settings:
        changes["host"] = settings["host"]
    if parts.port is None and settings_port(settings) is not None:
        changes["port"] = settings_port(settings)
    if spec.unix_socket is None and "socket" in settings:
        changes["unix_socket"] = settings["socket"]
    spec = replace(spec, **changes)
    chosen = resolve_password(url, password, password_file, settings)
    return spec if chosen is None else spec.with_password(chosen)


def scrub_argv(argument: str, shown: str) -> None:
    """Show ``shown`` for the process argument ``argument`` (or ``-pARG``, ``--password=ARG``,
    ``--user=ARG``).

    ``shown`` has the same length. What ``ps`` shows changes; Linux only
    (through ``/proc/self/mem``). Where that fails, a debug message says so.
    """
    target = argument.encode("utf-8", "surrogateescape")
    hidden = shown.encode("utf-8", "surrogateescape")
    if not target or len(hidden) != len(target):
        return
    prefixes = (b"", b"-p", b"--password=", b"--user=")
    forms = {prefix + target: prefix + hidden for prefix in prefixes}
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48, 49)
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            args = mem.read(end - start)
            scrubbed = b"\0".join(forms.get(a, a) for a in args.split(b"\0"))
            if scrubbed != args:
                mem.seek(start)
                mem.write(scrubbed)
    except (OSError, IndexError, ValueError) as err:
        log.debug("the password stays visible in the process's arguments: %s", err)
