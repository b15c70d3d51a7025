#!/usr/bin/env bash
# Set up everything the tests need (Debian packages, Java for Spark, .venv, binlogkit[dev,spark,search]),
# check lint, formatting and types (ruff, mypy), and run the tests.
# Extra arguments go to pytest, e.g. scripts/test.sh -m "not mariadb" or tests/unit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

apt_need mariadb-server:mariadbd mariadb-client:mariadb mariadb-client:mariadb-binlog sysbench:sysbench
need_java
ensure_venv dev,spark,search
delta_jars

cd "$ROOT"
"$VENV/bin/ruff" check src tests benchmarks
"$VENV/bin/ruff" format --check src tests benchmarks
"$VENV/bin/mypy"
status=0
"$VENV/bin/python" -m pytest -n auto --dist loadgroup "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests; that counts as a failure" >&2
    exit 1
fi
exit "$status"
