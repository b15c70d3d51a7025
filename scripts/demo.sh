#!/usr/bin/env bash
# Set up everything (Debian's MariaDB, Java 17, .venv with binlogkit[spark,search], Delta's jars)
# and run the demo: a throwaway MariaDB's tables into Delta tables on a local Spark session, kept
# current from its binlog, checked against the server and searched (python -m binlogkit.spark.demo).
#   scripts/demo.sh [--keep DIR]
#   scripts/demo.sh decode [--full] [--keep DIR]   the first demo: a workload's row changes,
#                                                  decoded, as JSON lines (binlogkit.sandbox.demo)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

{  # set-up chatter (apt-get, pip) goes to stderr: stdout is the demo's
    apt_need mariadb-server:mariadbd mariadb-client:mariadb
    if [ "${1:-}" = decode ]; then
        ensure_venv
    else
        need_java
        ensure_venv spark,search
        delta_jars
    fi
} >&2

if [ "${1:-}" = decode ]; then
    shift
    exec "$VENV/bin/python" -m binlogkit.sandbox.demo "$@"
fi
exec "$VENV/bin/python" -m binlogkit.spark.demo "$@"
