#!/usr/bin/env bash
# The README's main command: the seed's scenario end to end on the CPU
# runtime, no GPU needed.
#
# A HIP application allocates 256 KiB straight from an HSA pool (memory the
# recorder cannot see), reports its base on stdout, and copies through it.
# The demo builds the tools, compiles that application against Debian's HIP
# headers and hrr's CPU runtime, and runs the pipeline of DESIGN.md §1:
#
#   hrr-cap -o cap.hrr -- ./hidden_segment | tee app.log
#   grep HRR_SEGMENT app.log | hrr-sidecar --archive cap.hrr
#   hrr-play cap.hrr -o replay.hrr
#   hrr-diff cap.hrr replay.hrr
#
# It ends with PASS (exit 0) or FAIL (exit 1).
#   HRR_PROFILE=release   build and use release binaries (default: debug)
#   HRR_DEMO_KEEP=1       keep the work directory (printed at the end)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILE=${HRR_PROFILE:-debug}

fail() {
    echo "demo: $*" >&2
    echo "FAIL"
    exit 1
}

# Prerequisites: the Debian packages of scripts/apt-packages.txt are
# installed when missing (root or sudo), as the test command does; what is
# still missing after that is named with the command that installs it.
bash "$ROOT/scripts/deps.sh" || fail "installing the Debian packages failed (scripts/deps.sh)"
missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
[ -f /usr/include/hip/hip_runtime_api.h ] || missing+=(libamdhip64-dev)
[ -f /usr/include/hsa/hsa_ext_amd.h ] || missing+=(libhsa-runtime-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "demo: missing prerequisites: ${missing[*]}" >&2
    echo "demo: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 2
fi
command -v cargo >/dev/null 2>&1 || { echo "demo: cargo not found: install Rust (https://rustup.rs or apt-get install cargo)" >&2; exit 2; }

# 1. Build the tools, the capture library and the CPU runtime.
case "$PROFILE" in
    debug) profile_flag=() ;;
    release) profile_flag=(--release) ;;
    *) profile_flag=(--profile "$PROFILE") ;;
esac
echo "== build ($PROFILE)"
(cd "$ROOT" && cargo build "${profile_flag[@]}" -p hrr-cap -p hrr-play -p hrr-sidecar -p hrr-diff \
    -p hrr-intercept -p hrr-runtime-cpu) || fail "cargo build failed"
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE
for f in hrr-cap hrr-play hrr-sidecar hrr-diff libhrr_intercept.so libhrr_hip_cpu.so; do
    [ -e "$BIN/$f" ] || fail "$BIN/$f was not built"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hrr-demo.XXXXXX")
if [ -z "${HRR_DEMO_KEEP:-}" ]; then trap 'rm -rf "$WORK"' EXIT; fi

# 2. The seed's workload, real HIP C on the CPU runtime.
echo "== compile the seed workload (tests/workloads/hidden_segment.c)"
W=$ROOT/tests/workloads
gcc -D__HIP_PLATFORM_AMD__ -O1 -I "$W" -I "$W/include" "$W/hidden_segment.c" -o "$WORK/hidden_segment" \
    -L "$BIN" -lhrr_hip_cpu -Wl,-rpath,"$BIN" || fail "compiling the workload failed"

cd "$WORK"
export PATH="$BIN:$PATH"

step() {
    echo
    echo "\$ $1"
    bash -o pipefail -c "$1" || fail "step failed (exit $?): $1"
}

# 3. The pipeline.
step 'hrr-cap -o cap.hrr -- ./hidden_segment | tee app.log'
step 'grep HRR_SEGMENT app.log | hrr-sidecar --archive cap.hrr'
step 'hrr-play cap.hrr -o replay.hrr | tee play.log'
step 'hrr-diff cap.hrr replay.hrr'

grep -q '^region segs : 1 materialised' play.log || fail "the hidden segment was not materialised once"
grep -q '^PASS$' play.log || fail "hrr-play did not pass"
echo
[ -n "${HRR_DEMO_KEEP:-}" ] && echo "demo: work directory kept: $WORK"
echo "PASS"
