#!/usr/bin/env python3
"""Re-packs a cohort export as an attacker holding the study's signing key would.

    forge_package.py ARCHIVE MANIFEST SIGNING_PEM OUT_DIR [--add-participant PSEUDONYM]
                     [--add-ndjson-record TABLE PSEUDONYM]

Extracts ARCHIVE, optionally appends a participant row (the given pseudonym, every other cell
copied from the first row) to data/csv/participants.csv, or a record to data/json/TABLE.ndjson
alone (the table's first line with the given pseudonym; the CSV rendering untouched), fixes the
BagIt manifests and
Payload-Oxum, re-archives the bag (pax tar + gzip), rewrites the export manifest's file digests,
sizes, row counts and archive digest, and re-signs it with `openssl pkeyutl -sign -rawin`. The
forged archive, manifest and signature are written to OUT_DIR under the original names. Without
--add-participant it only re-packs (the control: everything but the edit is done the same way).
Standard library and the openssl command only: it shares no code with cohort.
"""
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    archive, manifest_path, key, out = argv[1:5]
    added = argv[6] if len(argv) > 6 and argv[5] == "--add-participant" else None
    ndjson = (argv[6], argv[7]) if len(argv) > 7 and argv[5] == "--add-ndjson-record" else None
    with tarfile.open(archive, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    bag = sorted({name.split("/")[0] for name in members})[0]
    path = lambda relative: bag + "/" + relative

    participants = path("data/csv/participants.csv")
    if added:
        text = members[participants].decode()
        rows = text.split("\r\n")
        first = rows[1].split(",")
        rows.insert(len(rows) - 1, ",".join([added] + first[1:]))
        members[participants] = "\r\n".join(rows).encode()
    if ndjson:
        table = path(f"data/json/{ndjson[0]}.ndjson")
        first = json.loads(members[table].split(b"\n")[0])
        first["pseudonym"] = ndjson[1]
        members[table] += (json.dumps(first, separators=(",", ":"), ensure_ascii=False) + "\n").encode()

    # BagIt: payload manifest, Payload-Oxum, tag manifest.
    payload = {n: d for n, d in members.items() if n.startswith(path("data/"))}
    members[path("manifest-sha256.txt")] = "".join(
        f"{sha256(payload[n])}  {n[len(bag) + 1:]}\n" for n in sorted(payload)).encode()
    info = members[path("bag-info.txt")].decode().splitlines()
    oxum = f"Payload-Oxum: {sum(len(d) for d in payload.values())}.{len(payload)}"
    members[path("bag-info.txt")] = ("\n".join(oxum if l.startswith("Payload-Oxum:") else l for l in info) + "\n").encode()
    tags = [n for n in members if "/" not in n[len(bag) + 1:] and not n.endswith("tagmanifest-sha256.txt")]
    members[path("tagmanifest-sha256.txt")] = "".join(
        f"{sha256(members[n])}  {n[len(bag) + 1:]}\n" for n in sorted(tags)).encode()

    os.makedirs(out, exist_ok=True)
    forged = os.path.join(out, os.path.basename(archive))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        folders = sorted({"/".join(n.split("/")[:i]) for n in members for i in range(1, n.count("/") + 1)})
        for folder in folders:
            entry = tarfile.TarInfo(folder)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(entry)
        for name in sorted(members):
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode = len(members[name]), 0o644
            tar.addfile(entry, io.BytesIO(members[name]))
    with open(forged, "wb") as f:
        f.write(gzip.compress(buffer.getvalue(), mtime=0))

    manifest = json.load(open(manifest_path))
    for file in manifest["files"]:
        data = members[path(file["path"])]
        file["sha256"], file["size"] = sha256(data), len(data)
        if file["path"] == "data/csv/participants.csv" and added:
            file["rows"] = file["rows"] + 1
        if ndjson and file["path"] == f"data/json/{ndjson[0]}.ndjson":
            file["rows"] = file["rows"] + 1
    blob = open(forged, "rb").read()
    manifest["archive"]["sha256"], manifest["archive"]["size"] = sha256(blob), len(blob)
    forged_manifest = os.path.join(out, os.path.basename(manifest_path))
    with open(forged_manifest, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    subprocess.run(
        ["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", forged_manifest, "-out", forged_manifest + ".sig"],
        check=True)
    print(forged)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
