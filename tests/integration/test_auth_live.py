"""Auth plugins against a live MariaDB 10.11: credentials, logins, TLS, errors, auth switch.

The server loads auth_ed25519 and serves TLS (certificates from tls_certs.py).
Its handshake offers mysql_native_password, so every ed25519 login goes
through an auth switch request.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from tls_certs import TlsFiles, server_tls_options

from binlogkit.errors import AuthError
from binlogkit.protocol.auth import Accept, Secret, client_auth, make_credential, server_auth
from binlogkit.protocol.auth.client_ed25519 import auth_string, key_from_auth_string
from binlogkit.sandbox import MariaDBSandbox

PASSWORDS = ["secret", "", "pässwörd ü", "x" * 200, 'it\'s "quoted"']
USERS = {
    # name: (plugin, password, require clause)
    "native_user": ("mysql_native_password", "native-pw", ""),
    "ed_user": ("ed25519", "ed-pw", ""),
    "ed_empty": ("ed25519", "", ""),
    "ed_tls": ("ed25519", "ed-tls-pw", "REQUIRE SSL"),
}
# MariaDB 10.11 stores nothing for ``ed25519 USING PASSWORD('')`` (and then lets
# nobody in), so the empty-password account gets the key of the empty password
# from MariaDB's test suite (mysql-test/suite/plugins/r/auth_ed25519.result).
EMPTY_PASSWORD_KEY = "4LH+dBF+G5W2CKTyId8xR3SyDqZoQjUNUVNxx8aWbG4"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class AuthServer:
    server: MariaDBSandbox
    tls: TlsFiles


@pytest.fixture(scope="module")
def auth_env(
    mariadb_factory: Callable[..., MariaDBSandbox],
    tls_files: TlsFiles,
) -> AuthServer:
    """The server and its TLS files."""
    server = mariadb_factory(
        "auth", plugin_load_add="auth_ed25519", **server_tls_options(tls_files)
    )
    statements = ['CREATE FUNCTION ed25519_password RETURNS STRING SONAME "auth_ed25519.so"']
    for user, (plugin, password, require) in USERS.items():
        using = f"PASSWORD({_sql_string(password)})"
        if plugin == "ed25519" and not password:
            using = f"'{EMPTY_PASSWORD_KEY}'"
        statements.append(
            f"CREATE USER '{user}'@'%' IDENTIFIED VIA {plugin} USING {using} {require}"
        )
        statements.append(f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'%'")
    server.execute(";\n".join(statements))
    return AuthServer(server, tls_files)


@pytest.fixture
def auth_server(auth_env: AuthServer) -> MariaDBSandbox:
    return auth_env.server


# -- credentials: our makers give what the server stores ------------------------------


@pytest.mark.parametrize("password", PASSWORDS)
def test_credentials_match_server(auth_server: MariaDBSandbox, password: str) -> None:
    literal = _sql_string(password)
    [(native, ed)] = auth_server.query(f"SELECT PASSWORD({literal}), ed25519_password({literal})")
    expected_native = "*" + make_credential("mysql_native_password", password).hex().upper()
    assert native == (expected_native if password else "")
    assert ed == auth_string(make_credential("client_ed25519", password))


def test_ed25519_account_made_from_our_key(auth_server: MariaDBSandbox) -> None:
    """An account created with our public key string logs in with the password (below)."""
    key = auth_string(make_credential("client_ed25519", "our-key-pw"))
    auth_server.execute(
        f"CREATE USER IF NOT EXISTS 'ed_ours'@'%' IDENTIFIED VIA ed25519 USING '{key}'"
    )
    [(create,)] = auth_server.query("SHOW CREATE USER 'ed_ours'@'%'")
    assert f"USING '{key}'" in create


def test_our_verifier_accepts_mariadb_stored_key(auth_server: MariaDBSandbox) -> None:
    [(create,)] = auth_server.query("SHOW CREATE USER 'ed_user'@'%'")
    stored = create.split("USING '")[1].split("'")[0]
    verifier = server_auth("client_ed25519")(key_from_auth_string(stored))
    signature = client_auth("client_ed25519")(Secret("ed-pw")).start(verifier.scramble())
    assert verifier.receive(signature) == Accept()


# -- logins through binlogkit's own driver ---------------------------------------------


def _driver() -> tuple[Any, Any]:
    mysql = pytest.importorskip("binlogkit.io.mysql", reason="io/mysql.py not written yet")
    spec = pytest.importorskip("binlogkit.protocol.spec")
    return mysql.MySQLConnection, spec


def _connect(
    server: MariaDBSandbox, user: str, password: str, *, tls: str = "disabled", **kw: Any
) -> Any:
    connection_class, spec_module = _driver()
    spec = spec_module.ConnectionSpec(
        host="127.0.0.1",
        port=server.port,
        user=user,
        password=Secret(password),
        tls=spec_module.TlsOptions(mode=tls, **kw),
        connect_timeout=10,
        read_timeout=30,
    )
    return connection_class.connect(spec)


def _who(connection: Any) -> tuple[str | None, str | None]:
    result = connection.query(
        "SELECT CURRENT_USER(), (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
        " WHERE VARIABLE_NAME = 'SSL_VERSION')"
    )
    [(user, ssl_version)] = result.rows
    return user, ssl_version


@pytest.mark.parametrize("tls", ["disabled", "required"])
@pytest.mark.parametrize("user", ["native_user", "ed_user", "ed_empty"])
def test_login(auth_server: MariaDBSandbox, user: str, tls: str) -> None:
    password = USERS[user][1]
    with _connect(auth_server, user, password, tls=tls) as connection:
        who, ssl_version = _who(connection)
    assert who == f"{user}@%"
    assert bool(ssl_version) == (tls == "required")


def test_ed25519_with_verified_tls(auth_env: AuthServer) -> None:
    with _connect(
        auth_env.server, "ed_tls", "ed-tls-pw", tls="verify-identity", ca=str(auth_env.tls.ca)
    ) as connection:
        who, ssl_version = _who(connection)
    assert who == "ed_tls@%" and ssl_version


def test_account_made_from_our_key_logs_in(auth_server: MariaDBSandbox) -> None:
    test_ed25519_account_made_from_our_key(auth_server)
    with _connect(auth_server, "ed_ours", "our-key-pw") as connection:
        assert _who(connection)[0] == "ed_ours@%"


def test_auth_switch_to_ed25519(auth_server: MariaDBSandbox) -> None:
    """The handshake offers mysql_native_password; the ed25519 account makes the server switch."""
    with _connect(auth_server, "ed_user", "ed-pw") as connection:
        assert _who(connection)[0] == "ed_user@%"
        assert connection.protocol.handshake.auth_plugin_name == "mysql_native_password"
        assert connection.protocol.auth_plugin == "client_ed25519"
    with _connect(auth_server, "native_user", "native-pw") as connection:
        assert connection.protocol.auth_plugin == "mysql_native_password"


@pytest.mark.parametrize("user", ["native_user", "ed_user", "ed_empty"])
@pytest.mark.parametrize("tls", ["disabled", "required"])
def test_wrong_password(auth_server: MariaDBSandbox, user: str, tls: str) -> None:
    wrong = "Wr0ng-Passw0rd-xyz"
    with pytest.raises(AuthError) as info:
        _connect(auth_server, user, wrong, tls=tls)
    error = info.value
    assert error.code == 1045
    assert error.sql_state == "28000"
    assert f"Access denied for user '{user}'" in error.server_message
    assert "using password: YES" in error.server_message
    for text in (str(error), repr(error), error.server_message):
        assert wrong not in text


def test_tls_account_refused_without_tls(auth_server: MariaDBSandbox) -> None:
    with pytest.raises(AuthError) as info:
        _connect(auth_server, "ed_tls", "ed-tls-pw")
    assert info.value.code == 1045


def test_unix_socket_login(auth_server: MariaDBSandbox) -> None:
    connection_class, spec_module = _driver()
    spec = spec_module.ConnectionSpec(
        unix_socket=str(auth_server.socket), user="ed_user", password=Secret("ed-pw")
    )
    with connection_class.connect(spec) as connection:
        assert _who(connection)[0] == "ed_user@%"


def test_password_not_in_spec_repr(auth_server: MariaDBSandbox) -> None:
    _, spec_module = _driver()
    spec = spec_module.ConnectionSpec.from_url(
        f"mysql://ed_user:S3cr3t-Pw@127.0.0.1:{auth_server.port}/"
    )
    assert "S3cr3t-Pw" not in repr(spec) and "S3cr3t-Pw" not in str(spec)
    assert os.environ.get("MYSQL_PWD") != "S3cr3t-Pw"
