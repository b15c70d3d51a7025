"""``binlogkit serve``'s users and their passwords, as the command line gives them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli.main import cli
from binlogkit.cli.serve import _users


def test_users_and_their_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    password_file = tmp_path / "pw"
    password_file.write_text("from-file\n")
    users = _users(
        ("repl:a:b", "ed", "plain"),
        ("ed=client_ed25519",),
        None,
        str(password_file),
        None,
    )
    assert [(u.name, u.plugin) for u in users] == [
        ("repl", "mysql_native_password"),
        ("ed", "client_ed25519"),
        ("plain", "mysql_native_password"),
    ]
    assert [u.password.reveal() for u in users] == [b"a:b", b"from-file", b"from-file"]
    assert "a:b" not in repr(users) and "from-file" not in repr(users)
    monkeypatch.setenv("MYSQL_PWD", "from-env")
    (user,) = _users(("repl",), ("client_ed25519",), None, None, None)
    assert (user.plugin, user.password.reveal()) == ("client_ed25519", b"from-env")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "repl"], "user repl has no password"),
        (["--user", ":pw"], "a user needs a name"),
        (["--user", "repl:pw", "--auth-plugin", "sha256_password"], "is not one of"),
        (["--user", "repl:pw", "--auth-plugin", "bob=client_ed25519"], "no --user bob"),
        (["--user", "repl:pw", "--tls-key", "{key}"], "--tls-cert and --tls-key go together"),
        (["--user", "repl:pw", "--require-tls"], "--require-tls needs --tls-cert and --tls-key"),
    ],
)
def test_bad_settings_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    key = tmp_path / "key.pem"
    key.write_text("not a key")
    args = [a.replace("{key}", str(key)) for a in args]
    result = CliRunner().invoke(cli, ["serve", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert ":pw" not in result.output.replace("--user :pw", "")


def test_bad_key_file_names_the_file(tmp_path: Path) -> None:
    """``serve --key-file``: a file that is no key file stops before serving, naming it."""
    keys = tmp_path / "keys.txt"
    keys.write_text("1;not hex\n")
    result = CliRunner().invoke(
        cli, ["serve", str(tmp_path), "--user", "r:pw", "--key-file", str(keys)]
    )
    assert result.exit_code == 1, result.output
    assert f"Error: {keys}" in result.output and "line 1 is not ID;HEXKEY" in result.output
