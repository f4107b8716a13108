#!/bin/sh
# Before/after check for export performance work: exports one kept benchmark workspace with two
# cohort-bench binaries (same workspace, keys, recipient and instant) and compares what the
# published archives hold (the tar inside, byte for byte) and the .tar.gz files themselves. Exit 0
# when every phase's tar is identical, 1 when one differs. The .tar.gz bytes may differ with the
# same tar when only the compression changed (e.g. the deflate spool's blocks, per file since
# session 18); the line says so.
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
    gz=""
    for side in old new; do
        if [ $side = old ]; then bin=$old threads=${COHORT_BENCH_THREADS_OLD:-}; else bin=$new threads=${COHORT_BENCH_THREADS_NEW:-}; fi
        rm -rf "${dir:?}/$out"
        "$bin" phase "$phase" --dir "$dir" --quiet ${threads:+--threads "$threads"} > /dev/null
        digests="$digests $(gzip -dc "$dir/$out"/*.tar.gz | sha256sum | cut -d' ' -f1)"
        gz="$gz $(cat "$dir/$out"/*.tar.gz | sha256sum | cut -d' ' -f1)"
    done
    set -- $gz
    if [ "$1" = "$2" ]; then same_gz="and the .tar.gz too"; else same_gz=".tar.gz differs (old $1, new $2)"; fi
    set -- $digests
    if [ "$1" = "$2" ]; then
        echo "$phase: identical tar ($1); $same_gz"
    else
        echo "$phase: DIFFERENT tar (old $1, new $2)"
        status=1
    fi
done
exit $status
