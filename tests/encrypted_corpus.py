"""The corpus' encrypted binlogs and their keys, and dumps of them cut per file.

Read through a server, an encrypted binlog comes decrypted: the corpus'
``remote-decoded.txt.gz`` is the server's view of every event after
START_ENCRYPTION, which ``mariadb-binlog`` alone cannot read. Its ``# at``
lines count across the files; the events' own lines (header, SQL, rows)
are what a reader of one file must print, so those are compared.
"""

from __future__ import annotations

MARIADB = "local-mariadb-10.11/encrypted"
MARIADB_KEYS = f"{MARIADB}/keys.txt"
OLD_MARIADB = "ottok+mariadb-10.3/mysql-test/std_data/binlog_before_20574.bin"
OLD_KEYS = "expected/ottok+mariadb-10.3/mysql-test/std_data/keys.txt"
_MYSQL_DATA = "mysql-test/std_data/rpl_nogtid_encryption"
MYSQL = f"enhancedformysql+mysql-8.0.40/{_MYSQL_DATA}_master-bin.000002"
KEYRING = f"expected/enhancedformysql+mysql-8.0.40/{_MYSQL_DATA}_keyring_master"
MYSQL_RESULT = (
    "expected/enhancedformysql+mysql-8.0.40/mysql-test/suite/rpl_nogtid/r/"
    "rpl_nogtid_encryption_read.result"
)
ENCRYPTED_REST = "# The rest of the binlog is encrypted!"
_REMOTE_START = "# Ignorable event type 164 (Start_encryption)"
_FAKE_ROTATE = "#700101  0:00:00 server id "


def _events_only(lines: list[str]) -> list[str]:
    """The lines without ``# at`` and without the closing block of a dump."""
    if "DELIMITER ;" in lines:
        lines = lines[: len(lines) - lines[::-1].index("DELIMITER ;") - 1]
    return [line for line in lines if not line.startswith("# at ")]


def remote_sections(text: str) -> list[list[str]]:
    """Per file read through the server: the lines of its events after START_ENCRYPTION."""
    lines = text.splitlines()
    sections = []
    starts = [i for i, line in enumerate(lines) if line == _REMOTE_START]
    for n, start in enumerate(starts):
        end = len(lines)
        if n + 1 < len(starts):
            end = max(i for i in range(start, starts[n + 1]) if lines[i].startswith(_FAKE_ROTATE))
        sections.append(_events_only(lines[start + 1 : end]))
    return sections


def per_file(dump: str) -> list[tuple[list[str], list[str]]]:
    """A dump of encrypted files, per file: (its lines up to START_ENCRYPTION, its events after).

    A file's lines start at its ``DELIMITER /*!*/;`` (the first file's: at the dump's start).
    """
    parts = [part.splitlines() for part in dump.split(ENCRYPTED_REST + "\n")]
    heads = [parts[0]] + [
        lines[len(lines) - lines[::-1].index("DELIMITER /*!*/;") - 1 :] for lines in parts[1:-1]
    ]
    return [
        ([*head, ENCRYPTED_REST], _events_only(rest))
        for head, rest in zip(heads, parts[1:], strict=True)
    ]
