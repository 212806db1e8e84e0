#!/usr/bin/env bash
# What the browser tests and screenshots need from Debian: chromium (Playwright drives it; Playwright's
# own browser download is never used) and a Devanagari font so Hindi renders instead of boxes
# (the PDF documents need the same chromium: setup-pdf.sh).
# Installs only what is missing (debian-packages.sh).
set -euo pipefail
exec "$(dirname "$0")/debian-packages.sh" "browser tests" chromium fonts-lohit-deva
