"""TLS on the blocking driver against a MariaDB serving the test CA's certificates.

The server says itself whether the session is encrypted (``Ssl_cipher``,
``Ssl_version`` session status); accounts ``REQUIRE SSL`` / ``REQUIRE X509``
refuse plain connections or connections without a client certificate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tls_certs import TLS_USERS, TlsFiles, make_tls_files

from binlogkit.errors import AuthError, ProtocolError
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.auth import Secret
from binlogkit.protocol.spec import ConnectionSpec, TlsMode, TlsOptions
from binlogkit.sandbox import MariaDBSandbox


def spec(
    server: MariaDBSandbox, user: str, tls: TlsOptions, host: str = "127.0.0.1"
) -> ConnectionSpec:
    return ConnectionSpec(
        host=host, port=server.port, user=user, password=Secret(TLS_USERS[user][0]), tls=tls
    )


def cipher(conn: MySQLConnection) -> str | None:
    rows = conn.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'").rows
    return rows[0][1] if rows else None


@pytest.mark.parametrize("mode", [TlsMode.PREFERRED, TlsMode.REQUIRED])
def test_tls_without_verification(tls_mariadb: MariaDBSandbox, mode: TlsMode) -> None:
    with MySQLConnection.connect(spec(tls_mariadb, "tls_user", TlsOptions(mode=mode))) as conn:
        assert conn.tls_active
        assert cipher(conn)
        version = conn.query("SHOW SESSION STATUS LIKE 'Ssl_version'").rows[0][1]
        assert version is not None and version.startswith("TLS")


def test_require_ssl_account_refuses_plain(tls_mariadb: MariaDBSandbox) -> None:
    plain = spec(tls_mariadb, "tls_user", TlsOptions(mode=TlsMode.DISABLED))
    with pytest.raises(AuthError) as info:
        MySQLConnection.connect(plain)
    assert info.value.code == 1045


def test_verify_ca_and_identity(tls_mariadb: MariaDBSandbox, tls_files: TlsFiles) -> None:
    for mode in (TlsMode.VERIFY_CA, TlsMode.VERIFY_IDENTITY):
        for host in ("127.0.0.1", "localhost"):
            options = TlsOptions(mode=mode, ca=str(tls_files.ca))
            with MySQLConnection.connect(spec(tls_mariadb, "tls_user", options, host)) as conn:
                assert conn.tls_active and cipher(conn)


def test_verify_identity_rejects_wrong_name(
    tls_mariadb: MariaDBSandbox, tls_files: TlsFiles
) -> None:
    options = TlsOptions(
        mode=TlsMode.VERIFY_IDENTITY, ca=str(tls_files.ca), server_hostname="db.example.org"
    )
    with pytest.raises(ProtocolError, match="TLS handshake"):
        MySQLConnection.connect(spec(tls_mariadb, "tls_user", options))
    # verify-ca does not check the name
    options = TlsOptions(
        mode=TlsMode.VERIFY_CA, ca=str(tls_files.ca), server_hostname="db.example.org"
    )
    with MySQLConnection.connect(spec(tls_mariadb, "tls_user", options)) as conn:
        assert conn.tls_active


def test_verify_ca_rejects_other_ca(tls_mariadb: MariaDBSandbox, tmp_path: Path) -> None:
    other = make_tls_files(tmp_path / "other")
    options = TlsOptions(mode=TlsMode.VERIFY_CA, ca=str(other.ca))
    with pytest.raises(ProtocolError, match="TLS handshake"):
        MySQLConnection.connect(spec(tls_mariadb, "tls_user", options))


def test_client_certificate(tls_mariadb: MariaDBSandbox, tls_files: TlsFiles) -> None:
    without = TlsOptions(mode=TlsMode.VERIFY_IDENTITY, ca=str(tls_files.ca))
    with pytest.raises(AuthError):
        MySQLConnection.connect(spec(tls_mariadb, "x509_user", without))
    with_cert = TlsOptions(
        mode=TlsMode.VERIFY_IDENTITY,
        ca=str(tls_files.ca),
        cert=str(tls_files.client_cert),
        key=str(tls_files.client_key),
    )
    with MySQLConnection.connect(spec(tls_mariadb, "x509_user", with_cert)) as conn:
        assert conn.query("SELECT CURRENT_USER()").rows == [("x509_user@%",)]


def test_url_with_tls_options(tls_mariadb: MariaDBSandbox, tls_files: TlsFiles) -> None:
    url = (
        f"mariadb://tls_user:{TLS_USERS['tls_user'][0]}@localhost:{tls_mariadb.port}"
        f"?ssl-mode=verify-identity&ssl-ca={tls_files.ca}"
    )
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        assert conn.tls_active


def test_tls_over_unix_socket(tls_mariadb: MariaDBSandbox) -> None:
    options = TlsOptions(mode=TlsMode.REQUIRED)
    root = ConnectionSpec(unix_socket=str(tls_mariadb.socket), user="root", tls=options)
    with MySQLConnection.connect(root) as conn:
        assert conn.tls_active and cipher(conn)


def test_required_fails_without_server_tls(mariadb_factory) -> None:  # type: ignore[no-untyped-def]
    plain = mariadb_factory("plain_for_tls")
    base = ConnectionSpec(port=plain.port, user="root", unix_socket=str(plain.socket))
    with MySQLConnection.connect(base) as conn:  # preferred: falls back to plain
        assert not conn.tls_active
    required = ConnectionSpec(
        unix_socket=str(plain.socket), user="root", tls=TlsOptions(mode=TlsMode.REQUIRED)
    )
    with pytest.raises(ProtocolError, match="does not offer TLS"):
        MySQLConnection.connect(required)
