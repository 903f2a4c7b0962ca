#!/usr/bin/env python3
"""Writes the seeds of the `archive_dir` fuzz target (hrr_core::fuzzing::
archive_dir): packed archives of the `archive` target, each with a
`@@layout` section that turns some of its files into FIFOs, links,
directories or sparse files. Used by scripts/fuzz-corpus.sh.

    fuzz-layouts.py PACK_DIR OUT_DIR

A layout byte B changes entry B % 10 into kind B // 10 % 7:
  entries: 0 manifest.json, 1 events.ndjson, 2 blobs/, 3 the first blob's
           blobs/<h2>/, 4 the first blob, 5 the last blob, 6 regions/,
           7 the first region file, 8 .hrr-owner, 9 the archive path
  kinds:   0 FIFO, 1 symlink to a copy outside, 2 dangling symlink,
           3 directory, 4 sparse past its reader's limit, 5 empty,
           6 symlink to /dev/zero (.hrr-owner: a live pid)
"""
import os
import sys

# (pack, layout bytes, what it is)
SEEDS = [
    ("hidden_segment", b"", "plain"),
    ("hidden_segment", bytes([1 + 10 * 0]), "events-fifo"),
    ("hidden_segment", bytes([6 + 10 * 2]), "regions-dangling"),
    ("seed_variants-d2d", bytes([4 + 10 * 1, 7 + 10 * 3]), "blob-link-region-dir"),
    ("seed_variants-d2d", bytes([3 + 10 * 3, 1 + 10 * 5, 8 + 10 * 0]), "fan-empty-owner-fifo"),
    ("seed_variants-hostdst", bytes([1 + 10 * 4, 8 + 10 * 6]), "events-sparse-owner-live"),
    ("seed_variants-kernel", bytes([9, 5 + 10 * 0, 7 + 10 * 4]), "path-link-blob-fifo-region-sparse"),
    ("seed_variants-kernel", bytes([2 + 10 * 1]), "blobs-link"),
    ("seed_variants-kernel", bytes([4 + 10 * 4, 0 + 10 * 6]), "blob-sparse-manifest-devzero"),
]


def main():
    packs, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    for pack, layout, what in SEEDS:
        path = os.path.join(packs, pack + ".pack")
        if not os.path.isfile(path):
            print(f"skip {pack} (no pack)")
            continue
        with open(path, "rb") as f:
            data = f.read()
        if layout:
            assert b"\n@@" not in layout
            data += b"\n@@layout\n" + layout
        with open(os.path.join(out, f"{pack}-{what}.pack"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
