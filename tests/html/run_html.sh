#!/bin/sh
# run_html.sh - runs tests/html/run_html.js with node, or prints SKIP and
# exits 77 (CTest: skipped) when node, npm or Debian's chromium is missing.
command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed (apt-get install nodejs)"; exit 77; }
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm is not installed (apt-get install npm)"; exit 77; }
[ -x /usr/bin/chromium ] || { echo "SKIP: /usr/bin/chromium is not installed (apt-get install chromium)"; exit 77; }
exec node "$(dirname "$0")/run_html.js" "$@"
