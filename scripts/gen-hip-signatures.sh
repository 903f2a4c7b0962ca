#!/usr/bin/env bash
# Regenerates the HIP signature table, lib/api/hip/src/table.rs, from Debian's
# ROCm 5.2 headers (bindgen, abi/build.rs), the exports of libamdhip64.so.5 and
# abi/src/reference.rs (entry points no header declares). See the docs of
# lib/api/hip/src/lib.rs ("How an entry point is declared").
#
#   bash scripts/gen-hip-signatures.sh           write the table
#   bash scripts/gen-hip-signatures.sh --check   exit 1 (with a diff) when the
#                                                checked-in table is not what
#                                                the inputs generate
#
# Needs the Debian packages of scripts/apt-packages.txt (headers, libamdhip64-5,
# libclang-15-dev for bindgen, binutils for readelf). HRR_LIBAMDHIP64 names
# another libamdhip64 to read the exports of.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
table="$root/lib/api/hip/src/table.rs"
lib="${HRR_LIBAMDHIP64:-/usr/lib/x86_64-linux-gnu/libamdhip64.so.5}"
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-15/lib}"
export HIP_PATH="${HIP_PATH:-/usr}"

tmp=$(mktemp --suffix=.rs)
trap 'rm -f "$tmp"' EXIT
(cd abi && CARGO_TARGET_DIR="$root/target/abi" cargo run --quiet --locked --features gen --bin gen-hip-table -- "$lib") >"$tmp"
rustfmt --edition 2024 "$tmp"

if [ "${1:-}" = "--check" ]; then
    if diff -u "$table" "$tmp" >"$tmp.diff"; then
        echo "gen-hip-signatures: $table is up to date ($(grep -c '^    ([A-Za-z0-9_]*, $cb:path' "$table") entry points)"
        rm -f "$tmp.diff"
    else
        head -40 "$tmp.diff"
        rm -f "$tmp.diff"
        echo "gen-hip-signatures: $table differs from what the inputs generate; run bash scripts/gen-hip-signatures.sh" >&2
        exit 1
    fi
else
    cp "$tmp" "$table"
    echo "gen-hip-signatures: wrote $table ($(grep -c '^    ([A-Za-z0-9_]*, $cb:path' "$table") entry points)"
fi
