#!/usr/bin/env bash
# Set up the project on a fresh machine: a virtual environment with the pinned Python packages.
# Usage: scripts/setup.sh [--test]   (--test also installs what the test suite needs)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      PYTHON="$candidate"; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "rule130 needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=""
if [ "${1:-}" = "--test" ]; then extras="[test]"; fi
# A restart skips what is already in place: the packages are installed again only when the pins
# (constraints.txt, pyproject.toml) changed since the last install of this kind (the test set
# includes the plain one).
pins="$(cat constraints.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat .venv/.rule130-pins-test 2>/dev/null)" = "$pins" ] || { [ -z "$extras" ] && [ "$(cat .venv/.rule130-pins 2>/dev/null)" = "$pins" ]; }; then
  echo "python packages in .venv are up to date"
else
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -c constraints.txt -e ".${extras}"
  echo "$pins" > ".venv/.rule130-pins${extras:+-test}"
  echo "python packages installed in .venv"
fi
scripts/setup-pdf.sh "${1:-}"   # chromium and the Hindi/English fonts for the PDF documents; --test: pdftotext (apt, only what is missing)
if [ "${1:-}" = "--test" ]; then scripts/setup-browser.sh; fi

# Compiled translations (.mo) are built here, not kept in git (the app also compiles stale ones at start-up).
.venv/bin/pybabel compile -d webapp/translations >/dev/null
echo "translations compiled"

# Browser assets (bpmn-js) from npm, pinned by package-lock.json; no CDN.
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "npm is missing: install Node.js and npm to get the diagram viewer (the rest works without it)" >&2
  fi
fi
if command -v npm >/dev/null 2>&1; then
  lock="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ "$(cat node_modules/.rule130-lock 2>/dev/null)" = "$lock" ]; then
    echo "browser assets in node_modules are up to date"
  else
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock" > node_modules/.rule130-lock
    echo "browser assets installed in node_modules"
  fi
  # the administrators' modeler bundle (esbuild) into webapp/static/modeler, when its sources or
  # the npm packages are newer than the bundle
  bundle=webapp/static/modeler/modeler.js
  if [ ! -f "$bundle" ] || [ -n "$(find webapp/assets/modeler package-lock.json node_modules/.rule130-lock -newer "$bundle" -print -quit)" ]; then
    npm run --silent build
  else
    echo "modeler bundle in webapp/static/modeler is up to date"
  fi
fi

# The static files under content-hashed names (name-<md5>.ext and gzip copies) with their manifest,
# which pages link with a year's immutable cache; not kept in git (webapp/web/assets.py).
.venv/bin/rule130 digest-static
