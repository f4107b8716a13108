#!/usr/bin/env bash
# Where an export's CPU goes, by thread (issue 28): profiles one `cohort-bench phase` run with perf
# (DWARF call graphs) and prints its samples by what the thread was doing — record workers, the
# deflate threads, the table writer, the residual scan, the k-anonymity pass, the write stage's
# replay on the main thread, the start — then a timeline per 250 ms, how busy the cores were while
# the write stage ran, and the hottest functions.
# This is how docs/performance.md's twelfth- and thirteenth-round profiles were made.
#
# Usage: scripts/export-profile.sh BENCH WORKSPACE [PHASE] [HZ]
#   BENCH      a cohort-bench binary (a release build: .build/release/cohort-bench)
#   WORKSPACE  a bench workspace that was imported (`cohort-bench phase import --dir …`, or a
#              `--dir` a bench run left); the phase's output folder in it is removed first
#   PHASE      export-tables (default) or export
#   HZ         samples per second (default 299)
# Needs perf (linux-perf) and python3; on a virtual machine without a PMU perf samples the CPU clock.
set -euo pipefail
bench=${1:?usage: export-profile.sh BENCH WORKSPACE [PHASE] [HZ]}
workspace=${2:?usage: export-profile.sh BENCH WORKSPACE [PHASE] [HZ]}
phase=${3:-export-tables}
hz=${4:-299}
command -v perf >/dev/null || { echo "error: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
case "$phase" in
  export-tables) rm -rf "$workspace/exports-tables" ;;
  export) rm -rf "$workspace/exports" ;;
  *) echo "error: PHASE must be export-tables or export" >&2; exit 2 ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
perf record -q -F "$hz" --call-graph dwarf,16384 -o "$scratch/perf.data" \
  "$bench" phase "$phase" --dir "$workspace" --compression default --quiet >"$scratch/phase.json"
echo "phase: $(cat "$scratch/phase.json")"
perf script -i "$scratch/perf.data" -F tid,time,ip,sym 2>/dev/null | python3 -c '
import collections, re, sys
hz = float(sys.argv[1])
cores = int(sys.argv[2])
samples, current = [], None
for line in sys.stdin:
    head = re.match(r"\s*(\d+)\s+([\d.]+):", line)
    if head:
        current = (float(head.group(2)), [])
        samples.append(current)
    elif line.strip() and current is not None:
        parts = line.strip().split(None, 1)
        current[1].append(parts[1] if len(parts) > 1 else parts[0])
if not samples:
    sys.exit("error: perf recorded no samples")
# The first matching rule names a sample by any frame of its stack (Swift mangled names).
roles = [
    ("k-anonymity pass", ("recordProfiles",)),
    ("residual scan", ("FileScanner", "ScanThread")),
    ("deflate", ("ParallelDeflate", "DeflateSpool")),
    ("table writer", ("TableSink", "Writer5flush", "SerialWorker")),
    ("main thread: replay, compliance", ("writeParticipants",)),
    ("record workers", ("RecordWorkers", "WorkerLLV", "Worker33_")),
]
def role(stack):
    text = " ".join(stack)
    for name, keys in roles:
        if any(key in text for key in keys):
            return name
    return "start and the rest"
start = samples[0][0]
by_role, timeline, hot = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
for time, stack in samples:
    name = role(stack)
    by_role[name] += 1
    timeline[int((time - start) / 0.25)][name] += 1
    if stack:
        hot[re.sub(r"33_[0-9A-F]{32}", "", stack[0])[:110]] += 1
total = len(samples)
print(f"{total} samples at {hz:.0f} Hz, about {total / hz:.1f} s of CPU")
print("{:34} {:>8} {:>6}".format("thread", "samples", "share"))
for name, count in by_role.most_common():
    print(f"{name:34} {count:8d} {100 * count / total:5.1f}%")
print("\ntimeline (per 250 ms: samples by thread, the three largest)")
for bucket in sorted(timeline):
    top = ", ".join(f"{name} {count}" for name, count in timeline[bucket].most_common(3))
    print(f"{bucket * 0.25:6.2f} s  {sum(timeline[bucket].values()):4d}  {top}")
# How busy the cores were while the write stage ran (the buckets in which a record worker was
# sampled, the first and last left out as partial): idle here is time a faster stage waited for a
# slower one (what the thirteenth round found), not CPU to cut.
writing = sorted(b for b in timeline if timeline[b]["record workers"] > 0)[1:-1]
if writing:
    busy = sum(sum(timeline[b].values()) for b in writing) / (len(writing) * hz * 0.25 * cores)
    print(f"\nwrite stage: {100 * busy:.1f} % of {cores} cores busy ({len(writing) * 0.25:.2f} s of buckets)")
print("\nhottest functions (self samples)")
for name, count in hot.most_common(15):
    print(f"{count:6d}  {name}")
' "$hz" "$(nproc)"
