#!/usr/bin/env bash
# Set up what the tests need, run every scenario through the CLI, then the whole pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
.venv/bin/ruff check webapp handlers tests tools
for scenario in tests/scenarios/*.yaml; do
  .venv/bin/rule130 simulate "$scenario" >/dev/null || { echo "scenario failed: $scenario" >&2; exit 1; }
done
echo "all scenarios pass through 'rule130 simulate'"
exec .venv/bin/python -m pytest "$@"
