#!/usr/bin/env bash
# Set up everything (Debian's MariaDB, .venv, binlogkit), start a throwaway MariaDB,
# run a small workload on it and print the decoded row changes as JSON lines.
# Extra arguments go to the demo: --full (every column type), --keep DIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

{  # set-up chatter (apt-get, pip) goes to stderr: stdout is only the row changes
    apt_need mariadb-server:mariadbd mariadb-client:mariadb
    ensure_venv
} >&2

exec "$VENV/bin/python" -m binlogkit.sandbox.demo "$@"
