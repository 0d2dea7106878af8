# SPDX-License-Identifier: MIT OR Apache-2.0
# pg-harness.sh -- a throwaway PostgreSQL server for the tests that need one.
#
# Sourced by a test.  pg_start makes a scratch folder under /tmp (short, so
# that the Unix socket's path stays far below its ~107-byte limit whatever
# the checkout's path), runs initdb and pg_ctl there, listening on that
# socket only, and exports CUPACE_TEST_PG, a libpq connection string for it.
# PostgreSQL refuses to run as root, so as root the server runs as `nobody`
# (CI runs as root).  pg_stop stops the server and removes the folder;
# pg_start arranges for it to run when the test exits.  pg_restart stops and
# starts the same server (a test of a lost database).
#
# pg_start returns 77 (skip) only if the PostgreSQL server programs are not
# installed; any other failure returns 99 (a hard error), with the server's
# log on stderr.

pg_find_bindir() {
  for d in "$(pg_config --bindir 2>/dev/null)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r) \
           "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")"; do
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# pg_as CMD...: runs CMD as the server's user
pg_as() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

pg_fail() {
  echo "pg-harness: $1" >&2
  [ -f "$pg_dir/log" ] && tail -20 "$pg_dir/log" >&2
  return 99
}

pg_start() {
  pg_bin=$(pg_find_bindir) || { echo "pg-harness: PostgreSQL server programs not found (install postgresql): skipped" >&2; return 77; }
  pg_dir=$(mktemp -d /tmp/cupace-pg.XXXXXX) || return 99
  trap pg_stop EXIT
  trap 'exit 130' INT TERM
  if [ "$(id -u)" -eq 0 ]; then
    if ! command -v runuser > /dev/null; then
      pg_fail "running as root needs runuser to start the server as nobody"
      return 99
    fi
    chown nobody "$pg_dir"
  fi
  chmod 700 "$pg_dir"
  pg_as "$pg_bin/initdb" -D "$pg_dir/data" -U cupace -A trust --no-sync -E UTF8 --locale=C \
    > "$pg_dir/initdb.log" 2>&1 || { cat "$pg_dir/initdb.log" >&2; pg_fail "initdb failed"; return 99; }
  pg_run_server || return 99
  CUPACE_TEST_PG="host=$pg_dir port=5432 user=cupace dbname=postgres"
  export CUPACE_TEST_PG
}

pg_run_server() {
  pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w -t 30 \
    -o "-c listen_addresses='' -c unix_socket_directories='$pg_dir' -p 5432 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60" \
    start > /dev/null 2>&1 || { pg_fail "pg_ctl start failed"; return 99; }
}

pg_restart() {
  pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop > /dev/null 2>&1
  pg_run_server
}

pg_stop() {
  if [ -n "${pg_dir:-}" ] && [ -d "$pg_dir" ]; then
    [ -f "$pg_dir/data/postmaster.pid" ] &&
      pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop > /dev/null 2>&1
    rm -rf "$pg_dir"
  fi
  pg_dir=
}

# pg_start_bench NAME: pg_start for a benchmark of `make bench`; without the
# server programs it says so and ends the script successfully (nothing to
# measure on is not a failure of the benchmark), on any other error it fails.
pg_start_bench() {
  pg_start
  pg_rc=$?
  [ "$pg_rc" -eq 0 ] && return 0
  echo "$1: no PostgreSQL server to measure on"
  [ "$pg_rc" -eq 77 ] && exit 0
  exit "$pg_rc"
}
