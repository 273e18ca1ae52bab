#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster, for the tests of
# StrataPostgres. Installs Debian's postgresql when it is missing (as `make
# deps` does for zstd), makes a cluster in a temporary directory (initdb,
# password-less user `strata`, loopback only, a private port and socket
# directory), exports STRATA_TEST_POSTGRES_URL for the command (and
# STRATA_TEST_POSTGRES_SERVER, a script that stops and starts the server for
# the restart test), and stops
# and removes the cluster on exit, also when the command fails.
#
#   Tests/postgres/with-server.sh swift test --skip-build
set -euo pipefail

# The newest installed server (a client-only version has no initdb).
find_bin() {
    ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 | xargs -r dirname
}

bin=$(find_bin || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "with-server: installing postgresql" >&2
        if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
        bin=$(find_bin || true)
    elif command -v pg_ctl >/dev/null 2>&1; then
        bin=$(dirname "$(command -v pg_ctl)")
    fi
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with-server: PostgreSQL is not installed and cannot be (install it, e.g. brew install postgresql)" >&2
    exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-pg.XXXXXX")
# The server refuses to run as root: root runs it as the postgres user.
if [ "$(id -u)" -eq 0 ]; then
    as_server() { runuser -u postgres -- "$@"; }
else
    as_server() { "$@"; }
fi
cleanup() {
    as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi

# No locale: a LANG naming a locale the machine lacks would stop initdb.
as_server "$bin/initdb" -D "$dir/data" -A trust -U strata --no-locale -E UTF8 >/dev/null
# The network test's hosts (network namespaces on 10.231.0.0/16) log in too;
# the server listens on their side of the link only while that test runs.
echo "host all strata 10.231.0.0/16 trust" >>"$dir/data/pg_hba.conf"
started=""
for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null 2>&1; then
        started=yes
        break
    fi
done
if [ -z "$started" ]; then
    echo "with-server: the PostgreSQL server did not start:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    exit 1
fi

# For the restart test: `$dir/server stop` stops the server as an
# administrator's fast shutdown does (every connection cut), `start` starts
# it again on the same port (`start ADDRESS` listens on ADDRESS too).
if [ "$(id -u)" -eq 0 ]; then run_as="runuser -u postgres --"; else run_as=""; fi
cat >"$dir/server" <<SCRIPT
#!/usr/bin/env bash
set -euo pipefail
case "\${1:-}" in
stop) $run_as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ;;
start) listen="127.0.0.1\${2:+,\$2}"
    $run_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \\
    -o "-p $port -k '$dir' -c listen_addresses=\$listen -c max_connections=200" start >/dev/null ;;
*) echo "usage: \$0 stop|start [ADDRESS]" >&2; exit 2 ;;
esac
SCRIPT
chmod +x "$dir/server"
export STRATA_TEST_POSTGRES_SERVER="$dir/server"
export STRATA_TEST_POSTGRES_URL="postgres://strata@127.0.0.1:$port/postgres?sslmode=disable"
"$@"
