#!/bin/sh
# SQLite's own floor for the import (issue 28): the records of a kept benchmark study copied by
# the sqlite3 shell alone — `INSERT INTO records SELECT …` in one transaction, in the order the
# import wrote them (by rowid where `records` has one; since `v6-records-by-key` it has none, and
# the rows go by import batch, then key; put in that order once, untimed, in a staging file the
# timed copy reads in rowid order) — into a fresh database with the same page size and the
# same `participants`, `import_batches` and `records` tables (their constraints and indexes), WAL,
# `secure_delete` and statement journals in memory as the store sets them, and foreign keys on and
# then off. No parsing, validating, sealing or binding: what
# is left is what SQLite itself does per row, so `cohort-bench phase import` can be read against
# it on the same machine. Prints seconds and CPU (user, system) per run.
#
#   swift run -c release cohort-bench --size M --keep --dir /tmp/bench   # once
#   scripts/sqlite-import-floor.sh /tmp/bench/M [runs]
#
# Needs the sqlite3 shell (Debian: sqlite3). The kept study is only read.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BENCH_DIR/SIZE [runs]" >&2; exit 64; }
source_db=$1/workspace/study.db
runs=${2:-3}
[ -f "$source_db" ] || { echo "$1 is not a kept cohort-bench size folder (no workspace/study.db)" >&2; exit 64; }
command -v sqlite3 >/dev/null || { echo "the sqlite3 shell is missing (apt-get install sqlite3)" >&2; exit 69; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
columns=$(sqlite3 -readonly "$source_db" "SELECT group_concat(name, ', ') FROM pragma_table_info('records')")
page_size=$(sqlite3 -readonly "$source_db" "PRAGMA page_size")
if [ "$(sqlite3 -readonly "$source_db" "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'id'")" = 1 ]; then
    order="id"
else
    order="batch_id, participant_pk, kind, start_ms, source"
fi
sqlite3 "$work/staging.db" "ATTACH 'file:$source_db?mode=ro' AS s; CREATE TABLE records AS SELECT $columns FROM s.records ORDER BY $order;"
for run in $(seq 1 "$runs"); do
    for keys in ON OFF; do
        rm -f "$work"/floor.db*
        sqlite3 "$work/floor.db" "PRAGMA page_size = $page_size; PRAGMA journal_mode = WAL" >/dev/null
        sqlite3 -readonly "$source_db" \
            "SELECT sql || ';' FROM sqlite_master WHERE type = 'table' AND name IN ('participants', 'import_batches', 'records')" |
            sqlite3 "$work/floor.db"
        sqlite3 "$work/floor.db" "ATTACH 'file:$source_db?mode=ro' AS s;
            INSERT INTO participants SELECT * FROM s.participants; INSERT INTO import_batches SELECT * FROM s.import_batches;"
        /usr/bin/time -f "run $run, foreign keys $keys: %e s (user %U s, system %S s)" sqlite3 "$work/floor.db" \
            "PRAGMA foreign_keys = $keys; PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY;
            ATTACH 'file:$work/staging.db?mode=ro' AS s;
            BEGIN; INSERT INTO records ($columns) SELECT $columns FROM s.records ORDER BY rowid; COMMIT;" >/dev/null
    done
done

