#!/usr/bin/env bash
# Creates .venv at the repository root with the Python tools the interop checks use
# (fhir.resources, fhirpathpy, jsonschema, frictionless, bagit, pycanon), pinned in requirements-interop.txt.
# Usage: scripts/setup-venv.sh            (re-running it updates an existing .venv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$root/.venv/bin/python" ]; then
    "$python" -m venv "$root/.venv"
fi
"$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements-interop.txt"
"$root/.venv/bin/python" - <<'PY'
import fhir.resources, frictionless, fhirpathpy, jsonschema, bagit, pycanon  # noqa: F401
print(f"ok: .venv ready (fhir.resources {fhir.resources.__version__}, FHIR {fhir.resources.__fhir_version__}, frictionless {frictionless.__version__})")
PY
