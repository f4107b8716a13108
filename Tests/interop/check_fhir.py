#!/usr/bin/env python3
"""Checks the FHIR part of a cohort export against FHIR R4 (4.0.1).

Usage: check_fhir.py DIR    (DIR = the export's data/fhir folder, or a folder that contains fhir/)

What is checked, for every resource in every <Type>.ndjson and in every bundles/*.json (the Bundle
itself and each entry's resource):
  1. it parses with fhir.resources 6.4.0, whose top-level package holds the FHIR R4 (4.0.1) models
     (fhir.resources 7+ moved to R5 and keeps R4B under fhir.resources.R4B; 6.4.0 is true R4);
  2. it validates with jsonschema against the official R4 JSON schema at
     <repo>/../shared/fhir/fhir.r4.schema.json (skipped with a message when that file is absent);
  3. FHIRPath invariants from the R4 specification, evaluated with fhirpathpy's R4 model:
     Bundle bdl-1..bdl-5, bdl-7..bdl-12 (there is no bdl-6 in R4), Consent ppc-1..ppc-5,
     Observation obs-6 and obs-7, and dom-2..dom-6 on every DomainResource;
  4. export rules: Bundle.type is collection (transaction for <pseudonym>.transaction.json, whose
     every entry carries request PUT Type/<id>), every entry's fullUrl is urn:uuid:<resource id>,
     every reference inside a Bundle resolves to an entry's fullUrl; in the NDJSON files every
     reference is Type/<id> and resolves to a resource of the export; manifest.json has the
     Bulk Data shape and its counts match the files (no manifest without NDJSON: the Bundles-only
     layout).
Exits 1 and lists every failure when anything is wrong.
"""
import json
import os
import sys
from collections import Counter
from pathlib import Path

from fhir.resources import __fhir_version__, get_fhir_model_class
from fhirpathpy import evaluate
from fhirpathpy.models import models

R4 = models["r4"]
SCOPE = "http://terminology.hl7.org/CodeSystem/consentscope"

INVARIANTS = {
    "Bundle": [
        ("bdl-1", "total.empty() or (type = 'searchset') or (type = 'history')"),
        ("bdl-2", "entry.search.empty() or (type = 'searchset')"),
        ("bdl-3", "entry.all(request.exists() = (%resource.type = 'batch' or %resource.type = 'transaction' or %resource.type = 'history'))"),
        ("bdl-4", "entry.all(response.exists() = (%resource.type = 'batch-response' or %resource.type = 'transaction-response' or %resource.type = 'history'))"),
        ("bdl-5", "entry.all(resource.exists() or request.exists() or response.exists())"),
        ("bdl-7", "(type = 'history') or entry.where(fullUrl.exists()).select(fullUrl&resource.meta.versionId).isDistinct()"),
        ("bdl-8", "entry.all(fullUrl.contains('/_history/').not())"),
        ("bdl-9", "type = 'document' implies (identifier.system.exists() and identifier.value.exists())"),
        # R4 says timestamp.hasValue(); fhirpathpy lacks hasValue(), and for a JSON primitive without
        # extensions exists() is the same test.
        ("bdl-10", "type = 'document' implies (timestamp.exists())"),
        ("bdl-11", "type = 'document' implies entry.first().resource.is(Composition)"),
        ("bdl-12", "type = 'message' implies entry.first().resource.is(MessageHeader)"),
    ],
    "Consent": [
        ("ppc-1", "policy.exists() or policyRule.exists()"),
        ("ppc-2", f"patient.exists() or scope.coding.where(system='{SCOPE}' and code='patient-privacy').exists().not()"),
        ("ppc-3", f"patient.exists() or scope.coding.where(system='{SCOPE}' and code='research').exists().not()"),
        ("ppc-4", f"patient.exists() or scope.coding.where(system='{SCOPE}' and code='adr').exists().not()"),
        ("ppc-5", f"patient.exists() or scope.coding.where(system='{SCOPE}' and code='treatment').exists().not()"),
    ],
    "Observation": [
        ("obs-6", "dataAbsentReason.empty() or value.empty()"),
        ("obs-7", "value.empty() or component.code.where(coding.intersect(%resource.code.coding).exists()).empty()"),
    ],
}
# dom-3 is the R4 rule restricted to plain references (the export never uses contained resources,
# so dom-2..dom-5 hold trivially unless something starts writing them).
DOMAIN = [
    ("dom-2", "contained.contained.empty()"),
    ("dom-3", "contained.where(('#' + id in %resource.descendants().reference).not()).empty()"),
    ("dom-4", "contained.meta.versionId.empty() and contained.meta.lastUpdated.empty()"),
    ("dom-5", "contained.meta.security.empty()"),
    ("dom-6", "text.`div`.exists()"),
]
NOT_DOMAIN = {"Bundle", "Binary", "Parameters"}


class Checker:
    def __init__(self, repo_root):
        self.failures = []
        self.counts = Counter()
        self.invariants = Counter()
        self.schema = None
        self.validators = {}
        schema_path = repo_root.parent / "shared" / "fhir" / "fhir.r4.schema.json"
        if schema_path.is_file():
            import jsonschema
            self.jsonschema = jsonschema
            self.schema = json.loads(schema_path.read_text(encoding="utf-8"))
        elif os.environ.get("CI"):
            # In CI the official schema is always beside the clone: its absence is a failure, not a skip.
            self.fail(str(schema_path), "the official FHIR R4 JSON schema is missing (CI expects ../shared/fhir/fhir.r4.schema.json)")
        else:
            print("SKIP schema check: ../shared/fhir/fhir.r4.schema.json not found (only present in the development workspace)")

    def fail(self, where, message):
        self.failures.append(f"{where}: {message}")

    def validate_schema(self, resource, where):
        if self.schema is None:
            return
        rtype = resource.get("resourceType")
        if rtype not in self.validators:
            if rtype not in self.schema.get("definitions", {}):
                self.fail(where, f"resourceType {rtype!r} is not in the R4 schema")
                return
            sub = {"$ref": f"#/definitions/{rtype}", "definitions": self.schema["definitions"]}
            self.validators[rtype] = self.jsonschema.Draft6Validator(sub)
        errors = sorted(self.validators[rtype].iter_errors(resource), key=lambda e: list(e.path))
        for error in errors[:5]:
            path = "/".join(str(p) for p in error.path)
            self.fail(where, f"schema: {path}: {error.message[:200]}")
        self.counts["schema-validated"] += 1

    def check_invariants(self, resource, where):
        rtype = resource.get("resourceType")
        rules = list(INVARIANTS.get(rtype, []))
        if rtype not in NOT_DOMAIN:
            rules += DOMAIN
        for key, expression in rules:
            try:
                result = evaluate(resource, expression, {"resource": resource}, R4)
            except Exception as error:  # an expression fhirpathpy cannot evaluate is a checker bug
                self.fail(where, f"{key}: cannot evaluate ({error})")
                continue
            self.invariants[key] += 1
            if result == [False]:
                self.fail(where, f"invariant {key} fails: {expression}")

    def check_resource(self, resource, where):
        rtype = resource.get("resourceType")
        if not isinstance(rtype, str):
            self.fail(where, "no resourceType")
            return
        try:
            get_fhir_model_class(rtype).parse_obj(resource)
        except Exception as error:
            self.fail(where, f"fhir.resources (R4) rejects {rtype}: {str(error)[:400]}")
        self.validate_schema(resource, where)
        self.check_invariants(resource, where)
        self.counts[rtype] += 1


def references(value):
    """Every Reference.reference string inside `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "reference" and isinstance(item, str):
                yield item
            else:
                yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    directory = Path(sys.argv[1])
    if (directory / "fhir").is_dir():
        directory = directory / "fhir"
    repo_root = Path(__file__).resolve().parents[2]
    checker = Checker(repo_root)
    print(f"fhir.resources models: FHIR {__fhir_version__}")

    # Bulk Data NDJSON
    ids = set()
    bulk_refs = []
    line_counts = {}
    ndjson_files = sorted(directory.glob("*.ndjson"))
    bundle_files = sorted((directory / "bundles").glob("*.json"))
    if not ndjson_files and not bundle_files:
        checker.fail(str(directory), "neither NDJSON files nor Bundles")
    for path in ndjson_files:
        expected_type = path.stem
        lines = 0
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                where = f"{path.name}:{number}"
                if not line.endswith("\n") or not line.strip():
                    checker.fail(where, "NDJSON lines must be non-empty and end with LF")
                    continue
                try:
                    resource = json.loads(line)
                except json.JSONDecodeError as error:
                    checker.fail(where, f"not JSON ({error})")
                    continue
                lines += 1
                if resource.get("resourceType") != expected_type:
                    checker.fail(where, f"resourceType {resource.get('resourceType')!r} in {path.name}")
                key = f"{resource.get('resourceType')}/{resource.get('id')}"
                if key in ids:
                    checker.fail(where, f"duplicate resource {key}")
                ids.add(key)
                for ref in references(resource):
                    bulk_refs.append((where, ref))
                checker.check_resource(resource, where)
        line_counts[path.name] = lines
        checker.counts["ndjson-lines"] += lines
    for where, ref in bulk_refs:
        parts = ref.split("/")
        if len(parts) != 2:
            checker.fail(where, f"reference {ref!r} is not Type/id")
        elif ref not in ids:
            checker.fail(where, f"reference {ref!r} does not resolve to an exported resource")

    # manifest.json
    manifest_path = directory / "manifest.json"
    if not ndjson_files:
        # The Bundles-only layout: no Bulk Data output, so no manifest either.
        if manifest_path.exists():
            checker.fail("manifest.json", "present without NDJSON files")
    elif not manifest_path.is_file():
        checker.fail("manifest.json", "missing")
    else:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(manifest.get("transactionTime"), str):
            checker.fail("manifest.json", "transactionTime must be a string")
        if not isinstance(manifest.get("request"), str):
            checker.fail("manifest.json", "request must be a string")
        if manifest.get("requiresAccessToken") is not False:
            checker.fail("manifest.json", "requiresAccessToken must be false")
        if manifest.get("error") != []:
            checker.fail("manifest.json", "error must be an empty list")
        listed = set()
        for output in manifest.get("output", []):
            url = output.get("url")
            listed.add(url)
            if url not in line_counts:
                checker.fail("manifest.json", f"output {url!r} does not name an NDJSON file")
            elif line_counts[url] != output.get("count"):
                checker.fail("manifest.json", f"output {url!r}: count {output.get('count')} but {line_counts[url]} lines")
            if output.get("type") + ".ndjson" != url:
                checker.fail("manifest.json", f"output {url!r} has type {output.get('type')!r}")
        for name in line_counts:
            if name not in listed:
                checker.fail("manifest.json", f"{name} is not listed in output")

    # Per-participant collection Bundles (<pseudonym>.json) and transaction Bundles
    # (<pseudonym>.transaction.json, every entry a PUT of Type/<id>)
    for path in bundle_files:
        where = f"bundles/{path.name}"
        try:
            bundle = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            checker.fail(where, f"not JSON ({error})")
            continue
        is_transaction = path.name.endswith(".transaction.json")
        checker.counts["transaction-bundles" if is_transaction else "bundles"] += 1
        expected_type = "transaction" if is_transaction else "collection"
        if bundle.get("type") != expected_type:
            checker.fail(where, f"Bundle.type must be {expected_type}")
        for index, entry in enumerate(bundle.get("entry", [])):
            resource = entry.get("resource", {})
            request = entry.get("request")
            expected = {"method": "PUT", "url": f"{resource.get('resourceType')}/{resource.get('id')}"}
            if is_transaction and request != expected:
                checker.fail(f"{where} entry[{index}]", f"request {request!r} is not {expected!r}")
            if not is_transaction and request is not None:
                checker.fail(f"{where} entry[{index}]", "a collection Bundle entry has a request")
        checker.check_resource(bundle, where)
        full_urls = set()
        for index, entry in enumerate(bundle.get("entry", [])):
            entry_where = f"{where} entry[{index}]"
            resource = entry.get("resource", {})
            full_url = entry.get("fullUrl")
            if full_url != f"urn:uuid:{resource.get('id')}":
                checker.fail(entry_where, f"fullUrl {full_url!r} is not urn:uuid:<resource id>")
            full_urls.add(full_url)
            checker.check_resource(resource, entry_where)
            checker.counts["bundle-entries"] += 1
        for ref in references(bundle):
            if ref not in full_urls:
                checker.fail(where, f"reference {ref!r} does not resolve inside the Bundle")
            checker.counts["bundle-references"] += 1

    print("checked: " + ", ".join(f"{key} {value}" for key, value in sorted(checker.counts.items())))
    print("invariants evaluated: " + ", ".join(f"{key} {value}" for key, value in sorted(checker.invariants.items())))
    if checker.failures:
        print(f"FAIL: {len(checker.failures)} problem(s)")
        for failure in checker.failures:
            print("  " + failure)
        return 1
    print("OK: FHIR R4 checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
