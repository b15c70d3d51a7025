"""The TLS fixtures really serve TLS: checked with the ``mariadb`` command-line client."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tls_certs import TLS_USERS, TlsFiles, make_tls_files, tls_client_args

from binlogkit.sandbox import MariaDBSandbox


def _client(
    server: MariaDBSandbox, user: str, *args: str, host: str = "127.0.0.1"
) -> subprocess.CompletedProcess[str]:
    password = TLS_USERS[user][0]
    command = server.client_command(
        f"--host={host}",
        f"--port={server.port}",
        "--protocol=TCP",
        f"--user={user}",
        f"--password={password}",
        "--batch",
        "--skip-column-names",
        *args,
        "-e",
        "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS "
        "WHERE VARIABLE_NAME = 'SSL_VERSION'",
    )
    command.remove("--user=root")
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_verified_tls_session(tls_mariadb: MariaDBSandbox, tls_files: TlsFiles, host: str) -> None:
    done = _client(tls_mariadb, "tls_user", *tls_client_args(tls_files), host=host)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("TLSv1"), done.stdout


def test_require_ssl_refuses_plain(tls_mariadb: MariaDBSandbox) -> None:
    done = _client(tls_mariadb, "tls_user", "--skip-ssl")
    assert done.returncode != 0
    assert "Access denied" in done.stderr


def test_require_x509_needs_client_certificate(
    tls_mariadb: MariaDBSandbox,
    tls_files: TlsFiles,
) -> None:
    refused = _client(tls_mariadb, "x509_user", *tls_client_args(tls_files))
    assert refused.returncode != 0
    assert "Access denied" in refused.stderr
    done = _client(tls_mariadb, "x509_user", *tls_client_args(tls_files, client_cert=True))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("TLSv1")


def test_other_ca_fails_verification(
    tls_mariadb: MariaDBSandbox,
    tls_files: TlsFiles,
    tmp_path: Path,
) -> None:
    stranger = make_tls_files(tmp_path)
    done = _client(tls_mariadb, "tls_user", *tls_client_args(stranger))
    assert done.returncode != 0
    assert "certificate" in done.stderr.lower() or "ssl" in done.stderr.lower(), done.stderr
