"""Authentication plugins, one module each: the client step machine beside the
server-side verifier. Importing this package registers them all; a new plugin
is one new module here with classes decorated by
:func:`~binlogkit.protocol.auth.base.register_client` and
:func:`~binlogkit.protocol.auth.base.register_server`.
"""

import importlib
import pkgutil

from binlogkit.protocol.auth.base import (
    Accept,
    AuthPluginError,
    AuthStep,
    ClientAuth,
    Reject,
    Secret,
    SendMore,
    ServerAuth,
    as_secret,
    client_auth,
    client_plugins,
    make_credential,
    new_scramble,
    register_client,
    register_server,
    server_auth,
    server_plugins,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "Accept",
    "AuthPluginError",
    "AuthStep",
    "ClientAuth",
    "Reject",
    "Secret",
    "SendMore",
    "ServerAuth",
    "as_secret",
    "client_auth",
    "client_plugins",
    "make_credential",
    "new_scramble",
    "register_client",
    "register_server",
    "server_auth",
    "server_plugins",
]
