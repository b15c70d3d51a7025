"""The contract every authentication plugin follows, and the plugin registries.

An authentication plugin has two sides, kept together in one module:

- :class:`ClientAuth`, the client's step machine. It is made with the password
  and what it knows about the channel, answers the server's scramble with
  :meth:`ClientAuth.start` (the auth response that goes into the handshake
  response or the auth-switch response) and every later AuthMoreData payload
  with :meth:`ClientAuth.more`.
- :class:`ServerAuth`, the server's verifier. It is made from the stored
  credential (what a server keeps instead of the password, made by
  :meth:`ServerAuth.make_credential`), gives the scramble to send with
  :meth:`ServerAuth.scramble` and judges each client packet with
  :meth:`ServerAuth.receive`, which returns an :data:`AuthStep`.

Plugins register by name with :func:`register_client` / :func:`register_server`;
:func:`client_auth`, :func:`server_auth` and :func:`make_credential` look them
up. No module here does I/O: the scramble is the only randomness, and callers
may pass their own.
"""

from __future__ import annotations

import hmac
import secrets
from abc import ABC, abstractmethod
from typing import ClassVar, TypeVar

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import ProtocolError

SCRAMBLE_LENGTH = 20
"""Length of the scramble MySQL and MariaDB send in the handshake (without the NUL)."""


class AuthPluginError(ProtocolError):
    """An authentication plugin cannot go on: unknown plugin, insecure channel,
    malformed data from the peer. Never carries the password."""


class Secret:
    """A password (or other secret) that does not show itself.

    ``repr()`` and ``str()`` give ``***``; :meth:`reveal` gives the bytes
    (UTF-8 when made from a ``str``). Equality is constant-time.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str | bytes = b"") -> None:
        self._value = value.encode() if isinstance(value, str) else bytes(value)

    def reveal(self) -> bytes:
        """The secret's bytes. Use them, never log them."""
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value, other._value)

    def __hash__(self) -> int:
        return hash((Secret, self._value))


def as_secret(password: Secret | str | bytes | None) -> Secret:
    """``password`` as a :class:`Secret` (``None`` is the empty password)."""
    if isinstance(password, Secret):
        return password
    return Secret(password or b"")


class ClientAuth(ABC):
    """Client side of one authentication plugin: a small step machine.

    ``secure`` says the channel is TLS or a local socket, so a plugin may send
    the password in clear; ``server_public_key`` is the server's RSA public key
    (PEM) when the user configured one, for plugins that encrypt the password.
    ``allow_public_key_request`` lets such a plugin ask the server for its key
    on an insecure channel (open to a man in the middle who swaps the key).
    """

    name: ClassVar[str]
    """The plugin name as it appears on the wire."""
    secure_only: ClassVar[bool] = False
    """True when the plugin sends the password in clear and so needs a secure channel."""

    def __init__(
        self,
        password: Secret,
        *,
        secure: bool = False,
        server_public_key: bytes | None = None,
        allow_public_key_request: bool = True,
    ) -> None:
        if self.secure_only and not secure:
            raise AuthPluginError(
                f"{self.name} sends the password in clear and is refused on an insecure channel",
                hint="connect with TLS (ssl-mode=required) or through a unix socket",
            )
        self.password = password
        self.secure = secure
        self.server_public_key = server_public_key
        self.allow_public_key_request = allow_public_key_request

    @abstractmethod
    def start(self, scramble: bytes) -> bytes:
        """The auth response to ``scramble`` (the handshake's or an auth switch's data)."""

    def more(self, data: bytes) -> bytes | None:
        """Answer an AuthMoreData payload (its 0x01 prefix removed).

        Returns the bytes to send, or ``None`` to send nothing and wait for
        the server's next packet.
        """
        raise AuthPluginError(f"{self.name}: unexpected extra authentication data from the server")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} secure={self.secure}>"


@frozen_dataclass
class SendMore:
    """The verifier wants another client packet: send ``data`` as AuthMoreData first."""

    data: bytes


@frozen_dataclass
class Accept:
    """The client is authenticated. ``more_data``, when set, goes out as an
    AuthMoreData packet just before the OK (caching_sha2_password's fast-auth 0x03)."""

    more_data: bytes | None = None


@frozen_dataclass
class Reject:
    """The client is refused; ``reason`` is for the server's log, not for the client."""

    reason: str


AuthStep = SendMore | Accept | Reject
"""What a :class:`ServerAuth` decides after each client packet."""


class ServerAuth(ABC):
    """Server side of one authentication plugin: verifies a client against a stored credential.

    ``credential`` is what :meth:`make_credential` made from the password
    (empty for an account without password). ``scramble`` is the handshake's
    20-byte scramble when the client answered it with this very plugin; when
    ``None`` the verifier makes its own (for an auth switch). ``secure`` says the
    channel is TLS or a local socket; ``private_key`` is the server's RSA key
    (PEM) for plugins that take an encrypted password.
    """

    name: ClassVar[str]

    def __init__(
        self,
        credential: bytes,
        *,
        scramble: bytes | None = None,
        secure: bool = False,
        private_key: bytes | None = None,
    ) -> None:
        self.credential = credential
        self._scramble = self.new_scramble() if scramble is None else strip_scramble(scramble)
        self.secure = secure
        self.private_key = private_key

    @classmethod
    def new_scramble(cls) -> bytes:
        """A fresh random scramble of the length this plugin uses."""
        return new_scramble()

    @classmethod
    @abstractmethod
    def make_credential(cls, password: Secret) -> bytes:
        """What a server stores for ``password`` (never the password itself)."""

    def scramble(self) -> bytes:
        """The plugin data for an AuthSwitchRequest: the scramble as the plugin sends it."""
        return self._scramble

    @abstractmethod
    def receive(self, response: bytes) -> AuthStep:
        """Judge one client packet (the auth response, then each further answer)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} secure={self.secure}>"


def new_scramble(length: int = SCRAMBLE_LENGTH) -> bytes:
    """Random scramble bytes as MySQL makes them: 7-bit, never NUL (the
    handshake packet ends its scramble with a NUL)."""
    return bytes(secrets.choice(range(1, 128)) for _ in range(length))


def xor_bytes(a: bytes, b: bytes) -> bytes:
    """``a`` XOR ``b``, ``b`` repeated as needed to cover ``a``."""
    return bytes(x ^ b[i % len(b)] for i, x in enumerate(a))


def strip_scramble(scramble: bytes) -> bytes:
    """The 20-byte scramble without the NUL that ends it on the wire."""
    if len(scramble) == SCRAMBLE_LENGTH + 1 and scramble[-1] == 0:
        return scramble[:-1]
    return scramble


_CLIENTS: dict[str, type[ClientAuth]] = {}
_SERVERS: dict[str, type[ServerAuth]] = {}

C = TypeVar("C", bound=type[ClientAuth])
S = TypeVar("S", bound=type[ServerAuth])


def register_client(cls: C) -> C:
    """Class decorator: register a :class:`ClientAuth` under its ``name``."""
    _CLIENTS[cls.name] = cls
    return cls


def register_server(cls: S) -> S:
    """Class decorator: register a :class:`ServerAuth` under its ``name``."""
    _SERVERS[cls.name] = cls
    return cls


def _plugins() -> None:
    # Registration happens when the plugin modules are imported; the package
    # __init__ imports them all, so importing it here makes lookups complete.
    import binlogkit.protocol.auth  # noqa: F401


def client_auth(name: str) -> type[ClientAuth]:
    """The client plugin class called ``name``; :class:`AuthPluginError` if unknown."""
    _plugins()
    try:
        return _CLIENTS[name]
    except KeyError:
        raise AuthPluginError(
            f"the server asks for authentication plugin {name!r}, which binlogkit does not support",
            hint=f"supported: {', '.join(sorted(_CLIENTS))}",
        ) from None


def server_auth(name: str) -> type[ServerAuth]:
    """The server verifier class called ``name``; :class:`AuthPluginError` if unknown."""
    _plugins()
    try:
        return _SERVERS[name]
    except KeyError:
        raise AuthPluginError(
            f"no server-side verifier for authentication plugin {name!r}",
            hint=f"supported: {', '.join(sorted(_SERVERS))}",
        ) from None


def client_plugins() -> tuple[str, ...]:
    """Names of every registered client plugin."""
    _plugins()
    return tuple(sorted(_CLIENTS))


def server_plugins() -> tuple[str, ...]:
    """Names of every registered server verifier."""
    _plugins()
    return tuple(sorted(_SERVERS))


def make_credential(name: str, password: Secret | str | bytes | None) -> bytes:
    """What a server using plugin ``name`` stores for ``password``."""
    return server_auth(name).make_credential(as_secret(password))
