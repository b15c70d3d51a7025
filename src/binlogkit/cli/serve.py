"""``binlogkit serve DIR``: serve a folder of binlogs to real replicas, as a primary does."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import click

from binlogkit.cli.connection import (
    client_settings,
    credential_options,
    resolve_password,
    scrub_argv,
)
from binlogkit.cli.filtering import replication_filter
from binlogkit.cli.main import command, key_options, os_error_text, reading_errors

if TYPE_CHECKING:
    import ssl

    from binlogkit.pipeline.filters import ReplicationFilter
    from binlogkit.services.binlog_server import BinlogServer, User

PLUGINS = ("mysql_native_password", "client_ed25519", "caching_sha2_password")


def _plugins(specs: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """The default plugin and the per-user ones of ``--auth-plugin [NAME=]PLUGIN``."""
    default, per_user = "mysql_native_password", {}
    for spec in specs:
        name, equals, plugin = spec.rpartition("=")
        if plugin not in PLUGINS:
            raise click.BadParameter(
                f"{plugin!r} is not one of {', '.join(PLUGINS)}", param_hint="--auth-plugin"
            )
        if equals:
            per_user[name] = plugin
        else:
            default = plugin
    return default, per_user


def _users(
    specs: tuple[str, ...],
    plugins: tuple[str, ...],
    password: str | None,
    password_file: str | None,
    defaults: str | None,
) -> list[User]:
    """``NAME:PASSWORD`` or ``NAME`` (whose password comes from -p, --password-file,
    --defaults-extra-file or MYSQL_PWD); command-line passwords are hidden from ``ps``."""
    from binlogkit.protocol.auth.base import Secret
    from binlogkit.services.binlog_server import User

    default, per_user = _plugins(plugins)
    users = []
    shared: str | None = None
    for spec in specs:
        name, colon, secret = spec.partition(":")
        if not name:
            raise click.BadParameter("a user needs a name: NAME[:PASSWORD]", param_hint="--user")
        if colon:
            scrub_argv(spec, f"{name}:{'x' * len(secret)}")
        else:
            if shared is None:
                shared = resolve_password(None, password, password_file, client_settings(defaults))
            if shared is None:
                raise click.BadParameter(
                    f"user {name} has no password: give --user {name}:PASSWORD, -p, "
                    "--password-file, --defaults-extra-file or MYSQL_PWD",
                    param_hint="--user",
                )
            secret = shared
        users.append(User(name, Secret(secret), per_user.pop(name, default)))
    if per_user:
        raise click.BadParameter(
            f"no --user {', '.join(per_user)} for its plugin", param_hint="--auth-plugin"
        )
    return users


def _tls(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    import ssl

    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise click.UsageError("--tls-cert and --tls-key go together")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as err:
        raise click.UsageError(
            f"cannot load the TLS certificate {cert} and key {key}: {err}"
        ) from None
    return context


async def _serve(server: BinlogServer) -> None:
    import asyncio
    import signal

    await server.start()
    click.echo(f"serving {server.directory.path} on {server.host}:{server.port}", err=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.close()


@command("serve")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=3306,
    show_default=True,
    help="Port (0: any free one).",
)
@click.option(
    "--user",
    "user_specs",
    multiple=True,
    required=True,
    metavar="NAME[:PASSWORD]",
    help="A replication user (repeatable); without a password, the one -p, --password-file, "
    "--defaults-extra-file or MYSQL_PWD gives.",
)
@click.option(
    "--auth-plugin",
    "auth_plugins",
    multiple=True,
    metavar="[NAME=]PLUGIN",
    help="How users authenticate: mysql_native_password (default), client_ed25519 "
    "(MariaDB's ed25519) or caching_sha2_password (MySQL 8's); NAME= for one user only. "
    "Repeatable.",
)
@click.option(
    "--server-id",
    type=click.IntRange(1, 2**32 - 1),
    default=1,
    show_default=True,
    help="This server's id.",
)
@click.option(
    "--version", "version", help="Version in the greeting (default: the binlogs' server's)."
)
@click.option(
    "--tls-cert", type=click.Path(dir_okay=False, exists=True), help="TLS certificate (PEM)."
)
@click.option(
    "--tls-key", type=click.Path(dir_okay=False, exists=True), help="TLS private key (PEM)."
)
@click.option(
    "--require-tls", is_flag=True, help="Refuse users on connections without TLS (REQUIRE SSL)."
)
@click.option("--semi-sync", is_flag=True, help="Offer semi-sync replication (ACKs are read).")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=28800.0,
    show_default=True,
    help="Seconds a logged-in client may stay silent between commands (MariaDB's "
    "wait_timeout); replicas in their dump are not timed out.",
)
@key_options
@replication_filter
@credential_options
def serve_command(
    directory: str,
    host: str,
    port: int,
    user_specs: tuple[str, ...],
    auth_plugins: tuple[str, ...],
    server_id: int,
    version: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    require_tls: bool,
    semi_sync: bool,
    idle_timeout: float,
    password: str | None,
    password_file: str | None,
    defaults_extra_file: str | None,
    rules: ReplicationFilter,
    key_file: str | None,
    filekey: str | None,
) -> None:
    """Serve the binlogs of DIRECTORY (its index file, as ``binlogkit relay`` writes it) to
    replicas: CHANGE MASTER TO MASTER_HOST=..., MASTER_PORT=... on a real replica, or any
    binlogkit stream. Files and bytes that appear are sent as they come; SIGINT or SIGTERM
    stops it. The --replicate-* options filter what every replica gets, as a replica
    started with them would apply it. With --key-file, MariaDB binlogs encrypted with it
    (encrypt_binlog) are sent decrypted, as MariaDB sends them."""
    users = _users(user_specs, auth_plugins, password, password_file, defaults_extra_file)
    if require_tls:
        if tls_cert is None:
            raise click.UsageError("--require-tls needs --tls-cert and --tls-key")
        users = [replace(u, require_tls=True) for u in users]
    import asyncio

    from binlogkit.io.key_files import read_key_file
    from binlogkit.services.binlog_directory import BinlogDirectory
    from binlogkit.services.binlog_server import BinlogServer
    from binlogkit.services.dump_observers import ReplicaFilter

    with reading_errors():
        keys = None if key_file is None else read_key_file(key_file, filekey)
        server = BinlogServer(
            BinlogDirectory(directory, keys),
            users,
            host=host,
            port=port,
            server_id=server_id,
            version=version,
            tls=_tls(tls_cert, tls_key),
            semi_sync=semi_sync,
            idle_timeout=idle_timeout,
            observers=[] if rules.is_empty else [ReplicaFilter(lambda _: rules)],
        )
        try:
            asyncio.run(_serve(server))
        except OSError as err:
            raise click.ClickException(
                f"cannot serve on {host}:{port}: {os_error_text(err)}"
            ) from None
