#!/usr/bin/env bash
# What the PDF documents need from Debian: chromium (headless, driven by Playwright, prints them:
# webapp/services/papers/pdf.py) and fonts for Hindi (Devanagari) and English, both with the rupee sign
# (fonts-lohit-deva, fonts-dejavu-core, found through fontconfig). With --test also poppler-utils:
# the tests read the PDFs' text back with pdftotext. Installs only what is missing (debian-packages.sh).
# Without them the application runs and the printable pages work; only the PDF answers
# "not available" (HTTP 503).
#   scripts/setup-pdf.sh [--test]
set -euo pipefail
packages=(chromium fontconfig fonts-lohit-deva fonts-dejavu-core)
if [ "${1:-}" = "--test" ]; then packages+=(poppler-utils); fi
exec "$(dirname "$0")/debian-packages.sh" "PDF documents" "${packages[@]}"
