#!/usr/bin/env bash
# The peer tools (nlpaug, TextAttack, CheckList) in their own environment, benchmarks/.peers-venv (gitignored):
# never callbluff dependencies. Usage: bash benchmarks/peers/setup.sh   (then: .venv/bin/python benchmarks/peers/run.py)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=benchmarks/.peers-venv
PYTHON="${PYTHON:-python3}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip)
"${PIP[@]}" install -q --upgrade pip setuptools wheel
# torch: the exact pin resolves to the CPU wheel (TextAttack needs torch; an unpinned one is a multi-GB CUDA build)
"${PIP[@]}" install -q "torch==2.13.0"
"${PIP[@]}" install -q "nlpaug==1.1.11" || echo "WARNING: nlpaug did not install"
# checklist's setup.py runs `pip install jupyter` while building: it needs the venv's own pip (no build isolation)
# ipython<9: checklist's viewer imports IPython.core.display.display, which IPython 9 removed
"${PIP[@]}" install -q jupyter "notebook<7" "ipython<9" setuptools wheel
"${PIP[@]}" install -q --no-build-isolation "checklist==0.0.11" || echo "WARNING: checklist did not install"
# textattack 0.3.11 does not install from PyPI alone on this machine (Python 3.11): pip backtracks to a flair that
# pins the sentencepiece 0.1.95 sdist, whose build clones github.com; with sentencepiece>=0.2 it falls back to a
# gensim sdist that fails to build. Its rows then read "not measured" (no goal rests on TextAttack). Importing
# textattack, where it installs, downloads NLTK 'stopwords' (checklist: WordNet IC): substitutes below.
# A failed attempt is remembered (pip's backtracking takes minutes): delete the marker to try again.
TA_MARK="$VENV/.textattack-0.3.11-failed"
if [ -f "$TA_MARK" ]; then
  echo "textattack: not installable here (tried before; rm $TA_MARK to try again)"
elif ! "${PIP[@]}" install -q --prefer-binary "textattack==0.3.11"; then
  echo "WARNING: textattack did not install (see above)"; touch "$TA_MARK"
fi
# NLTK data: nothing can be downloaded from NLTK's server here. WordNet is callbluff's (Debian wordnet-base, written
# by scripts/setup.sh into .venv/nltk_data); stopwords, the perceptron tagger, wordnet_ic and sentiwordnet are
# substitutes in NLTK's formats built offline by nltk_data.py (each disclosed in RESULTS-peers.md). run.py sets
# NLTK_DATA to both directories.
[ -d .venv/nltk_data/corpora/wordnet ] || echo "WARNING: .venv/nltk_data/corpora/wordnet missing: run scripts/setup.sh"
[ -f "$VENV/nltk_data/taggers/averaged_perceptron_tagger_eng/README" ] \
  || .venv/bin/python benchmarks/peers/nltk_data.py --out "$VENV/nltk_data"
export NLTK_DATA="$PWD/$VENV/nltk_data:$PWD/.venv/nltk_data"
"$VENV/bin/python" - <<'PY'
import importlib
for m in ("nlpaug", "textattack", "checklist"):
    try:
        importlib.import_module(m)
        print(f"{m}: ok")
    except Exception as e:  # noqa: BLE001
        print(f"{m}: cannot import ({type(e).__name__}: {e})")
PY
