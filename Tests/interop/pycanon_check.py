#!/usr/bin/env python3
"""k and l of a published export computed by pycanon (https://pypi.org/project/pycanon/).

Usage: pycanon_check.py CSV_DIR QI[,QI...] [TABLE.COLUMN ...]

k: pycanon.anonymity.k_anonymity over participants.csv and the QI columns. l: for each sensitive
TABLE.COLUMN, participants.csv is joined with that table's (pseudonym, column) values — one row
per participant and distinct value, an empty value for participants without rows — and
pycanon.anonymity.l_diversity is taken over the QI columns. Cells are read as text with empty
cells kept as "" (pandas would otherwise turn them into NaN, which groupby drops).
Prints one JSON object: {"k": int, "l": {"TABLE.COLUMN": int}}.
"""
import json
import os
import sys

import pandas as pd
from pycanon import anonymity


def read(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    folder, qi = sys.argv[1], [c for c in sys.argv[2].split(",") if c]
    participants = read(os.path.join(folder, "participants.csv"))
    result = {"k": int(anonymity.k_anonymity(participants, qi)), "l": {}}
    for name in sys.argv[3:]:
        table, column = name.split(".", 1)
        values = read(os.path.join(folder, table + ".csv"))[["pseudonym", column]].drop_duplicates()
        values = values.rename(columns={column: "__sensitive"})
        joined = participants[["pseudonym"] + qi].merge(values, on="pseudonym", how="left")
        joined["__sensitive"] = joined["__sensitive"].fillna("")
        joined = joined.reset_index(drop=True)
        result["l"][name] = int(anonymity.l_diversity(joined, qi, ["__sensitive"]))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
