#!/usr/bin/env bash
# Quick start: set everything up and serve rule130 at http://127.0.0.1:5000 on SQLite,
# with the bundled Rule 130 process deployed, demo officers, and the timer worker running.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/rule130 init-db
.venv/bin/rule130 demo-data
# plain HTTP on this machine: the session cookie cannot be HTTPS-only (webapp/web/access/hardening.py)
export RULE130_SECURE_COOKIES="${RULE130_SECURE_COOKIES:-0}"
exec .venv/bin/rule130 serve --host "${HOST:-127.0.0.1}" --port "${PORT:-5000}"
