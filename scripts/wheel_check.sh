#!/usr/bin/env bash
# The path of a user without the Makefile (issue 35): build callbluff's wheel, install it into a new virtualenv
# outside the repository (torch pinned to the CPU wheel first, then the wheel with extras hf and nlp-data), then
# `callbluff prepare` and `callbluff demo --limit 5` there. Uses the machine's callbluff cache (the AddSent lexicon
# and other caches built once) unless --fresh-cache is given (then a new CALLBLUFF_HOME: prepare builds them all).
# Usage: bash scripts/wheel_check.sh [--fresh-cache] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
FRESH=0; KEEP=0
for arg in "$@"; do
  case "$arg" in
    --fresh-cache) FRESH=1 ;;
    --keep) KEEP=1 ;;
    *) echo "wheel_check.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
log() { printf '\033[1;34m[wheel-check]\033[0m %s\n' "$*"; }
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d -t callbluff-wheel-XXXXXX)"
[ "$KEEP" = 1 ] || trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
since() { echo "$(( $(date +%s) - T0 )) s"; }

log "building the wheel into $WORK/dist"
"$PYTHON" -m pip wheel -q --no-deps -w "$WORK/dist" . >/dev/null
WHEEL="$(ls "$WORK"/dist/callbluff-*.whl)"
log "new virtualenv $WORK/venv; pip install torch==2.13.0, then $(basename "$WHEEL")[hf,nlp-data]"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade "pip>=24"
"$WORK/venv/bin/python" -m pip install -q "torch==2.13.0"
"$WORK/venv/bin/python" -m pip install -q "${WHEEL}[hf,nlp-data]"
log "installed in $(since)"
[ "$FRESH" = 1 ] && export CALLBLUFF_HOME="$WORK/home"
cd "$WORK"   # nothing of the repository on the path: the installed wheel alone
"$WORK/venv/bin/python" -c "import callbluff, sys; assert '/src/' not in callbluff.__file__, callbluff.__file__"
"$WORK/venv/bin/callbluff" prepare
log "prepared in $(since)"
"$WORK/venv/bin/callbluff" demo --limit 5 --out "$WORK/demo-run"
for s in essay content reading questions; do
  test -s "$WORK/demo-run/runs/$s/metrics.json" || { log "FAILED: no metrics.json for suite $s"; exit 1; }
done
log "passed in $(since): the wheel installs, prepares and runs the demo (four reports in $WORK/demo-run/runs)"
