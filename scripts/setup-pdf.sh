#!/usr/bin/env bash
# What the PDF documents need from Debian: WeasyPrint's system libraries (Pango with its FreeType
# back end, HarfBuzz's subsetter) and fonts for Hindi (Devanagari) and English, both with the rupee
# sign (fonts-lohit-deva, fonts-dejavu-core). Installs only what is missing; needs root and apt-get
# (the development and CI machines have both). Without them the application runs and the printable
# pages work; only the PDF answers "not available" (webapp/pdf.py).
set -euo pipefail
wanted=(libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fontconfig fonts-lohit-deva fonts-dejavu-core)
missing=()
for package in "${wanted[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "PDF documents need Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})" >&2
  exit 0
fi
echo "installing Debian packages for PDF documents: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
