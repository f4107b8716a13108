#!/bin/sh
# Before/after check for export performance work: exports one kept benchmark workspace with two
# cohort-bench binaries (same workspace, keys, recipient and instant) and compares the published
# archives byte for byte. Exit 0 when every phase's archives are identical, 1 when one differs.
#
#   swift run -c release cohort-bench --size M --keep --dir /tmp/bench   # once, with either binary
#   scripts/export-identity.sh OLD/cohort-bench NEW/cohort-bench /tmp/bench/M
#   scripts/export-identity.sh OLD/cohort-bench NEW/cohort-bench /tmp/bench/M export-tables
#
# Extra arguments after the phases are not accepted; to compare thread counts, pass the same
# binary twice and set COHORT_BENCH_THREADS_OLD / COHORT_BENCH_THREADS_NEW (e.g. 1 and 4).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OLD_BENCH NEW_BENCH BENCH_DIR/SIZE [export-tables] [export]" >&2; exit 64; }
old=$1 new=$2 dir=$3
shift 3
phases=${*:-export-tables export}
[ -f "$dir/.cohort-bench" ] || { echo "$dir is not a kept cohort-bench size folder (no .cohort-bench marker)" >&2; exit 64; }
status=0
for phase in $phases; do
    case $phase in
    export-tables) out=exports-tables ;;
    export) out=exports ;;
    *) echo "unknown phase '$phase': expected export-tables or export" >&2; exit 64 ;;
    esac
    digests=""
    for side in old new; do
        if [ $side = old ]; then bin=$old threads=${COHORT_BENCH_THREADS_OLD:-}; else bin=$new threads=${COHORT_BENCH_THREADS_NEW:-}; fi
        rm -rf "${dir:?}/$out"
        "$bin" phase "$phase" --dir "$dir" --quiet ${threads:+--threads "$threads"} > /dev/null
        digests="$digests $(cat "$dir/$out"/*.tar.gz | sha256sum | cut -d' ' -f1)"
    done
    set -- $digests
    if [ "$1" = "$2" ]; then
        echo "$phase: identical ($1)"
    else
        echo "$phase: DIFFERENT (old $1, new $2)"
        status=1
    fi
done
exit $status
