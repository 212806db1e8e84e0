#!/usr/bin/env bash
# Set up what the tests need, lint, run every scenario through the CLI, then the whole pytest suite
# on SQLite and, where PostgreSQL answers (127.0.0.1:5432 on the development and CI machines),
# on PostgreSQL too, side by side (each test in a schema of its own); on PostgreSQL only the tests of what can
# differ between the databases (tests/conftest.py, BOTH_DATABASES).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export RULE130_REQUIRE_BROWSER=1  # the browser tests must run, not be skipped (chromium comes from setup-browser.sh)
.venv/bin/ruff check webapp handlers tests tools
.venv/bin/mypy  # strict on the whole package (pyproject.toml, [tool.mypy])
# one process for all of them (each on a fresh database); any mismatch or invalid file fails the run
.venv/bin/rule130 simulate tests/scenarios/*.yaml >/dev/null || {
  echo "a scenario failed: .venv/bin/rule130 simulate tests/scenarios/*.yaml shows which" >&2; exit 1; }
echo "all scenarios pass through 'rule130 simulate'"

PG_URL="${RULE130_TEST_POSTGRES:-postgresql://postgres@127.0.0.1:5432/test}"
if .venv/bin/python -c "import sys, psycopg; psycopg.connect(sys.argv[1], connect_timeout=3).close()" "$PG_URL" 2>/dev/null; then
  # The two runs share nothing (each test has its own SQLite file or PostgreSQL schema, each run its
  # own temporary folder), so they run side by side: the SQLite run in the background, its report
  # printed after the PostgreSQL run's. Either failing fails the whole.
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # With no arguments the browser tests (tests/browser, about a third of the time) run after the
  # PostgreSQL run, in a SQLite process of their own, so that both cores stay busy to the end.
  browser_apart=0
  sqlite_args=("$@")
  if [ "$#" -eq 0 ]; then browser_apart=1; sqlite_args=(--ignore=tests/browser); fi
  echo "== the suite on SQLite (in the background; its report follows the PostgreSQL run's)"
  env -u RULE130_TEST_POSTGRES RULE130_SCREENSHOTS="$work/screenshots" \
    .venv/bin/python -m pytest -p no:cacheprovider --basetemp="$work/sqlite" "${sqlite_args[@]}" \
    > "$work/sqlite.log" 2>&1 &
  sqlite_run=$!
  echo "== the suite on PostgreSQL ($PG_URL)"
  pg_status=0
  # only what can differ between the databases runs on both (SQL, locking, concurrency,
  # migrations: the both_databases marker, tests/conftest.py); the rest, the browser tests among
  # them, runs once, in the SQLite run
  RULE130_TEST_POSTGRES="$PG_URL" .venv/bin/python -m pytest --basetemp="$work/postgresql" --ignore=tests/browser \
    -m both_databases "$@" \
    || pg_status=$?
  browser_status=0
  if [ "$browser_apart" -eq 1 ]; then
    echo "== the browser tests on SQLite"
    env -u RULE130_TEST_POSTGRES RULE130_SCREENSHOTS="$work/screenshots" \
      .venv/bin/python -m pytest -p no:cacheprovider --basetemp="$work/browser" tests/browser || browser_status=$?
  fi
  sqlite_status=0
  wait "$sqlite_run" || sqlite_status=$?
  echo "== the suite on SQLite: its report"
  cat "$work/sqlite.log"
  echo "== exit status: SQLite $sqlite_status, PostgreSQL $pg_status, browser tests $browser_status"
  [ "$sqlite_status" -eq 0 ] && [ "$pg_status" -eq 0 ] && [ "$browser_status" -eq 0 ]
else
  echo "PostgreSQL does not answer at $PG_URL: the suite runs on SQLite only"
  exec .venv/bin/python -m pytest "$@"
fi
