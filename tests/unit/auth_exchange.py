"""Runs a client plugin against a server verifier in memory, as the protocol would."""

from __future__ import annotations

from binlogkit.protocol.auth import Accept, AuthStep, ClientAuth, SendMore, ServerAuth


def exchange(client: ClientAuth, server: ServerAuth, *, max_rounds: int = 5) -> AuthStep:
    """Drive ``client`` against ``server`` until the server accepts or rejects.

    The fast-auth byte that comes with an :class:`Accept` is given to the client,
    which must answer nothing.
    """
    step = server.receive(client.start(server.scramble()))
    for _ in range(max_rounds):
        if not isinstance(step, SendMore):
            break
        reply = client.more(step.data)
        assert reply is not None, "the client must answer a SendMore"
        step = server.receive(reply)
    else:
        raise AssertionError(f"no decision after {max_rounds} rounds")
    if isinstance(step, Accept) and step.more_data is not None:
        assert client.more(step.more_data) is None
    return step
