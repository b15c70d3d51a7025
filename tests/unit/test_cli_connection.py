"""Passwords as MySQL's clients take them (MYSQL_PWD, a prompt, files), and kept out of ps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_run import invoke
from click.testing import CliRunner

from binlogkit.cli.connection import PROMPT, resolve_password, server_spec


def password(url: str, *args: str | None) -> bytes:
    value, password_file, defaults_file = (*args, None, None, None)[:3]
    return server_spec(url, value, password_file, defaults_file).password.reveal()


def test_environment_when_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYSQL_PWD", "from-env")
    assert password("mysql://u@h") == b"from-env"
    assert password("mysql://u:in-url@h") == b"in-url"
    assert password("mysql://u:in-url@h", "given") == b"given"


def test_password_and_option_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYSQL_PWD", "from-env")
    (tmp_path / "pw").write_text("from-file\nsecond line\n")
    (tmp_path / "my.cnf").write_text(
        '[mysql]\npassword = other\n[client]\nuser = repl\npassword = "it\'s"\n'
    )
    assert password("mysql://u@h", None, str(tmp_path / "pw")) == b"from-file"
    spec = server_spec("mysql://h", None, None, str(tmp_path / "my.cnf"))
    assert (spec.user, spec.password.reveal()) == ("repl", b"it's")
    (tmp_path / "host.cnf").write_text("[client]\nhost = db1\nport = 3307\n")
    spec = server_spec("mysql://", None, None, str(tmp_path / "host.cnf"))
    assert (spec.host, spec.port) == ("db1", 3307)
    assert password("mysql://u@h", None, str(tmp_path / "pw"), str(tmp_path / "my.cnf")) == (
        b"from-file"
    )


def test_bad_option_file(tmp_path: Path) -> None:
    (tmp_path / "my.cnf").write_text("password = outside any section\n")
    with pytest.raises(click.BadParameter, match="not a MySQL option file"):
        server_spec("mysql://h", None, None, str(tmp_path / "my.cnf"))


def test_prompt_for_p_without_a_value() -> None:
    @click.command()
    def ask() -> None:
        click.echo(f"<{resolve_password('mysql://u@h', PROMPT, None, {})}>")

    result = CliRunner().invoke(ask, input="typed\n")
    assert result.stdout.endswith("<typed>\n")


SCRUB = """
import sys
from binlogkit.cli.connection import resolve_password
resolve_password(sys.argv[1], sys.argv[2][2:], None, {})  # as click gives -pSECRET
print(open("/proc/self/cmdline", "rb").read().replace(b"\\0", b" ").decode())
"""


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="scrubbing needs Linux's /proc")
def test_passwords_on_the_command_line_are_scrubbed() -> None:
    args = ["mysql://repl:url-secret@db:3306", "-psecret-p"]
    done = subprocess.run(
        [sys.executable, "-c", SCRUB, *args], capture_output=True, text=True, check=True
    )
    shown = done.stdout
    assert "url-secret" not in shown and "secret-p" not in shown, shown
    assert "mysql://repl:xxxxxxxxxx@db:3306 -pxxxxxxxx" in shown


@pytest.mark.parametrize(
    "args", [["tail", "--oldest"], ["tail", "--oldest", "--non-blocking"], ["relay", "--to"]]
)
def test_a_refused_first_connection_ends_the_command(tmp_path: Path, args: list[str]) -> None:
    if args[-1] == "--to":
        args = [*args, str(tmp_path / "copy")]
    run = invoke(args[0], "mysql://u@127.0.0.1:1", *args[1:], seconds=20)
    assert run.failed_cleanly() is None, run.failed_cleanly()
    assert "cannot connect to 127.0.0.1:1" in run.stderr
