#!/usr/bin/env python3
"""Lists the functions longer than 60 lines, and fails when one is not on the allow-list.

A function's length is the number of code lines from the line that opens its body to the line
that closes it, inclusive — blank lines and lines holding only a comment do not count, as in
SwiftLint's function_body_length (`func`, `init`, `deinit`, `subscript`, and computed properties or accessors
with a body). A function nested in another counts in its outer function's length too.
Comments, string literals (including multi-line and raw ones) and character escapes are skipped
when the braces are matched.

The allow-list below names the functions that are still too long (module, file, name). It may only
shrink: a function on it that is no longer too long is an error too, so the list stays honest.
For the privacy modules and the library (CohortDeid, CohortPackage, CohortKit; issue 29) it is empty:
nothing there may exceed the limit.

Usage: scripts/check-function-length.py            check (exit 1 on a new long function)
       scripts/check-function-length.py --counts   also print the count per module
       scripts/check-function-length.py --list     print every function over the limit
"""
import pathlib
import re
import sys

LIMIT = 60
root = pathlib.Path(__file__).resolve().parent.parent

# (module, file under Sources/<module>/, function name): still longer than LIMIT. Shrink only.
ALLOWED: set[tuple[str, str, str]] = {
    ("CohortCore", "NodeReader+Protocol.swift", "readDeidentification"),
    ("CohortCore", "NodeReader+Protocol.swift", "readFieldRule"),
    ("CohortCore", "Timestamp.swift", "parse"),
    ("CohortDelivery", "SFTPDelivery.swift", "deliver"),
    ("CohortDemo", "AdversarialCorpus.swift", "init"),
    ("CohortDemo", "DemoCohort.swift", "write"),
    ("CohortDemo", "ExternalCorpusScore.swift", "scorePublished"),
    ("CohortDemo", "HeldOutForms.swift", "make"),
    ("CohortDemo", "TemplateCorpus.swift", "make"),
    ("CohortExport", "ExportWriter.swift", "init"),
    ("CohortIO", "CSVReader.swift", "scan"),
    ("CohortIO", "LineReader.swift", "forEachLine"),
    ("CohortImport", "JSONSyntax.swift", "firstProblem"),
    ("CohortImport", "NDJSONLineParser.swift", "scan"),
    ("CohortImport", "RecordValidator.swift", "validate"),
    ("CohortImport", "Zip/ZipArchive.swift", "read"),
    ("CohortImport", "Zip/ZipArchive.swift", "readDirectory"),
    ("CohortStore", "Shared/AuditChain.swift", "verify"),
    ("cohort", "Commands/Export.swift", "run"),
    ("cohort-bench", "AppleHealthBenchCommand.swift", "run"),
    ("cohort-bench", "AppleHealthBenchCommand.swift", "write"),
    ("cohort-bench", "CohortBench.swift", "run"),
    ("cohort-bench", "DeliveryBenchCommand.swift", "run"),
    ("cohort-bench", "FHIRBenchCommand.swift", "write"),
    ("cohort-bench", "HealthMetricsBenchCommand.swift", "run"),
}

declaration = re.compile(
    r"(?:^|[\s;{}])(?:(func)\s+([^\s(<]+)|(init)[?!]?\s*[(<]|(deinit)\b|(subscript)\s*[(<]|(var)\s+([A-Za-z_][A-Za-z0-9_]*)\s*:)"
)


def strip(text):
    """The text with comments and string literals blanked (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i
            i += hashes
            multi = text.startswith('"""', i)
            quote = '"""' if multi else '"'
            i += len(quote)
            close = quote + "#" * hashes
            escape = "\\" + "#" * hashes
            depth_interp = 0
            while i < n:
                if text.startswith(escape + "(", i):
                    # interpolation: skip to the matching parenthesis (strings inside are rare; count parens)
                    i += len(escape) + 1
                    depth_interp = 1
                    while i < n and depth_interp:
                        if text[i] == "(":
                            depth_interp += 1
                        elif text[i] == ")":
                            depth_interp -= 1
                        elif text[i] == '"':
                            # a nested string literal inside an interpolation
                            i += 1
                            while i < n and text[i] != '"':
                                i += 2 if text[i] == "\\" else 1
                        i += 1
                    continue
                if text.startswith(escape, i):
                    i += len(escape) + 1
                    continue
                if text.startswith(close, i):
                    i += len(close)
                    break
                if not multi and text[i] == "\n":
                    break
                i += 1
            out.append(re.sub(r"[^\n]", "s", text[start:i]))  # a string's lines are code lines
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, length) of every function in the file whose body is longer than LIMIT."""
    text = strip(path.read_text(encoding="utf-8"))
    line_of = []
    line = 1
    for ch in text:
        line_of.append(line)
        if ch == "\n":
            line += 1
    code_lines = text.split("\n")
    found = []
    pos = 0
    while True:
        m = declaration.search(text, pos)
        if not m:
            break
        pos = m.end()
        name = m.group(2) or m.group(3) or m.group(4) or m.group(5) or m.group(7)
        # the body: the first "{" after the signature at bracket depth 0 (a stored property has none)
        i, depth = m.end(), 0
        brace = None
        while i < len(text):
            ch = text[i]
            if ch in "([<" and not (ch == "<" and text[i - 1] in " ="):
                depth += 1
            elif ch in ")]>" and depth > 0 and not (ch == ">" and text[i - 1] == "-"):
                depth -= 1
            elif ch == "{" and depth == 0:
                brace = i
                break
            elif ch in "\n" and m.group(6) and depth == 0 and "=" in text[m.end():i]:
                break  # `var x: T = value` — stored, no body
            elif ch == "}" and depth == 0:
                break
            i += 1
        if brace is None:
            continue
        if m.group(6):
            between = text[m.end():brace]
            if "=" in between.replace("==", "").replace("->", ""):
                continue  # `var x: T = { … }()` — a stored property with a closure initializer
        depth, j = 0, brace
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first, last = line_of[brace], line_of[min(j, len(text) - 1)]
        length = sum(1 for k in range(first, last + 1) if code_lines[k - 1].strip())
        if length > LIMIT:
            found.append((name, line_of[m.start(0) + 1 if m.start(0) + 1 < len(text) else m.start(0)], length))
        if not m.group(6):
            pos = brace + 1  # nested functions are reported on their own as well
    return found


def main():
    args = set(sys.argv[1:])
    long = []
    for path in sorted((root / "Sources").rglob("*.swift")):
        parts = path.relative_to(root / "Sources").parts
        module, file = parts[0], "/".join(parts[1:])
        for name, line, length in functions(path):
            long.append((module, file, name, line, length))
    counts = {}
    for module, *_ in long:
        counts[module] = counts.get(module, 0) + 1
    if "--list" in args:
        for module, file, name, line, length in sorted(long, key=lambda x: -x[4]):
            print(f"{length:4d}  Sources/{module}/{file}:{line}  {name}")
    if "--counts" in args or "--list" in args:
        for module in sorted(counts):
            print(f"{module}: {counts[module]} function(s) over {LIMIT} lines")
        print(f"total: {len(long)}")
    seen = {(m, f, n) for m, f, n, _, _ in long}
    problems = []
    for module, file, name, line, length in long:
        if (module, file, name) not in ALLOWED:
            problems.append(f"Sources/{module}/{file}:{line}: {name} is {length} lines (limit {LIMIT}): split it into named steps")
    for entry in sorted(ALLOWED - seen):
        problems.append(f"{entry[0]}/{entry[1]}: {entry[2]} is on the allow-list but no longer over {LIMIT} lines: remove it from ALLOWED")
    for entry in ALLOWED:
        if entry[0] in ("CohortDeid", "CohortPackage", "CohortKit"):
            problems.append(f"{entry[0]}/{entry[1]}: {entry[2]}: CohortDeid, CohortPackage and CohortKit may not be on the allow-list")
    for line in problems:
        print(line)
    if problems:
        print(f"error: {len(problems)} function-length problem(s)", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {len(long)} function(s) over {LIMIT} lines, all on the shrinking allow-list")


if __name__ == "__main__":
    main()
