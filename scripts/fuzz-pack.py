#!/usr/bin/env python3
"""Packs an hrr archive into one fuzz input for the `archive` target
(hrr_replay::fuzzing::archive), and extracts code objects and .hrrr streams
for the other targets. Used by scripts/fuzz-corpus.sh.

    fuzz-pack.py ARCHIVE OUT.pack MAX_LINES CODEOBJ_DIR HRRR_DIR

Pack format: sections, each a line "@@NAME" followed by its content, up to
the next "\\n@@" (see hrr_replay::fuzzing). NAME is manifest.json,
events.ndjson, regions/FILE, or blob (stored under its BLAKE3 name when
unpacked). MAX_LINES > 0 keeps only the first lines of the events file (and
only the blobs those lines name), for small checked-in seeds.
"""
import json
import os
import struct
import sys


def main():
    archive, out, max_lines, codeobj_dir, hrrr_dir = sys.argv[1:6]
    max_lines = int(max_lines)
    tag = os.path.basename(out).rsplit(".", 1)[0]
    with open(os.path.join(archive, "events.ndjson"), "rb") as f:
        lines = f.read().splitlines(keepends=True)
    if max_lines > 0:
        lines = lines[:max_lines]
    blobs, codes = set(), set()
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if "blob" in e:
            blobs.add(e["blob"])
        if "code" in e:
            codes.add(e["code"])
    limit = 20 << 10 if max_lines > 0 else 1 << 20
    sections = []
    with open(os.path.join(archive, "manifest.json"), "rb") as f:
        sections.append((b"manifest.json", f.read()))
    sections.append((b"events.ndjson", b"".join(lines)))
    regions = os.path.join(archive, "regions")
    for name in sorted(os.listdir(regions)) if os.path.isdir(regions) else []:
        with open(os.path.join(regions, name), "rb") as f:
            data = f.read()
        sections.append((b"regions/" + name.encode(), data))
        if name.endswith(".ndjson"):
            write_hrrr(data, os.path.join(hrrr_dir, f"{tag}-{name[:-7]}.hrrr"))
    for h in sorted(blobs | codes):
        path = os.path.join(archive, "blobs", h[:2], h)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if h in codes:
            with open(os.path.join(codeobj_dir, f"{tag}-{h[:12]}.co"), "wb") as c:
                c.write(data)
        # Framing must survive: a blob holding the separator is left out.
        if len(data) <= limit and b"\n@@" not in data:
            sections.append((b"blob", data))
    with open(out, "wb") as f:
        for i, (name, data) in enumerate(sections):
            f.write((b"\n" if i else b"") + b"@@" + name + b"\n" + data)


def write_hrrr(ndjson, path):
    """The sidecar's records as a ROCm .hrrr stream (docs/FORMAT.md)."""
    recs = []
    for line in ndjson.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        recs.append(struct.pack(
            "<BBBBIQQq",
            0 if r.get("op") == "add" else 1,
            1 if r.get("kind") == "segment" else 0,
            r.get("device", 0), 0, r.get("tag", 0),
            int(r["base"], 16), r.get("size", 0), r.get("t", 0)))
    if not recs:
        return
    payload = struct.pack("<II", len(recs), 0) + b"".join(recs)
    header = struct.pack("<HQQQI2s", 0xFFFD, 0, 0, 0, 40 + 32 * len(recs), b"\0\0")
    with open(path, "wb") as f:
        f.write(struct.pack("<IHH", 0x52525248, 1, 0) + header + payload)


if __name__ == "__main__":
    main()
