#!/usr/bin/env bash
# Install the Debian packages a set-up step needs, only those missing: the shared part of
# setup-pdf.sh and setup-browser.sh.
#   scripts/debian-packages.sh "WHAT THEY ARE FOR" PACKAGE...
# A package is taken as present when dpkg knows it, or, for chromium, when /usr/bin/chromium runs.
# Needs root and apt-get (the development and CI machines have both); otherwise it prints the
# apt-get command to run and exits 0, so the rest of the set-up goes on.
set -euo pipefail
purpose="$1"; shift
missing=()
for package in "$@"; do
  if [ "$package" = chromium ] && [ -x /usr/bin/chromium ]; then continue; fi
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$purpose need Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})" >&2
  exit 0
fi
echo "installing Debian packages for $purpose: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
