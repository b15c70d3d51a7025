"""TLS certificates for live tests, and the MariaDB settings that serve them.

:func:`make_tls_files` writes a throwaway CA, a server certificate for
``localhost`` / ``127.0.0.1`` / ``::1`` (subjectAltName DNS and IP entries) and
a client certificate, all signed by that CA, as PEM files in a folder.
:func:`server_tls_options` gives the sandbox options that make MariaDB serve
them, and :func:`create_tls_users` makes accounts that require TLS
(``REQUIRE SSL``) or a client certificate signed by the CA (``REQUIRE X509``).

Fixtures (tests/conftest.py makes them available to every test):

- ``tls_files`` (session): the :class:`TlsFiles`.
- ``tls_mariadb`` (session): a running :class:`~binlogkit.sandbox.MariaDBSandbox`
  serving TLS with ``tls_files``, with the accounts of :data:`TLS_USERS`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.server import OptionValue

SERVER_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
"""The names the default server certificate is valid for (DNS names and IP addresses)."""

TLS_USERS: dict[str, tuple[str, str]] = {
    "tls_user": ("tls-pass", "REQUIRE SSL"),
    "x509_user": ("x509-pass", "REQUIRE X509"),
}
"""Accounts made by :func:`create_tls_users`: name -> (password, REQUIRE clause).
Both use mysql_native_password and may connect from any host."""


@dataclass(frozen=True)
class TlsFiles:
    """PEM files: the CA certificate, the server's and the client's certificate and key."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "binlogkit tests"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _general_names(names: Sequence[str]) -> list[x509.GeneralName]:
    result: list[x509.GeneralName] = []
    for name in names:
        try:
            result.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            result.append(x509.DNSName(name))
    return result


def _write_key(path: Path, key: rsa.RSAPrivateKey) -> Path:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)
    return path


def _write_cert(path: Path, cert: x509.Certificate) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _leaf(
    common_name: str,
    key: rsa.RSAPrivateKey,
    ca_cert: x509.Certificate,
    ca_key: rsa.RSAPrivateKey,
    usage: x509.ObjectIdentifier,
    names: Sequence[str],
    now: dt.datetime,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(_general_names(names)), critical=False
        )
    return builder.sign(ca_key, hashes.SHA256())


def make_tls_files(directory: str | Path, server_names: Sequence[str] = SERVER_NAMES) -> TlsFiles:
    """Write a new CA, server and client certificate with keys into ``directory``.

    The server certificate is valid for ``server_names`` (host names become DNS
    entries of its subjectAltName, addresses IP entries; its common name is the
    first). Files: ca.pem, server-cert.pem, server-key.pem, client-cert.pem,
    client-key.pem (keys unencrypted, mode 0600).
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_key = _key()
    ca_name = _name("binlogkit test CA")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    server_key, client_key = _key(), _key()
    server_cert = _leaf(
        server_names[0] if server_names else "binlogkit server",
        server_key,
        ca_cert,
        ca_key,
        ExtendedKeyUsageOID.SERVER_AUTH,
        server_names,
        now,
    )
    client_cert = _leaf(
        "binlogkit client", client_key, ca_cert, ca_key, ExtendedKeyUsageOID.CLIENT_AUTH, (), now
    )
    return TlsFiles(
        ca=_write_cert(folder / "ca.pem", ca_cert),
        server_cert=_write_cert(folder / "server-cert.pem", server_cert),
        server_key=_write_key(folder / "server-key.pem", server_key),
        client_cert=_write_cert(folder / "client-cert.pem", client_cert),
        client_key=_write_key(folder / "client-key.pem", client_key),
    )


def server_tls_options(files: TlsFiles) -> dict[str, OptionValue]:
    """The MariaDB server options that serve TLS with ``files`` (for ``mariadb_factory``).

    The server then accepts both plain and TLS connections; accounts made with
    ``REQUIRE SSL`` / ``REQUIRE X509`` (:func:`create_tls_users`) insist on TLS.
    Add ``require_secure_transport=True`` to refuse plain TCP for everybody.
    """
    return {
        "ssl_ca": str(files.ca),
        "ssl_cert": str(files.server_cert),
        "ssl_key": str(files.server_key),
    }


def create_tls_users(server: MariaDBSandbox) -> None:
    """Create the accounts of :data:`TLS_USERS` (all privileges, incl. replication)."""
    statements = []
    for user, (password, require) in TLS_USERS.items():
        statements.append(
            f"CREATE USER '{user}'@'%' IDENTIFIED VIA mysql_native_password "
            f"USING PASSWORD('{password}') {require}"
        )
        statements.append(f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'%'")
    server.execute(";\n".join(statements))


def tls_client_args(files: TlsFiles, *, client_cert: bool = False) -> list[str]:
    """Options of the ``mariadb`` command-line client for a verified TLS connection."""
    args = ["--ssl", f"--ssl-ca={files.ca}", "--ssl-verify-server-cert"]
    if client_cert:
        args += [f"--ssl-cert={files.client_cert}", f"--ssl-key={files.client_key}"]
    return args


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A CA, a server certificate for localhost/127.0.0.1/::1 and a client certificate."""
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def tls_mariadb(
    mariadb_factory: Callable[..., MariaDBSandbox], tls_files: TlsFiles
) -> Iterator[MariaDBSandbox]:
    """A MariaDB sandbox serving TLS with ``tls_files``, with the :data:`TLS_USERS` accounts."""
    server = mariadb_factory("tls", **server_tls_options(tls_files))
    create_tls_users(server)
    yield server
