# Shared set-up for scripts/demo.sh and scripts/test.sh; source it, don't run it.
# Installs what is missing: Debian packages (apt-get), the .venv virtualenv and
# the binlogkit package in it (editable, with the given extras).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"
APT_UPDATED=0

say() { echo "setup: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "need root (or sudo) to run: $*"
        return 1
    fi
}

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }

# apt_install PACKAGE...: apt-get install, after one apt-get update per run.
apt_install() {
    if ! have apt-get; then
        say "no apt-get to install $*; install it by hand"
        return 1
    fi
    say "installing $* with apt-get"
    if [ "$APT_UPDATED" -eq 0 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# apt_need PACKAGE:COMMAND...: installs each PACKAGE whose COMMAND is missing.
apt_need() {
    local missing=() pair
    for pair in "$@"; do
        have "${pair#*:}" || missing+=("${pair%%:*}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
}

# ensure_venv [EXTRAS]: .venv with binlogkit installed editable, with EXTRAS (e.g. dev).
# pip runs only when pyproject.toml or the extras changed since the last install.
ensure_venv() {
    local extras="${1:-}" stamp="$VENV/.binlogkit-installed" hash target="$ROOT"
    have "$PYTHON" || apt_install python3
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        say "binlogkit needs Python 3.11 or newer; $PYTHON is $("$PYTHON" -V 2>&1)"
        return 1
    fi
    if ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        # Debian's python3 has no venv/ensurepip without the python3-venv package.
        "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 || apt_install python3-venv
        say "creating $VENV"
        rm -rf "$VENV"
        "$PYTHON" -m venv "$VENV"
    fi
    hash="$(sha256sum <"$ROOT/pyproject.toml" | cut -d' ' -f1)"
    if [ -n "$extras" ]; then
        target="$ROOT[$extras]"
    fi
    if ! grep -qxF "$hash $extras" "$stamp" 2>/dev/null \
        || ! "$VENV/bin/python" -c 'import binlogkit' >/dev/null 2>&1; then
        say "installing binlogkit${extras:+[$extras]} into $VENV"
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$target"
        # One line "HASH EXTRAS" per install done; one with extras covers the plain one.
        printf '%s %s\n%s \n' "$hash" "$extras" "$hash" >>"$stamp"
    fi
}

# need_java: a Java 17+ runtime for Spark (Debian's openjdk-17-jre-headless when missing).
need_java() {
    local version
    version="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
    if [ -z "$version" ] || [ "$version" -lt 17 ]; then
        apt_install openjdk-17-jre-headless
    fi
}

# delta_jars: Delta Lake's two jars from Maven Central into .cache/jars (checked against their
# SHA-1), once; BINLOGKIT_JARS points local Spark sessions there.
delta_jars() {
    "$VENV/bin/python" -m binlogkit.spark.jars "$ROOT/.cache/jars"
    export BINLOGKIT_JARS="$ROOT/.cache/jars"
}
