#!/usr/bin/env python3
"""Recall per identifier kind of scrubadub 2.0.1 and of cohort on cohort's adversarial corpus.

Usage: compare_scrubadub.py CORPUS.jsonl
  CORPUS.jsonl: one note a line, as `cohort-bench scrub --write-corpus FILE` writes it:
  {"participant", "shift_days", "text", "plants": [{"kind", "text", "shifted"?}], "clean", "cohort_output"}

Each note is scrubbed by scrubadub (default detectors, en_US; it does not know the roster and
shifts no dates) and compared, like cohort's output, with the ground truth by an implementation
of its own here: a plant is removed when none of its words (3+ characters, or 2+ digits; case
and accents folded) is left beyond the note's other occurrences; a date when its text is gone.
On clean notes, the share of words altered. Exit status 0 when both were measured.
"""
import collections
import json
import re
import sys
import time
import unicodedata

GENERIC = {
    "dot", "com", "org", "net", "www", "http", "https", "example", "gmail", "outlook", "yahoo", "mail", "web", "orange",
    "street", "avenue", "road", "lane", "drive", "court", "close", "way", "ave", "apple", "watch", "diary", "flare", "log",
    "ext",
}
WORD = re.compile(r"[^\W_]+")


def fold(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text):
    return collections.Counter(WORD.findall(fold(text)))


def checked(word):
    if word in GENERIC:
        return False
    if word.isdigit():
        return len(word) >= 2
    return len(word) >= 3


def occurrences(needle, text):
    return len(re.findall(r"(?<![^\W_])" + re.escape(needle) + r"(?!\d)", text))


def measure(notes, outputs):
    planted = collections.Counter()
    removed = collections.Counter()
    clean_words = clean_altered = 0
    for note, output in zip(notes, outputs):
        source = words(note["text"])
        remaining = output.replace("90 or older", " ")
        for plant in note["plants"]:
            if plant.get("shifted"):
                remaining = remaining.replace(plant["shifted"], " ")
        left = words(remaining)
        if not note["plants"]:
            for word, count in source.items():
                clean_words += count
                clean_altered += max(0, count - left.get(word, 0))
            continue
        in_plants = collections.Counter()
        for plant in note["plants"]:
            if plant["kind"] != "date":
                for word, count in words(plant["text"]).items():
                    if checked(word):
                        in_plants[word] += count
        for plant in note["plants"]:
            kind = plant["kind"]
            planted[kind] += 1
            if kind == "date":
                gone = occurrences(plant["text"], output) < occurrences(plant["text"], note["text"])
            else:
                gone = all(
                    left.get(word, 0) <= source.get(word, 0) - in_plants[word]
                    for word in words(plant["text"]) if checked(word)
                )
            if gone:
                removed[kind] += 1
    return planted, removed, clean_altered / clean_words if clean_words else 0.0


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        import scrubadub
    except ImportError as error:
        print(f"scrubadub is not installed ({error}): run scripts/setup-venv.sh", file=sys.stderr)
        return 1
    with open(sys.argv[1], encoding="utf-8") as handle:
        notes = [json.loads(line) for line in handle if line.strip()]
    scrubber = scrubadub.Scrubber(locale="en_US")
    started = time.monotonic()
    theirs = [scrubber.clean(note["text"]) for note in notes]
    seconds = time.monotonic() - started
    ours = [note["cohort_output"] for note in notes]
    kinds = []
    for note in notes:
        for plant in note["plants"]:
            if plant["kind"] not in kinds:
                kinds.append(plant["kind"])
    planted, removed_theirs, altered_theirs = measure(notes, theirs)
    _, removed_ours, altered_ours = measure(notes, ours)
    print()
    print(f"scrubadub {scrubadub.__version__} (default detectors, en_US) against cohort on the same {len(notes)} notes")
    print("scrubadub does not know the roster and shifts no dates; cohort scrubs with the roster and the date shift.")
    print("Recall computed by Tests/interop/compare_scrubadub.py (its own folding and word counts).")
    print(f"{'kind':<20} {'planted':>7}  {'scrubadub':>9}  {'cohort':>8}")
    for kind in kinds:
        n = planted[kind]
        print(f"{kind:<20} {n:7d}  {100 * removed_theirs[kind] / n:8.2f}%  {100 * removed_ours[kind] / n:7.2f}%")
    total = sum(planted.values())
    print(f"{'all':<20} {total:7d}  {100 * sum(removed_theirs.values()) / total:8.2f}%  {100 * sum(removed_ours.values()) / total:7.2f}%")
    print(f"{'clean words altered':<20} {'':7}  {100 * altered_theirs:8.2f}%  {100 * altered_ours:7.2f}%")
    print(f"scrubadub took {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
