#!/usr/bin/env bash
# The whole test suite: unit tests, end-to-end tests of the built `cohort` binary, and interop
# checks with external validators (FHIR, Frictionless, BagIt, OpenSSL) from a pinned .venv.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ -f scripts/setup-venv.sh ]; then
  bash scripts/setup-venv.sh || { echo "error: could not set up the interop .venv" >&2; exit 1; }
fi

# The module graph in Package.swift must be the one the imports build.
python3 scripts/check-imports.py || { echo "error: Package.swift and the imports disagree (scripts/check-imports.py)" >&2; exit 1; }
python3 scripts/check-function-length.py || { echo "error: a function over 60 lines that is not on the allow-list (scripts/check-function-length.py)" >&2; exit 1; }
# Every public declaration of CohortKit (the library users call) has a /// doc comment.
python3 scripts/check-docs.py || { echo "error: undocumented public declarations in CohortKit (scripts/check-docs.py)" >&2; exit 1; }

# Build everything first (the end-to-end tests run the built binary) and refuse warnings in our code.
swift build --build-tests 2>&1 | tee /tmp/cohort-build.log | grep -E "error|warning: " | grep -v "/.build/" || true
if [ "${PIPESTATUS[0]}" -ne 0 ]; then echo "error: the build failed" >&2; exit 1; fi
if grep -E "^$(pwd)/(Sources|Tests)/.*warning:" /tmp/cohort-build.log >/dev/null; then
  echo "error: the build has warnings in Sources/ or Tests/ (house style: none)" >&2
  exit 1
fi

swift test 2>&1 | tee /tmp/cohort-test.log | grep -vE '^\[[0-9]+/[0-9]+\]|^Building|^Compiling|^Write |^Emitting|^Linking'
status="${PIPESTATUS[0]}"
[ "$status" -eq 0 ] || exit "$status"

# The end-to-end suites (CLITests) again with every workspace on PostgreSQL: `cohort init` and
# `cohort demo` get a fresh database of one throwaway cluster per test process (see
# Tests/CLITests/CLI.swift), and the tests read or edit the study through its URL where they
# read or edit study.db on SQLite. Left out: the *BenchCLITests suites (cohort-bench makes its
# own SQLite workspaces, whatever COHORT_TEST_STORE says; BenchStoresCLITests runs it with
# --store both here). Inside the suites, tests that only a study.db file can suffer (an empty
# file, rows written past SQLite's CHECK constraints, SQLite's write lock, a read-only copy of
# the file, SIGKILL at SQLite's fsyncs) skip themselves on PostgreSQL and say so; the list is in
# docs/store.md ("Tests by store").
echo "== end-to-end suites on PostgreSQL (COHORT_TEST_STORE=postgres)"
started=$(date +%s)
COHORT_TEST_STORE=postgres swift test --skip-build --filter '^CLITests\.' --skip 'BenchCLITests' 2>&1 \
  | tee /tmp/cohort-test-postgres.log | grep -vE '^\[[0-9]+/[0-9]+\]|^Building|^Compiling|^Write |^Emitting|^Linking'
status="${PIPESTATUS[0]}"
echo "== PostgreSQL pass: $(( $(date +%s) - started )) s"
exit "$status"
