#!/usr/bin/env bash
# Instructions per driver launch (docs/PERFORMANCE.md), counted by callgrind:
# repeatable whatever else the machine does, unlike times. The driver
# layer's launch loop (`driver_loop.c`, the test suite's stand-in
# libcuda) plain, recorded in full, and before a capture window that never
# opens (`HRR_WINDOW=profiler`: bookkeeping only). Each is the process's
# count at 40 000 launches less its count at 20 000, over 20 000: the
# launch alone, writer thread included, start-up and exit cancelled out.
# Usage: lib/capture/intercept/benches/launch_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."
command -v valgrind >/dev/null || { echo "launch_instructions.sh: needs valgrind" >&2; exit 2; }
cargo build -q --release -p hrr-intercept
R=$PWD/target/release
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
C=lib/capture/intercept/tests/c
gcc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic $C/fake_cuda/libcuda.c -o "$W/libcuda.so.1"
gcc -O2 -I$C $C/driver_loop.c -o "$W/driver_loop" -L"$W" -Wl,-rpath,"$W" -l:libcuda.so.1
# count N [VAR=VALUE…]: the process's instructions at N launches.
count() {
    local n=$1
    shift
    rm -rf "$W/out" "$W"/cg.*
    env "$@" valgrind --tool=callgrind --callgrind-out-file="$W/cg.%p" \
        "$W/driver_loop" "$n" >/dev/null 2>"$W/valgrind.log"
    awk '/^(summary|totals):/ {s += $2} END {print s}' "$W"/cg.*
}
per_launch() {
    local a b
    a=$(count 20000 "$@")
    b=$(count 40000 "$@")
    echo $(((b - a) / 20000))
}
rec=(HRR_OUT="$W/out" HRR_EVENTS=plain LD_PRELOAD="$R/libhrr_intercept.so")
echo "plain:                   $(per_launch HRR_UNUSED=1) instructions per launch"
echo "recorded:                $(per_launch "${rec[@]}") instructions per launch"
echo "before a capture window: $(per_launch "${rec[@]}" HRR_WINDOW=profiler) instructions per launch"
