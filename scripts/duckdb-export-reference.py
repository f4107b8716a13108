#!/usr/bin/env python3
"""The DuckDB pipeline cohort's CSV + JSON export is timed against (issue 28; `cohort-bench`).

A data engineer's comparable job on the bench's own input files, with the `duckdb` package
(pinned in requirements-interop.txt, installed into .venv by scripts/setup-venv.sh):

  1. read the roster (roster.csv) and every record file (*.csv, *.ndjson) of IMPORT_DIR;
  2. pseudonyms: HMAC-SHA256 of the participant code under a random per-run salt (16 characters of
     base 32), and a per-participant date shift of -182 … +182 days from the same salted hash;
  3. records: the participant replaced by the pseudonym, start and end shifted by the participant's
     days (local time and UTC offset kept, as cohort writes them), notes scrubbed of every roster
     identifier (codes, names and their parts, e-mail addresses, phones, addresses, MRNs: one
     case-insensitive regular expression per 400 of them) and of e-mail and phone patterns, sorted
     by pseudonym, kind and start; weather (environment*) is left out, as the bench's protocol
     leaves it out of exports;
  4. a participants table (pseudonym, sex, birth year, ten-year age band, time zone);
  5. each table as CSV (with header) and NDJSON, a `manifest-sha256.txt` of the files' SHA-256,
     all in one tar.gz (Python's tarfile and zlib at --compression's level, one thread), then a
     manifest with the archive's SHA-256 signed with Ed25519 (`openssl pkeyutl`; the key is made
     before the clock starts, as cohort's workspace key exists before an export).

Prints one JSON line: seconds (from reading the files to the signature), peak resident memory of
this process (DuckDB runs in it) and of openssl, records written, payload and archive bytes, and
the DuckDB version. Exit 3 when the duckdb package is missing (run scripts/setup-venv.sh).

Usage: duckdb-export-reference.py IMPORT_DIR OUT_DIR [--compression 1-9] [--threads N]
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

try:
    import duckdb
except ImportError:
    print("duckdb is not installed in this Python (run scripts/setup-venv.sh)", file=sys.stderr)
    sys.exit(3)

# Columns of every record file, as the bench writes them (cohort's import format).
COLUMNS = ["participant", "kind", "start", "end", "value", "unit", "text", "source", "note"]
EMAIL = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"
PHONE = r"(?:\+?1[ .-]?)?\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-]?[0-9]{4}"
REDACTED = "[REDACTED]"
TERMS_PER_PATTERN = 400


def cpu_seconds():
    """CPU time so far, user and system: this process's threads (DuckDB's) and its waited-for children (openssl)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

def regex_escape(text):
    """RE2 escaping of a literal (DuckDB's regular expressions are RE2)."""
    return "".join("\\" + c if c in r".^$|?*+()[]{}\/-" else c for c in text)


def sql_string(text):
    return "'" + text.replace("'", "''") + "'"


def keys(roster, salt):
    """Per participant: pseudonym and shift days, from HMAC-SHA256(salt, code)."""
    out = []
    for row in roster:
        digest = hmac.new(salt, row["code"].encode(), hashlib.sha256).digest()
        pseudonym = base64.b32encode(digest[:10]).decode()[:16]
        shift = int.from_bytes(digest[10:14], "big") % 365 - 182
        out.append((row["code"], pseudonym, shift))
    return out


def roster_terms(roster):
    terms = set()
    for row in roster:
        for column in ("code", "name", "email", "phone", "address", "mrn"):
            value = (row.get(column) or "").strip()
            if len(value) >= 2:
                terms.add(value)
        for part in (row.get("name") or "").replace("-", " ").split():
            if len(part) >= 3:
                terms.add(part)
    # Longest first, so a full name is replaced whole before its parts.
    return sorted(terms, key=lambda t: (-len(t), t))


def scrub_expression(column, terms):
    """Nested regexp_replace calls: the roster in chunks, then e-mail and phone patterns."""
    expression = column
    for i in range(0, len(terms), TERMS_PER_PATTERN):
        alternation = "|".join(regex_escape(t) for t in terms[i : i + TERMS_PER_PATTERN])
        pattern = sql_string(r"\b(?:" + alternation + r")\b")
        expression = f"regexp_replace({expression}, {pattern}, '{REDACTED}', 'gi')"
    for pattern in (EMAIL, PHONE):
        expression = f"regexp_replace({expression}, {sql_string(pattern)}, '{REDACTED}', 'g')"
    return f"CASE WHEN {column} IS NULL OR {column} = '' THEN {column} ELSE {expression} END"


def shifted(column):
    """'YYYY-MM-DDTHH:MM:SS±HH:MM' shifted by k.shift days, the local time and offset kept."""
    return (
        f"CASE WHEN {column} IS NULL OR {column} = '' THEN NULL ELSE "
        f"strftime(strptime(substr({column}, 1, 19), '%Y-%m-%dT%H:%M:%S') + to_days(k.shift), '%Y-%m-%dT%H:%M:%S') "
        f"|| substr({column}, 20) END"
    )


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("import_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--compression", type=int, default=6, choices=range(1, 10))
    parser.add_argument("--threads", type=int, help="DuckDB's threads (default: every core)")
    args = parser.parse_args()

    out = os.path.abspath(args.out_dir)
    if os.path.exists(out):
        shutil.rmtree(out)
    bag = os.path.join(out, "bag")
    os.makedirs(os.path.join(bag, "csv"))
    os.makedirs(os.path.join(bag, "json"))
    key = os.path.join(out, "signing-key.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key], check=True, capture_output=True)

    start = time.perf_counter()
    cpu_start = cpu_seconds()
    con = duckdb.connect()
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    files = sorted(os.listdir(args.import_dir))
    roster_path = os.path.join(args.import_dir, "roster.csv")
    roster_rel = con.read_csv(roster_path, all_varchar=True, header=True)
    names = roster_rel.columns
    roster = [dict(zip(names, row)) for row in roster_rel.fetchall()]
    salt = secrets.token_bytes(32)
    con.execute("CREATE TEMP TABLE k (code VARCHAR, pseudonym VARCHAR, shift INTEGER)")
    con.executemany("INSERT INTO k VALUES (?, ?, ?)", keys(roster, salt))
    note = scrub_expression("r.note", roster_terms(roster))

    records = 0
    tables = []
    for name in files:
        stem, ext = os.path.splitext(name)
        path = os.path.join(args.import_dir, name)
        if name == "roster.csv" or ext not in (".csv", ".ndjson") or stem.startswith("environment"):
            continue
        columns = "{" + ", ".join(f"'{c}': '{'DOUBLE' if c == 'value' else 'VARCHAR'}'" for c in COLUMNS) + "}"
        if ext == ".csv":
            source = f"read_csv({sql_string(path)}, header = true, columns = {columns})"
        else:
            source = f"read_json({sql_string(path)}, format = 'newline_delimited', columns = {columns})"
        con.execute(
            f"""CREATE TEMP TABLE "{stem}" AS
            SELECT k.pseudonym, r.kind, {shifted('r.start')} AS start, {shifted('r."end"')} AS "end",
                   r.value, r.unit, r.text, r.source, {note} AS note
            FROM {source} r JOIN k ON k.code = r.participant
            ORDER BY k.pseudonym, r.kind, start"""
        )
        tables.append(stem)
    con.execute(
        """CREATE TEMP TABLE participants AS
        SELECT k.pseudonym, p.sex, substr(p.birth_date, 1, 4) AS birth_year,
               CAST((2026 - CAST(substr(p.birth_date, 1, 4) AS INTEGER)) // 10 * 10 AS VARCHAR) || 's' AS age_band,
               p.time_zone
        FROM read_csv(?, all_varchar = true, header = true) p JOIN k ON k.code = p.code
        ORDER BY k.pseudonym""",
        [roster_path],
    )
    tables.append("participants")
    for table in tables:
        csv_path = os.path.join(bag, "csv", table + ".csv")
        json_path = os.path.join(bag, "json", table + ".ndjson")
        con.execute(f"""COPY "{table}" TO {sql_string(csv_path)} (FORMAT csv, HEADER)""")
        con.execute(f"""COPY "{table}" TO {sql_string(json_path)} (FORMAT json)""")
        if table != "participants":
            records += con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        con.execute(f'DROP TABLE "{table}"')
    con.close()

    payload = 0
    lines = []
    for folder in ("csv", "json"):
        for name in sorted(os.listdir(os.path.join(bag, folder))):
            path = os.path.join(bag, folder, name)
            payload += os.path.getsize(path)
            lines.append(f"{sha256_file(path)}  {folder}/{name}\n")
    with open(os.path.join(bag, "manifest-sha256.txt"), "w") as f:
        f.writelines(lines)
    archive = os.path.join(out, "export.tar.gz")
    with tarfile.open(archive, "w:gz", compresslevel=args.compression) as tar:
        tar.add(bag, arcname="export")
    manifest = os.path.join(out, "export.manifest.json")
    with open(manifest, "w") as f:
        json.dump({"archive": "export.tar.gz", "sha256": sha256_file(archive), "bytes": os.path.getsize(archive)}, f)
    subprocess.run(
        ["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", manifest, "-out", manifest + ".sig"], check=True, capture_output=True
    )
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start

    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_bytes": peak,
                "cpu_seconds": cpu,
                "records": records,
                "payload_bytes": payload,
                "archive_bytes": os.path.getsize(archive),
                "duckdb": duckdb.__version__,
            },
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
