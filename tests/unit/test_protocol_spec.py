"""ConnectionSpec and TlsOptions: URL parsing, TLS modes, and a password that never shows."""

from __future__ import annotations

import pickle

import pytest

from binlogkit.errors import AuthError, ProtocolError, ServerError
from binlogkit.protocol.auth import Secret
from binlogkit.protocol.spec import ConnectionSpec, TlsMode, TlsOptions


def test_url_full() -> None:
    spec = ConnectionSpec.from_url(
        "mysql://repl:p%40ss%3Aw0rd@db.example.org:3307/shop"
        "?ssl-mode=verify-identity&ssl-ca=/ca.pem&ssl-cert=/c.pem&ssl-key=/k.pem"
        "&connect-timeout=3&read-timeout=30"
    )
    assert (spec.host, spec.port, spec.user, spec.database) == (
        "db.example.org",
        3307,
        "repl",
        "shop",
    )
    assert spec.password.reveal() == b"p@ss:w0rd"
    assert spec.tls == TlsOptions(TlsMode.VERIFY_IDENTITY, "/ca.pem", "/c.pem", "/k.pem")
    assert (spec.connect_timeout, spec.read_timeout) == (3.0, 30.0)
    assert "p@ss" not in repr(spec) and "w0rd" not in str(spec)


def test_url_defaults_socket_and_mariadb_scheme() -> None:
    spec = ConnectionSpec.from_url("mariadb://root@localhost?socket=/run/mysqld/mysqld.sock")
    assert spec.port == 3306 and spec.database is None and spec.password == Secret()
    assert spec.unix_socket == "/run/mysqld/mysqld.sock" and spec.secure_transport
    assert spec.tls.mode is TlsMode.PREFERRED
    assert spec.address == "/run/mysqld/mysqld.sock"
    # a CA without a mode means: verify the server with it
    assert ConnectionSpec.from_url("mysql://h?ssl-ca=/ca.pem").tls.mode is TlsMode.VERIFY_CA


@pytest.mark.parametrize(
    "url",
    [
        "postgres://h/db",
        "mysql://h:notaport",
        "mysql://h?ssl-mode=sometimes",
        "mysql://h?sslmode=required",
        "mysql://h?read-timeout=soon",
        "mysql://h?ssl-key=/k.pem",
    ],
)
def test_bad_urls(url: str) -> None:
    with pytest.raises(ProtocolError):
        ConnectionSpec.from_url(url)


def test_tls_modes() -> None:
    assert not TlsMode.DISABLED.wanted
    assert TlsMode.PREFERRED.wanted and not TlsMode.PREFERRED.required
    assert all(m.required for m in (TlsMode.REQUIRED, TlsMode.VERIFY_CA, TlsMode.VERIFY_IDENTITY))
    assert TlsMode.parse("VERIFY_IDENTITY") is TlsMode.VERIFY_IDENTITY


def test_password_given_as_text_is_kept_secret() -> None:
    spec = ConnectionSpec(password="hunter2")  # type: ignore[arg-type]
    assert isinstance(spec.password, Secret) and spec.password.reveal() == b"hunter2"
    assert "hunter2" not in repr(spec)
    assert "hunter2" not in repr(spec.with_password("other"))


def test_server_errors_pickle() -> None:
    for err in (ServerError(1146, "42S02", "Table 'a.b' doesn't exist"), AuthError(1045, "", "no")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert (back.code, back.sql_state, back.server_message) == (
            err.code,
            err.sql_state,
            err.server_message,
        )
