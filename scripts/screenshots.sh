#!/usr/bin/env bash
# Refresh the screenshots the README shows (docs/screenshots) by running the browser tests, which
# take them at 360 px and 1280 px while three officers carry scenario s1 in chromium (and trainees
# move the training clock: training-*.png).
set -euo pipefail
cd "$(dirname "$0")/.."
RULE130_SCREENSHOTS="$PWD/docs/screenshots" RULE130_REQUIRE_BROWSER=1 .venv/bin/python -m pytest -q tests/browser
ls docs/screenshots
