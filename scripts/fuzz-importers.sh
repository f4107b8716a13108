#!/usr/bin/env bash
# Fuzzes the importers (roster CSV, records CSV / NDJSON / JSON) with mutated files and prints
# "N cases tried, M held". Usage: bash scripts/fuzz-importers.sh [cases=3000] [seed=1]
# Each case must not crash, must be accepted or refused with a CohortError that quotes none of the
# planted identifier/record values, and must change nothing when refused (all or nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-3000}"
seed="${2:-1}"
swift build --build-tests >/dev/null
COHORT_FUZZ_CASES="$cases" COHORT_FUZZ_SEED="$seed" \
  swift test --skip-build --filter 'ImporterFuzzerTests/mutatedImportFilesNeverCrashLeakOrHalfImport' 2>&1 \
  | grep -E 'importer fuzz|✘|↳ case|Test run with'
exit "${PIPESTATUS[0]}"
