#!/usr/bin/env bash
# Checks scripts/third-party-pass.sh's own logic where there is no GPU: a fake
# nvcc builds each listed sample as a shell script that prints what a sample
# prints (a timing line that changes on every run, a verdict), and fake hrr
# binaries stand in for the pipeline. Some samples are made to misbehave, and
# each must get its own verdict line:
#
#   vectorAdd            PASS (its timing line masked, its data file found)
#   simpleTexture        SKIP: fails without the recorder (exit 2, waived)
#   cudaTensorCoreGemm   SKIP: nvcc failed
#   asyncAPI             FAIL: capture changed the app's output
#   simpleZeroCopy       FAIL: capture changed the exit status
#   simpleCudaGraphs     FAIL: hrr-play exit 1; a second capture agrees
#   simpleCallback       FAIL: hrr-diff exit 1, unrecorded calls named
#   simpleAtomicIntrinsics PASS, nondeterministic: hrr-play exit 1; a second
#                        capture differs; five replays differ among
#                        themselves where they differ from the capture
#
# Needs no GPU, no CUDA and no .third-party/ (a stand-in tree is made).
# Prints PASS and exits 0, or names each line that is not as expected and
# exits 1.
set -euo pipefail

cd "$(dirname "$0")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrr-tp-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/path" "$tmp/bin"

# A stand-in for .third-party/cuda-samples: the listed directories, empty but
# for vectorAdd's data file, which its run needs next to it.
samples=$tmp/samples
mkdir -p "$samples/Common"
touch "$samples/Common/helper_cuda.h"
echo "fake samples" >"$samples/REVISION"
grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' scripts/cuda-samples.list |
    awk -F'|' '{ gsub(/^[ \t]+|[ \t]+$/, "", $2); print $2 }' |
    while read -r d; do mkdir -p "$samples/Samples/$d"; done
mkdir -p "$samples/Samples/0_Introduction/vectorAdd/data"
echo 1 >"$samples/Samples/0_Introduction/vectorAdd/data/input.dat"

# nvcc: -o OUT; a fatbin is a file, an executable a script acting as the
# sample named by OUT's file name.
cat >"$tmp/path/nvcc" <<'EOF'
#!/usr/bin/env bash
out="" fatbin=0
while [ $# -gt 0 ]; do
    case "$1" in
        -o) out=$2; shift ;;
        -fatbin) fatbin=1 ;;
        --version) echo "fake nvcc"; exit 0 ;;
    esac
    shift
done
name=$(basename "$out")
[ "$name" != cudaTensorCoreGemm ] || { echo "cudaTensorCoreGemm.cu(1): error: fake"; exit 1; }
if [ "$fatbin" = 1 ]; then echo fatbin >"$out"; exit 0; fi
cat >"$out" <<EOS
#!/usr/bin/env bash
name=$name
EOS
cat >>"$out" <<'EOS'
echo "[$name] starting in $(basename "$PWD")"
echo "Processing time: $RANDOM.$RANDOM (ms)"
case "$name" in
    vectorAdd) [ -f input.dat ] || { echo "input.dat not found"; exit 1; } ;;
    simpleTexture) echo "waived"; exit 2 ;;
    asyncAPI) [ -z "${FAKE_CAPTURED:-}" ] || echo "an extra line under capture" ;;
    simpleZeroCopy) [ -z "${FAKE_CAPTURED:-}" ] || exit 3 ;;
esac
echo "Test PASSED"
EOS
chmod +x "$out"
EOF
# hrr-cap -o ARC --platform cuda -- APP...: runs APP, writes a complete
# archive with one launch.
cat >"$tmp/bin/hrr-cap" <<'EOF'
#!/usr/bin/env bash
arc=""
while [ "$1" != -- ]; do [ "$1" != -o ] || arc=$2; shift; done
shift
mkdir -p "$arc"
echo '{"complete": true}' >"$arc/manifest.json"
echo '{"seq":0,"api":"cuLaunchKernel","op":"launch"}' >"$arc/events.ndjson"
FAKE_CAPTURED=1 "$@"
rc=$?
echo "hrr-cap: 1 events, 0 blobs, 0 bytes -> $arc" >&2
case "$(basename "$1")" in
    simpleCallback) echo "unrecorded : 8 calls (cuLaunchHostFunc ×8)" >&2 ;;
    *) echo "unrecorded : 0 calls" >&2 ;;
esac
exit $rc
EOF
cat >"$tmp/bin/hrr-play" <<'EOF'
#!/usr/bin/env bash
case "$1 $*" in
    */simpleCudaGraphs.hrr*) echo "hrr-play: fatal: event 7 (cuGraphLaunch): fake"; exit 1 ;;
    *"--runs 5"*) printf 'placement : 3 of 3 allocations at recorded addresses\nd2h : 2 pass (2 exact, 0 within tolerance), 0 fail, 1 nondeterministic\nPASS\n'; exit 0 ;;
    */simpleAtomicIntrinsics.hrr*) printf 'd2h : 2 pass (2 exact, 0 within tolerance), 1 fail\nFAIL\n'; exit 1 ;;
esac
printf 'unrecorded : 0 calls\nevents : 1 read, 1 replayed, 1 launches\nd2h : 1 pass (1 exact, 0 within tolerance), 0 fail\nPASS\n'
EOF
cat >"$tmp/bin/hrr-diff" <<'EOF'
#!/usr/bin/env bash
case "$1" in
    */simpleCallback.hrr) echo "d2h seq 4: 12 bytes differ"; exit 1 ;;
    */simpleAtomicIntrinsics.hrr) echo "d2h seq 2: 4 bytes differ"; exit 1 ;;
esac
echo "PASS"
EOF
touch "$tmp/bin/hrr-sidecar" "$tmp/bin/libhrr_intercept.so"
chmod +x "$tmp/path/nvcc" "$tmp/bin/"*

out=$tmp/out
set +e
PATH=$tmp/path:$PATH HRR_GPU_BIN=$tmp/bin HRR_GPU_WORK=$tmp/work OUT=$out HRR_CUDA_SAMPLES=$samples \
    scripts/third-party-pass.sh vectorAdd simpleTexture cudaTensorCoreGemm asyncAPI simpleZeroCopy \
    simpleCudaGraphs simpleCallback simpleAtomicIntrinsics >"$tmp/report" 2>&1
rc=$?
set -e

bad=0
expect() {
    if ! grep -Eq -- "$1" "$tmp/report"; then
        echo "third-party-selftest: no line matches: $1" >&2
        bad=1
    fi
}
expect '^PASS vectorAdd \[exit 0, "Test PASSED"; unrecorded : 0 calls\]$'
expect '^SKIP simpleTexture: the program fails without the recorder \(exit 2, the samples. EXIT_WAIVED\): waived$'
expect '^SKIP cudaTensorCoreGemm: nvcc failed \(exit 1\): .*error: fake$'
expect '^FAIL asyncAPI: capture changed the app.s output \(1 lines differ, .*> an extra line under capture'
expect '^FAIL simpleZeroCopy: capture changed the exit status: 0 without the recorder, 3 with it: Processing time: '
expect '^FAIL simpleCudaGraphs: hrr-play exit 1: hrr-play: fatal: event 7 \(cuGraphLaunch\): fake \[exit 0, "Test PASSED"; unrecorded : 0 calls; a second capture agrees with the first'
expect '^FAIL simpleCallback: hrr-diff exit 1: d2h seq 4: 12 bytes differ \[exit 0, "Test PASSED"; unrecorded : 8 calls \(cuLaunchHostFunc ×8\)\]$'
expect '^PASS simpleAtomicIntrinsics \[exit 0, "Test PASSED"; unrecorded : 0 calls; nondeterministic: a second capture differs from the first; hrr-play --runs 5: exit 0, d2h : 2 pass .*, 0 fail, 1 nondeterministic; placement : 3 of 3'
expect '^2 passed, 4 failed, 2 skipped$'
[ "$rc" = 1 ] || { echo "third-party-selftest: exit $rc, want 1" >&2; bad=1; }
if [ ! -f "$out/third-party-pass.txt" ] || [ ! -f "$out/logs.tar.gz" ]; then
    echo "third-party-selftest: $out lacks third-party-pass.txt or logs.tar.gz" >&2
    bad=1
fi
# The nvcc lines are in the build log, and the fatbin sits next to its program.
tar -xzf "$out/logs.tar.gz" -C "$tmp" logs/vectorAdd.build.log logs/vectorAdd.plain.masked 2>/dev/null || true
grep -q '^+ nvcc -arch=sm_90 -std=c++17 -lineinfo ' "$tmp/logs/vectorAdd.build.log" ||
    { echo "third-party-selftest: no nvcc line in vectorAdd.build.log" >&2; bad=1; }
grep -qx 'Processing time: # (ms)' "$tmp/logs/vectorAdd.plain.masked" ||
    { echo "third-party-selftest: the timing line is not masked: $(grep time "$tmp/logs/vectorAdd.plain.masked")" >&2; bad=1; }
if [ "$bad" != 0 ]; then
    echo "--- the pass printed:" >&2
    cat "$tmp/report" >&2
    exit 1
fi
echo PASS
