"""A throwaway MariaDB server in a temporary folder, for tests and demos.

:class:`MariaDBSandbox` initialises a fresh data directory with
``mariadb-install-db``, writes its own ``my.cnf`` (binary log on, row format,
free TCP port on 127.0.0.1, unix socket in a short path), starts ``mariadbd``
in the background, waits until it sends its greeting, and stops it by its pid
(always: on :meth:`stop`, on leaving the ``with`` block, or when start-up
fails). It talks to the server through the ``mariadb`` command-line client
only, so it needs no Python database driver.

Query results (:meth:`MariaDBSandbox.query`) come from the client's ``--xml``
output: NULL is told apart from the text ``'NULL'``, and every other value is
the exact text the server sent, with one exception: the client prints a NUL
byte as a space. Select ``HEX(x)`` for any value that may hold binary data.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType

log = logging.getLogger(__name__)

OptionValue = str | int | bool | tuple[str, ...] | None

DEFAULT_OPTIONS: dict[str, OptionValue] = {
    "server_id": 1,
    "binlog_format": "ROW",
    "binlog_row_image": "FULL",
    "binlog_row_metadata": "FULL",
    "binlog_annotate_row_events": "ON",
    "binlog_checksum": "CRC32",
    "log_bin_compress": "OFF",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_general_ci",
    "max_allowed_packet": "64M",
    # Small and careless: this server lives for seconds and holds test data only.
    "innodb_buffer_pool_size": "32M",
    "innodb_log_file_size": "8M",
    "innodb_flush_log_at_trx_commit": 0,
    "innodb_doublewrite": "OFF",
    "sync_binlog": 0,
    "performance_schema": "OFF",
    "skip_name_resolve": "ON",
}
"""The server settings a sandbox starts with. Options given to the sandbox
override these; an option set to None removes the line; True and False are
written as ON and OFF; a tuple of strings gives one line per string (for
options that may be repeated, such as ``replicate_do_db``)."""

_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes with its NUL; keep a margin
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/libexec", "/usr/local/mysql/bin")
_FIELD = re.compile(rb'<field name="[^"]*"(?: xsi:nil="true" />|>(.*?)</field>)', re.S)
_ROW = re.compile(rb"<row>(.*?)</row>", re.S)


class SandboxError(RuntimeError):
    """The sandbox server could not be set up, started, queried or stopped."""


def find_program(*names: str) -> str | None:
    """The full path of the first of ``names`` found on PATH or in the sbin folders."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for folder in _SBIN:
            candidate = Path(folder, name)
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def mariadbd_path() -> str | None:
    """Where the MariaDB server binary is, or None when it is not installed."""
    return find_program("mariadbd", "mysqld")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _unescape_xml(text: bytes) -> bytes:
    return (
        text.replace(b"&lt;", b"<")
        .replace(b"&gt;", b">")
        .replace(b"&quot;", b'"')
        .replace(b"&apos;", b"'")
        .replace(b"&amp;", b"&")
    )


def parse_xml_rows(output: bytes) -> list[tuple[str | None, ...]]:
    """The rows of the ``mariadb --xml`` output of one or more result sets.

    Values are decoded as UTF-8 with ``surrogateescape``, so
    ``value.encode("utf-8", "surrogateescape")`` gives back the exact bytes.
    """
    rows: list[tuple[str | None, ...]] = []
    for row in _ROW.finditer(output):
        rows.append(
            tuple(
                None
                if field.group(1) is None
                else _unescape_xml(field.group(1)).decode("utf-8", "surrogateescape")
                for field in _FIELD.finditer(row.group(1))
            )
        )
    return rows


def _option_lines(name: str, value: OptionValue) -> Iterator[str]:
    if isinstance(value, tuple):
        for item in value:
            yield f"{name}={item}"
    elif value is not None:
        yield f"{name}={'ON' if value is True else 'OFF' if value is False else value}"


INSTALL_OPTIONS = ("innodb_log_file_size", "innodb_buffer_pool_size")
"""The server options ``mariadb-install-db`` is given (the redo log's size is set by it)."""


def install_datadir(datadir: Path, tmpdir: Path, options: Mapping[str, OptionValue]) -> None:
    """Initialise a fresh data directory with ``mariadb-install-db`` (root without password,
    no test database), given the :data:`INSTALL_OPTIONS` of ``options``."""
    command = [
        find_program("mariadb-install-db", "mysql_install_db") or "mariadb-install-db",
        "--no-defaults",
        f"--datadir={datadir}",
        f"--tmpdir={tmpdir}",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        "--skip-name-resolve",
        f"--innodb-log-file-size={options.get('innodb_log_file_size') or '8M'}",
        f"--innodb-buffer-pool-size={options.get('innodb_buffer_pool_size') or '32M'}",
    ]
    if os.geteuid() == 0:
        command.append("--user=root")
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        raise SandboxError(
            f"mariadb-install-db failed (exit {done.returncode}) for {datadir}:\n"
            + done.stdout.decode(errors="replace")[-2000:]
            + done.stderr.decode(errors="replace")[-2000:]
        )


class DatadirTemplates:
    """Fresh data directories in ``folder``, one per value of the :data:`INSTALL_OPTIONS`:
    ``mariadb-install-db`` runs once for each, and a sandbox given these templates copies
    one (a copy takes a fraction of a second, an install several seconds)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._made: dict[tuple[str, ...], Path] = {}

    def datadir(self, options: Mapping[str, OptionValue]) -> Path:
        """The fresh data directory for a server with ``options`` (made on first use)."""
        key = tuple(str(options.get(name)) for name in INSTALL_OPTIONS)
        if key not in self._made:
            number = len(self._made)
            tmpdir = self.folder / f"tmp-{number}"
            tmpdir.mkdir(parents=True, exist_ok=True)
            install_datadir(self.folder / f"datadir-{number}", tmpdir, options)
            self._made[key] = self.folder / f"datadir-{number}"
        return self._made[key]


class MariaDBSandbox:
    """One throwaway MariaDB server living in ``base_dir``; a context manager.

    ``options`` are server settings written to the ``[mariadbd]`` section of
    its ``my.cnf`` on top of :data:`DEFAULT_OPTIONS` (e.g.
    ``{"binlog_row_image": "MINIMAL", "log_bin_compress": True,
    "gtid_domain_id": 3}``). The binary logs are ``binlog_dir/mysql-bin.NNNNNN``.
    With ``templates``, a new data directory is a copy of theirs instead of a run
    of ``mariadb-install-db``.
    """

    def __init__(
        self,
        base_dir: str | os.PathLike[str],
        *,
        options: Mapping[str, OptionValue] | None = None,
        startup_timeout: float = 60.0,
        templates: DatadirTemplates | None = None,
    ) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.templates = templates
        self.options: dict[str, OptionValue] = {**DEFAULT_OPTIONS, **(options or {})}
        self.startup_timeout = startup_timeout
        self.datadir = self.base_dir / "data"
        self.binlog_dir = self.base_dir / "binlog"
        self.tmpdir = self.base_dir / "tmp"
        self.config_file = self.base_dir / "my.cnf"
        self.error_log = self.base_dir / "error.log"
        self.port = 0
        self.socket = self.base_dir / "mysqld.sock"
        self._socket_dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._client: str | None = None

    # -- life cycle ---------------------------------------------------------

    def __enter__(self) -> MariaDBSandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def url(self) -> str:
        """The server's URL for binlogkit (``mariadb://root@localhost/?socket=...``)."""
        return f"mariadb://root@localhost/?socket={self.socket}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> MariaDBSandbox:
        """Initialise the data directory (first time only), start the server, wait for it."""
        if self._process is not None:
            raise SandboxError("sandbox server already started")
        server = mariadbd_path()
        self._client = find_program("mariadb", "mysql")
        if server is None or self._client is None:
            raise SandboxError(
                "MariaDB is not installed (need mariadbd and mariadb): "
                "apt-get install mariadb-server mariadb-client"
            )
        for folder in (self.base_dir, self.binlog_dir, self.tmpdir):
            folder.mkdir(parents=True, exist_ok=True)
        self._choose_socket()
        self.port = free_port()
        try:
            if not (self.datadir / "mysql").is_dir():
                self._make_datadir()
            self.config_file.write_text(self._config())
            log.debug("starting %s --defaults-file=%s", server, self.config_file)
            self._process = subprocess.Popen(
                [server, f"--defaults-file={self.config_file}"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def begin_stop(self) -> None:
        """Ask the server to shut down (SIGTERM) without waiting for it; :meth:`stop` waits.

        Servers asked first, then stopped, shut down side by side.
        """
        if self._process is not None and self._process.poll() is None and not self._stopping:
            self._process.terminate()
            self._stopping = True

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL after ``timeout`` s)."""
        self.begin_stop()
        process, self._process, self._stopping = self._process, None, False
        if process is not None and process.poll() is None:
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("MariaDB sandbox pid %d ignored SIGTERM; killing it", process.pid)
                process.kill()
                process.wait()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    def restart(self, options: Mapping[str, OptionValue] | None = None) -> MariaDBSandbox:
        """Stop the server and start it again on its data directory, ``options`` on top of its own.

        An option set to None removes it (see :data:`DEFAULT_OPTIONS`).
        """
        self.stop()
        self.options.update(options or {})
        return self.start()

    def _choose_socket(self) -> None:
        if len(os.fsencode(self.socket)) <= _SOCKET_PATH_MAX:
            return
        self._socket_dir = Path(tempfile.mkdtemp(prefix="bk-", dir="/tmp"))
        self.socket = self._socket_dir / "s.sock"

    def _make_datadir(self) -> None:
        """A fresh data directory: a copy of the templates' or one made by mariadb-install-db."""
        if self.templates is None:
            install_datadir(self.datadir, self.tmpdir, self.options)
        else:
            shutil.copytree(self.templates.datadir(self.options), self.datadir)

    def _config(self) -> str:
        lines = ["[mariadbd]"]
        if os.geteuid() == 0:
            lines.append("user=root")
        lines += [
            f"datadir={self.datadir}",
            f"tmpdir={self.tmpdir}",
            f"socket={self.socket}",
            f"pid-file={self.base_dir / 'mariadbd.pid'}",
            f"log-error={self.error_log}",
            f"port={self.port}",
            "bind-address=127.0.0.1",
            f"log_bin={self.binlog_dir / 'mysql-bin'}",
        ]
        lines += [line for k, v in self.options.items() for line in _option_lines(k, v)]
        return "\n".join(lines) + "\n"

    def _wait_ready(self) -> None:
        """Wait until the server's socket answers with a protocol greeting."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise SandboxError(
                    f"mariadbd exited with code {self._process.returncode} during start-up; "
                    f"its error log ends:\n{self.error_log_tail()}"
                )
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(2.0)
                    s.connect(os.fspath(self.socket))
                    greeting = s.recv(5)
                if len(greeting) == 5 and greeting[4] == 10:  # protocol version 10
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise SandboxError(
            f"mariadbd did not answer within {self.startup_timeout} s; "
            f"its error log ends:\n{self.error_log_tail()}"
        )

    def error_log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's error log (empty when it has none)."""
        try:
            text = self.error_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- SQL ------------------------------------------------------------------

    def client_command(self, *extra: str, database: str | None = None) -> list[str]:
        """The ``mariadb`` command line that connects to this server as root."""
        if self._client is None:
            raise SandboxError("sandbox server not started")
        command = [
            self._client,
            "--no-defaults",
            f"--socket={self.socket}",
            "--user=root",
            "--default-character-set=utf8mb4",
            *extra,
        ]
        if database is not None:
            command.append(database)
        return command

    def _run_client(self, sql: str, extra: Sequence[str], database: str | None) -> bytes:
        if not self.running:
            raise SandboxError("sandbox server is not running")
        done = subprocess.run(
            self.client_command(*extra, database=database),
            input=sql.encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise SandboxError(
                f"SQL failed: {done.stderr.decode(errors='replace').strip()}\n"
                f"in: {sql[:500]}{'...' if len(sql) > 500 else ''}"
            )
        return done.stdout

    def execute(self, sql: str, *, database: str | None = None) -> None:
        """Run one or more ``;``-separated statements; raise on the first error."""
        self._run_client(sql, ("--batch",), database)

    def query(self, sql: str, *, database: str | None = None) -> list[tuple[str | None, ...]]:
        """The rows of a query as text values (None for NULL); see the module doc."""
        return parse_xml_rows(self._run_client(sql, ("--xml",), database))

    def variable(self, name: str) -> str | None:
        """The value of a global server variable."""
        rows = self.query(f"SHOW GLOBAL VARIABLES LIKE '{name}'")
        return rows[0][1] if rows else None

    # -- binary logs --------------------------------------------------------------

    def binlog_files(self) -> list[Path]:
        """The server's binary log files, oldest first (as SHOW BINARY LOGS lists them)."""
        return [self.binlog_dir / str(row[0]) for row in self.query("SHOW BINARY LOGS")]

    def flush_binlogs(self) -> list[Path]:
        """Close the current binary log and open a new one; returns all files, oldest first.

        Every file but the last is then complete and no longer written to.
        """
        self.execute("FLUSH BINARY LOGS")
        return self.binlog_files()

    def wait_for_checkpoint(self, timeout: float = 60) -> str:
        """Wait until the active binlog's last BINLOG_CHECKPOINT names that file; return its name.

        After a rotation MariaDB writes, asynchronously (once the engines have made
        the older files' transactions durable), a BINLOG_CHECKPOINT naming the oldest
        file still needed for crash recovery. Once it names the active file, no
        older file is pending and the server writes nothing more by itself until
        the next rotation: a stream and a read of the files then end at the same event.
        """
        deadline = time.monotonic() + timeout
        while True:
            active = str(self.query("SHOW MASTER STATUS")[0][0])
            checkpoints = [
                row[5]
                for row in self.query(f"SHOW BINLOG EVENTS IN '{active}'")
                if row[2] == "Binlog_checkpoint"
            ]
            if checkpoints and checkpoints[-1] == active:
                return active
            if time.monotonic() > deadline:
                raise SandboxError(
                    f"no BINLOG_CHECKPOINT naming {active} after {timeout} s: {checkpoints}"
                )
            time.sleep(0.1)

    # -- replication --------------------------------------------------------------

    @property
    def gtid_binlog_pos(self) -> str:
        """The GTID of the last transaction of each domain in this server's binlog."""
        return self.variable("gtid_binlog_pos") or ""

    def replicate_from(self, primary: MariaDBSandbox, gtid_slave_pos: str = "") -> None:
        """Replicate from ``primary``, the GTIDs after ``gtid_slave_pos`` (those applied already).

        The replica connects over TCP as a user ``repl`` it creates on the
        primary (outside the primary's binlog) and asks for GTIDs after
        ``gtid_slave_pos`` (``MASTER_USE_GTID=slave_pos``). Its ``replicate_*``
        options are those of its config file (see :meth:`restart`).
        """
        primary.execute(
            "SET sql_log_bin = 0; CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1'; "
            "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'"
        )
        self.execute(
            "STOP SLAVE; RESET SLAVE ALL; "
            f"SET GLOBAL gtid_slave_pos = '{gtid_slave_pos}'; "
            f"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {primary.port}, "
            "MASTER_USER = 'repl', MASTER_USE_GTID = slave_pos; START SLAVE"
        )

    def replica_status(self) -> dict[str, str]:
        """``SHOW SLAVE STATUS`` as field: value (empty when this server is no replica)."""
        text = self._run_client("SHOW SLAVE STATUS", ("--vertical",), None)
        fields = (line.partition(b":") for line in text.splitlines() if b":" in line)
        return {k.strip().decode(): v.strip().decode(errors="replace") for k, _, v in fields}

    def wait_for_gtid(self, gtid_pos: str, timeout: float = 60) -> None:
        """Wait until this replica has applied ``gtid_pos``; raise when it stops with an error."""
        deadline = time.monotonic() + timeout
        while self.query(f"SELECT MASTER_GTID_WAIT('{gtid_pos}', 0.5)")[0][0] != "0":
            status = self.replica_status()
            failed = (
                status.get("Last_SQL_Errno", "0") != "0" or status.get("Last_IO_Errno", "0") != "0"
            )
            if failed or time.monotonic() > deadline:
                problem = "stopped" if failed else f"did not get there in {timeout} s"
                raise SandboxError(
                    f"replica {problem} on its way to {gtid_pos}: SQL thread "
                    f"{status.get('Last_SQL_Error')!r}, IO thread {status.get('Last_IO_Error')!r}, "
                    f"at {self.variable('gtid_slave_pos')}"
                )

    @property
    def index_file(self) -> Path:
        """The binary log index file (lists the files, one per line)."""
        return self.binlog_dir / "mysql-bin.index"
