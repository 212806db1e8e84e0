#!/usr/bin/env bash
# Translations (see README, "Languages"). Usage:
#   scripts/translations.sh update    extract every marked string to messages.pot and merge it into each .po
#   scripts/translations.sh compile   compile the .po catalogues to .mo (setup.sh does this; .mo is not in git)
set -euo pipefail
cd "$(dirname "$0")/.."
PYBABEL=.venv/bin/pybabel
case "${1:-}" in
  update)
    pot="$(mktemp --suffix=.pot)"
    "$PYBABEL" extract -F babel.cfg -k _l -k lazy_gettext -k N_ -k M_ -k MN_:1,2 --no-location --sort-output \
      --project=rule130 -o "$pot" . 2>/dev/null
    "$PYBABEL" update -i "$pot" -d webapp/translations --ignore-obsolete --no-wrap --no-fuzzy-matching
    rm -f "$pot"
    echo "now translate the new (empty) msgstr entries in webapp/translations/hi/LC_MESSAGES/messages.po"
    ;;
  compile)
    "$PYBABEL" compile -d webapp/translations --statistics
    ;;
  *)
    echo "usage: scripts/translations.sh update|compile" >&2; exit 2 ;;
esac
