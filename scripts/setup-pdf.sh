#!/usr/bin/env bash
# What the PDF documents need from Debian: WeasyPrint's system libraries (Pango with its FreeType
# back end, HarfBuzz's subsetter) and fonts for Hindi (Devanagari) and English, both with the rupee
# sign (fonts-lohit-deva, fonts-dejavu-core). Installs only what is missing (debian-packages.sh).
# Without them the application runs and the printable pages work; only the PDF answers
# "not available" (webapp/pdf.py).
set -euo pipefail
exec "$(dirname "$0")/debian-packages.sh" "PDF documents" \
  libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fontconfig fonts-lohit-deva fonts-dejavu-core
