#!/usr/bin/env python3
"""Checks FHIR inputs (import fixtures) against FHIR R4 with fhir.resources 6.4.0 (true R4).

Usage: check_fhir_input.py PATH...   (files: .ndjson one resource per line, .json one resource or Bundle;
                                      folders: their .ndjson/.json files)
Every resource, and every Bundle entry's resource, must parse with its R4 model. Exits 1 listing
every failure (file:line and the model's message), 0 with a count otherwise.
"""
import json
import sys
from pathlib import Path

from fhir.resources import __fhir_version__, get_fhir_model_class


def check(resource, where, failures):
    try:
        get_fhir_model_class(resource["resourceType"]).parse_obj(resource)
    except Exception as error:  # noqa: BLE001 - every validation error is a failure to report
        failures.append(f"{where}: fhir.resources (R4) rejects {resource.get('resourceType')}: {error}")
        return 0
    return 1


def main():
    failures, count = [], 0
    files = []
    for arg in sys.argv[1:]:
        path = Path(arg)
        files += sorted(p for p in path.iterdir() if p.suffix in (".ndjson", ".json")) if path.is_dir() else [path]
    for path in files:
        if path.suffix == ".ndjson":
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    count += check(json.loads(line), f"{path}:{number}", failures)
        else:
            count += check(json.loads(path.read_text(encoding="utf-8")), str(path), failures)
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"ok: {count} resources are valid FHIR {__fhir_version__}")


main()
