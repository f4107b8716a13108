#!/usr/bin/env python3
"""Checks the CSV part of a cohort export.

Usage: check_csv.py DIR    (DIR = the export's data/csv folder, or a folder that contains csv/)

1. `frictionless validate datapackage.json` (through the Python API of frictionless 5): every
   table matches its Table Schema (types, enum/minimum/maximum/required constraints, primary key,
   foreign keys to participants) and the dialect.
2. A strict RFC 4180 check of every *.csv of our own: UTF-8 without BOM, every record ended by
   CRLF (no bare CR or LF outside quotes), quotes only around whole fields with inner quotes
   doubled, the same number of fields on every record as in the header.
Exits 1 and lists every failure when anything is wrong.
"""
import sys
from pathlib import Path

from frictionless import validate


def rfc4180_problems(data):
    """Parses `data` (bytes) strictly; returns (problems, records, width)."""
    problems = []
    if data.startswith(b"\xef\xbb\xbf"):
        return ["starts with a UTF-8 byte order mark"], 0, 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [f"not UTF-8 ({error})"], 0, 0
    if not text:
        return ["empty file (a header row is required)"], 0, 0
    if not text.endswith("\r\n"):
        problems.append("the last record does not end with CRLF")
    records = []
    fields = []
    i, n, line = 0, len(text), 1
    while i < n:
        # one field
        if text[i] == '"':
            i += 1
            value = []
            while True:
                if i >= n:
                    problems.append(f"line {line}: quoted field not closed")
                    return problems, len(records), 0
                c = text[i]
                if c == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        value.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                if c == "\n":
                    line += 1
                value.append(c)
                i += 1
            if i < n and text[i] not in ",\r":
                problems.append(f"line {line}: characters after a closing quote")
                while i < n and text[i] not in ",\r\n":
                    i += 1
        else:
            start = i
            while i < n and text[i] not in ',\r\n"':
                i += 1
            if i < n and text[i] == '"':
                problems.append(f"line {line}: quote inside an unquoted field")
                while i < n and text[i] not in ",\r\n":
                    i += 1
            value = text[start:i]
        fields.append(value)
        if i >= n:
            records.append(fields)
            break
        c = text[i]
        if c == ",":
            i += 1
            if i >= n:
                fields.append("")
                records.append(fields)
            continue
        if c == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
            else:
                problems.append(f"line {line}: bare CR")
                i += 1
        elif c == "\n":
            problems.append(f"line {line}: bare LF (records must end with CRLF)")
            i += 1
        records.append(fields)
        fields = []
        line += 1
    if not records:
        return problems + ["no header row"], 0, 0
    width = len(records[0])
    for number, record in enumerate(records, 1):
        if len(record) != width:
            problems.append(f"record {number}: {len(record)} fields, header has {width}")
    if len(set(records[0])) != width or any(not name for name in records[0]):
        problems.append("header names must be unique and non-empty")
    return problems, len(records) - 1, width


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    directory = Path(sys.argv[1])
    if (directory / "csv").is_dir():
        directory = directory / "csv"
    failures = []
    csv_files = sorted(directory.glob("*.csv"))
    if not csv_files:
        failures.append(f"{directory}: no CSV files")
    total_rows = 0
    for path in csv_files:
        problems, rows, width = rfc4180_problems(path.read_bytes())
        failures += [f"{path.name}: {problem}" for problem in problems]
        total_rows += rows
        print(f"rfc4180 {path.name}: {rows} rows x {width} columns" + (" FAIL" if problems else ""))

    descriptor = directory / "datapackage.json"
    if not descriptor.is_file():
        failures.append("datapackage.json: missing")
    else:
        report = validate(str(descriptor))
        for task in report.tasks:
            print(f"frictionless {task.name}: {'valid' if task.valid else 'INVALID'} ({task.stats.get('rows')} rows)")
        for row in report.flatten(["type", "rowNumber", "fieldName", "message"]):
            failures.append(f"frictionless: {row}")
        for error in report.errors:
            failures.append(f"frictionless: {error.message}")
        if not report.valid and not failures:
            failures.append("frictionless: package is not valid")
        listed = {task.name for task in report.tasks}
        for path in csv_files:
            if path.stem not in listed:
                failures.append(f"{path.name}: not described in datapackage.json")

    print(f"checked: {len(csv_files)} CSV files, {total_rows} data rows")
    if failures:
        print(f"FAIL: {len(failures)} problem(s)")
        for failure in failures:
            print("  " + failure)
        return 1
    print("OK: CSV checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
