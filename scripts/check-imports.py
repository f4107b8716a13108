#!/usr/bin/env python3
"""Fails when a target imports a module it does not declare, or declares one it never imports,
or when ARCHITECTURE.md's module table says something else than Package.swift.

The module graph in Package.swift must be the one the code builds (`swift package dump-package`
gives the declared dependencies; every `import` line under Sources/<target> and Tests/<target>
gives the used ones). System modules (Foundation, Glibc, Testing, …) are ignored.
Nothing is re-exported (`@_exported` is refused), so what `cohort` imports is what it uses.
ARCHITECTURE.md's "Modules" table must have one row per library and executable target, and its
"may import" cell must name exactly the target's declared dependencies (sibling modules by their
short name, `Core` for `CohortCore`; products and system libraries by module name; text in
parentheses is a note).
Usage: scripts/check-imports.py   (exit 0 = the graph is honest; 1 = it is not, with the lines)
"""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True, capture_output=True, text=True).stdout)

# Module names of product dependencies, as imported (product name → module name where they differ).
# GRDB's product also brings its SQLite module (GRDBSQLite), which may be imported for the C API.
product_modules = {"GRDB": {"GRDB", "GRDBSQLite"}}
system = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Darwin", "Dispatch", "Testing", "XCTest",
    "Synchronization", "os", "_Concurrency", "Musl", "System",
}
import_line = re.compile(r"^\s*(?:@testable\s+|@_implementationOnly\s+|@preconcurrency\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_.]+)?\s*(?://.*)?$", re.M)

# A test target may depend on an executable target only so that the binary is built first.
executables = {t["name"] for t in package["targets"] if t["type"] == "executable"}
problems = []
for target in package["targets"]:
    if target["type"] == "system":
        continue
    name = target["name"]
    declared = set()
    for dependency in target["dependencies"]:
        kind, value = next(iter(dependency.items()))
        module = value[0]
        declared |= product_modules.get(module, {module})
    folder = root / ("Tests" if target["type"] == "test" else "Sources") / (target.get("path") or name)
    used = {}
    for path in sorted(folder.rglob("*.swift")):
        text = path.read_text(encoding="utf-8")
        for match in import_line.finditer(text):
            module = match.group(1)
            if module in system or module == name:
                continue
            used.setdefault(module, path.relative_to(root).as_posix())
    for module, where in sorted(used.items()):
        if module not in declared:
            problems.append(f"{name}: imports {module} ({where}) but does not declare it in Package.swift")
    for module in sorted(declared - set(used) - {"GRDBSQLite"} - executables):
        problems.append(f"{name}: declares {module} in Package.swift but never imports it")

# No re-exports: a module's imports are its own, and `import CohortKit` brings only CohortKit.
for path in sorted((root / "Sources").rglob("*.swift")):
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"^\s*@_exported\b", text):
            problems.append(f"{path.relative_to(root).as_posix()}:{number}: @_exported re-exports a module; import it where it is used instead")

# ARCHITECTURE.md's module table against Package.swift.
def short(module):
    return module[len("Cohort"):] if module.startswith("Cohort") and module != "CohortKit" else module

table = {}
architecture = (root / "ARCHITECTURE.md").read_text(encoding="utf-8")
section = architecture.split("## Modules", 1)[1].split("\n## ", 1)[0]
for row in section.splitlines():
    cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
    if len(cells) != 3 or not cells[0].startswith("`"):
        continue
    allowed = re.sub(r"\([^)]*\)", "", cells[2])
    table[cells[0].strip("`")] = {name.strip().strip("`") for name in allowed.split(",") if name.strip()} - system
for target in package["targets"]:
    if target["type"] in ("system", "test"):
        continue
    name = target["name"]
    declared = set()
    for dependency in target["dependencies"]:
        kind, value = next(iter(dependency.items()))
        declared.add(short(value[0]))
    if name not in table:
        problems.append(f"ARCHITECTURE.md: the module table has no row for target {name} (Package.swift declares it)")
        continue
    for module in sorted(declared - table[name]):
        problems.append(f"ARCHITECTURE.md: {name} declares {module} in Package.swift but its table row does not list it")
    for module in sorted(table[name] - declared):
        problems.append(f"ARCHITECTURE.md: {name}'s table row lists {module} but Package.swift does not declare it")
for name in sorted(set(table) - {t["name"] for t in package["targets"]}):
    problems.append(f"ARCHITECTURE.md: the module table lists {name}, which is not a target in Package.swift")

for line in problems:
    print(line)
if problems:
    print(f"error: {len(problems)} difference(s) between Package.swift and the imports", file=sys.stderr)
    sys.exit(1)
print(f"ok: {sum(1 for t in package['targets'] if t['type'] != 'system')} targets import exactly what they declare")
