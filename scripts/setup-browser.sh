#!/usr/bin/env bash
# What the browser tests and PDF/screenshots need from Debian: chromium (Playwright drives it; Playwright's
# own browser download is never used) and a Devanagari font so Hindi renders instead of boxes.
# Installs only what is missing; needs root and apt-get (the development and CI machines have both).
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s fonts-lohit-deva >/dev/null 2>&1 || missing+=(fonts-lohit-deva)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "browser tests need Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})" >&2
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
