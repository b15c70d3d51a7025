"""Where and how to connect: :class:`ConnectionSpec` and its :class:`TlsOptions`.

Pure values; the drivers in :mod:`binlogkit.io` turn them into sockets and
``ssl.SSLContext`` objects. ``ConnectionSpec.from_url`` reads
``mysql://user:password@host:port/database?ssl-mode=required&ssl-ca=/ca.pem``
(also ``mariadb://``; ``?socket=/path`` for a unix socket). The password is a
:class:`~binlogkit.protocol.auth.base.Secret` and never shows in a repr.
"""

from __future__ import annotations

from dataclasses import field, replace
from enum import Enum
from urllib.parse import parse_qsl, unquote, urlsplit

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import ProtocolError
from binlogkit.protocol.auth.base import Secret, as_secret

DEFAULT_PORT = 3306
SCHEMES = ("mysql", "mariadb")


class TlsMode(Enum):
    """How hard to insist on TLS (the ``--ssl-mode`` values of the MySQL client)."""

    DISABLED = "disabled"
    PREFERRED = "preferred"
    REQUIRED = "required"
    VERIFY_CA = "verify-ca"
    VERIFY_IDENTITY = "verify-identity"

    @classmethod
    def parse(cls, value: str | TlsMode) -> TlsMode:
        if isinstance(value, TlsMode):
            return value
        key = value.strip().lower().replace("_", "-")
        for mode in cls:
            if mode.value == key:
                return mode
        raise ProtocolError(
            f"unknown ssl-mode {value!r}",
            hint="use disabled, preferred, required, verify-ca or verify-identity",
        )

    @property
    def wanted(self) -> bool:
        """Whether to ask for TLS when the server offers it."""
        return self is not TlsMode.DISABLED

    @property
    def required(self) -> bool:
        """Whether a server without TLS is an error."""
        return self not in (TlsMode.DISABLED, TlsMode.PREFERRED)


@frozen_dataclass
class TlsOptions:
    """TLS settings: the mode, the CA file to verify the server with, a client certificate.

    ``server_hostname`` overrides the name checked in verify-identity mode
    (default: the host connected to).
    """

    mode: TlsMode = TlsMode.PREFERRED
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    server_hostname: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", TlsMode.parse(self.mode))
        if self.key is not None and self.cert is None:
            raise ProtocolError("a TLS client key needs its certificate (ssl-cert)")


@frozen_dataclass
class ConnectionSpec:
    """Everything needed to open a connection. ``password`` may be given as str."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    user: str = "root"
    password: Secret = field(default_factory=Secret)
    database: str | None = None
    unix_socket: str | None = None
    tls: TlsOptions = field(default_factory=TlsOptions)
    connect_timeout: float | None = 10.0
    read_timeout: float | None = None
    server_public_key: bytes | None = field(default=None, repr=False)
    attributes: tuple[tuple[str, str], ...] = (("_client_name", "binlogkit"),)

    def __post_init__(self) -> None:
        object.__setattr__(self, "password", as_secret(self.password))

    @property
    def secure_transport(self) -> bool:
        """A unix socket counts as secure for plugins that send the password in clear."""
        return self.unix_socket is not None

    @property
    def address(self) -> str:
        """Where the connection goes, for messages (never with the password)."""
        return self.unix_socket or f"{self.host}:{self.port}"

    def with_password(self, password: Secret | str | bytes | None) -> ConnectionSpec:
        return replace(self, password=as_secret(password))

    @classmethod
    def from_url(cls, url: str) -> ConnectionSpec:
        """Read ``mysql://`` or ``mariadb://`` URLs (query keys: ssl-mode, ssl-ca,
        ssl-cert, ssl-key, socket, connect-timeout, read-timeout)."""
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            raise ProtocolError(
                f"not a MySQL URL: scheme {parts.scheme!r}", hint="use mysql:// or mariadb://"
            )
        try:
            port = parts.port or DEFAULT_PORT
        except ValueError:
            raise ProtocolError("the URL's port is not a number between 0 and 65535") from None
        query: dict[str, str] = {}
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            query[key.lower().replace("_", "-")] = value
        known = {
            "ssl-mode",
            "ssl-ca",
            "ssl-cert",
            "ssl-key",
            "socket",
            "connect-timeout",
            "read-timeout",
        }
        unknown = sorted(set(query) - known)
        if unknown:
            raise ProtocolError(
                f"unknown URL option(s): {', '.join(unknown)}",
                hint=f"known: {', '.join(sorted(known))}",
            )
        tls = TlsOptions(
            mode=TlsMode.parse(query.get("ssl-mode", "preferred")),
            ca=query.get("ssl-ca"),
            cert=query.get("ssl-cert"),
            key=query.get("ssl-key"),
        )
        if tls.ca is not None and "ssl-mode" not in query:
            tls = replace(tls, mode=TlsMode.VERIFY_CA)
        database = unquote(parts.path.lstrip("/")) or None
        return cls(
            host=parts.hostname or "127.0.0.1",
            port=port,
            user=unquote(parts.username) if parts.username is not None else "root",
            password=Secret(unquote(parts.password or "")),
            database=database,
            unix_socket=query.get("socket"),
            tls=tls,
            connect_timeout=_seconds(query, "connect-timeout", 10.0),
            read_timeout=_seconds(query, "read-timeout", None),
        )


def _seconds(query: dict[str, str], key: str, default: float | None) -> float | None:
    if key not in query:
        return default
    try:
        value = float(query[key])
    except ValueError:
        raise ProtocolError(f"URL option {key} must be a number of seconds") from None
    return value if value > 0 else None
