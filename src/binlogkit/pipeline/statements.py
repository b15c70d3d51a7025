"""What can be told about a QUERY event's statement from its text, without a SQL parser."""

from __future__ import annotations

__all__ = ["is_transaction_keyword"]


def is_transaction_keyword(query: bytes) -> bool:
    """Whether a QUERY is BEGIN, COMMIT, ROLLBACK, SAVEPOINT or an XA statement.

    The tools do not apply ``--database`` to these, nor replicas their ``replicate-*`` rules.
    """
    head = query[:9].upper()
    return (
        query in (b"BEGIN", b"COMMIT")
        or head.startswith(b"SAVEPOINT")
        or head.startswith(b"ROLLBACK")
        or head.startswith(b"XA ")
    )
