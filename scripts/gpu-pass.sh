#!/usr/bin/env bash
# The GPU pass (DESIGN.md §6): CUDA workloads through capture → sidecar → play →
# diff on an NVIDIA GPU with CUDA 13 (nvcc, driver). Run from the repository
# root with .gpu/ in place (scripts/gpu-prepare.sh makes it):
#
#   scripts/gpu-pass.sh
#
# Prints one line per case, `PASS name` or `FAIL name: reason` (an `XFAIL`
# line, counted in neither total, records a build that is known not to work),
# then the speed measurements, then exactly `N passed, M failed`; exits 1 when
# M > 0. Every step runs under `timeout`; a failing case never stops the pass.
# Logs go to $OUT when set (the GPU tool collects it), else ./gpu-out/: the
# printed report as gpu-pass.txt, every step's log under logs/ (packed into
# logs.tar.gz and removed when $OUT is set: collectors fetch few files).
# Archives and executables go to a scratch directory ($HRR_GPU_WORK, default
# a fresh /tmp dir) so that large blobs do not land in the collected logs.
#
# Environment: NVCC (default nvcc), HRR_GPU_ARCH (default sm_90),
# HRR_STEP_TIMEOUT (seconds per step, default 120), HRR_GPU_BIN (default
# .gpu/bin), HRR_GPU_WORK (scratch directory).
set -u -o pipefail

ROOT=$(pwd)
BIN=${HRR_GPU_BIN:-$ROOT/.gpu/bin}
SRC=$ROOT/tests/workloads/cuda
TOP=${OUT:-$ROOT/gpu-out}
LOG=$TOP/logs
WORK=${HRR_GPU_WORK:-$(mktemp -d /tmp/hrr-gpu.XXXXXX)}
NVCC=${NVCC:-nvcc}
ARCH=${HRR_GPU_ARCH:-sm_90}
T=${HRR_STEP_TIMEOUT:-120}
mkdir -p "$LOG" "$WORK"
exec > >(tee "$TOP/gpu-pass.txt") 2>&1
TEE_PID=$!
pack_logs() {
    if [ -n "${OUT:-}" ]; then
        tar -czf "$TOP/logs.tar.gz" -C "$TOP" logs && rm -rf "$LOG"
    fi
    # Let tee finish writing gpu-pass.txt before the collector reads it.
    exec >&- 2>&-
    wait "$TEE_PID" 2>/dev/null
}
trap pack_logs EXIT

passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
now_ns() { date +%s%N; }
ms_between() { echo $((($2 - $1) / 1000000)); }

# --- environment ----------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    "$NVCC" --version 2>&1 | tail -n 2 | sed 's/^/nvcc: /'
    [ -f .gpu/MANIFEST ] && sed 's/^/manifest: /' .gpu/MANIFEST
} | tee "$LOG/environment.txt"

for f in hrr-cap hrr-play hrr-sidecar hrr-diff libhrr_intercept.so; do
    if [ ! -e "$BIN/$f" ]; then
        echo "gpu-pass: $BIN/$f is missing; run scripts/gpu-prepare.sh where the binaries were built" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
done

# --- build the workloads (in parallel) ------------------------------------
WORKLOADS=(saxpy streams_events pool_interior struct_arg pinned_d2h launch_repeat hidden_segment launch_loop)
declare -A BUILD_RC
build_one() {
    local w=$1 extra=()
    [ "$w" = hidden_segment ] && extra=(-lcuda)
    timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 -o "$WORK/$w" "$SRC/$w.cu" "${extra[@]}" \
        >"$LOG/$w.build.log" 2>&1
}
pids=()
for w in "${WORKLOADS[@]}"; do
    build_one "$w" &
    pids+=($!)
done
# Images for the backend self-test: a whole fat binary and a bare cubin.
timeout "$T" "$NVCC" -fatbin -arch="$ARCH" -o "$WORK/saxpy.fatbin" "$SRC/saxpy.cu" >"$LOG/saxpy.fatbin.log" 2>&1 &
pid_fatbin=$!
timeout "$T" "$NVCC" -cubin -arch="$ARCH" -o "$WORK/saxpy.cubin" "$SRC/saxpy.cu" >"$LOG/saxpy.cubin.log" 2>&1 &
pid_cubin=$!
for i in "${!WORKLOADS[@]}"; do
    wait "${pids[$i]}"
    BUILD_RC[${WORKLOADS[$i]}]=$?
done
wait "$pid_fatbin"; rc_fatbin=$?
wait "$pid_cubin"; rc_cubin=$?

# --- case: the CUDA backend on its own --------------------------------------
if [ -x "$BIN/hrr-cuda-gpu-tests" ]; then
    images=""
    [ "$rc_fatbin" = 0 ] && images="$WORK/saxpy.fatbin:_Z5saxpyifPKfPf"
    [ "$rc_cubin" = 0 ] && images="$images,$WORK/saxpy.cubin:_Z5saxpyifPKfPf"
    HRR_CUDA_TEST_IMAGES=$images timeout "$T" "$BIN/hrr-cuda-gpu-tests" --ignored --test-threads=1 --nocapture \
        >"$LOG/backend.log" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        pass backend
    else
        fail backend "hrr-backend-cuda GPU tests exit $rc: $(grep -E "panicked|FAILED|failed" "$LOG/backend.log" | head -n 1)"
    fi
else
    fail backend "$BIN/hrr-cuda-gpu-tests missing"
fi

# --- the pipeline, one workload -------------------------------------------
# run_case NAME [ARGS...]: plain run, capture, (sidecar), play, diff.
# Sets CAP_WALL_MS, PLAIN_WALL_MS, PLAY_WALL_MS for the speed section.
run_case() {
    local w=$1 case=$2
    shift 2
    local exe=$WORK/$w arc=$WORK/$case.hrr rep=$WORK/$case.replay.hrr rc t0 t1
    CAP_WALL_MS="" PLAIN_WALL_MS="" PLAY_WALL_MS=""
    if [ "${BUILD_RC[$w]}" != 0 ]; then
        fail "$case" "nvcc failed: $(grep -m1 -i error "$LOG/$w.build.log")"
        return 1
    fi
    t0=$(now_ns)
    timeout "$T" "$exe" "$@" >"$LOG/$case.plain.log" 2>&1
    rc=$?
    t1=$(now_ns)
    PLAIN_WALL_MS=$(ms_between "$t0" "$t1")
    if [ "$rc" != 0 ]; then
        fail "$case" "the workload fails without capture (exit $rc): $(tail -n 1 "$LOG/$case.plain.log")"
        return 1
    fi

    rm -rf "$arc" "$rep"
    t0=$(now_ns)
    timeout "$T" "$BIN/hrr-cap" -o "$arc" --platform cuda -- "$exe" "$@" 2>"$LOG/$case.cap.stderr" |
        tee "$LOG/$case.app.log" >/dev/null
    rc=${PIPESTATUS[0]}
    t1=$(now_ns)
    CAP_WALL_MS=$(ms_between "$t0" "$t1")
    if [ "$rc" != 0 ]; then
        fail "$case" "capture exit $rc: $(tail -n 1 "$LOG/$case.cap.stderr")"
        return 1
    fi
    if grep -q WRONG "$LOG/$case.app.log"; then
        fail "$case" "the workload computes wrong results under capture: $(grep -m1 WRONG "$LOG/$case.app.log")"
        return 1
    fi
    if ! grep -Eq '"complete" *: *true' "$arc/manifest.json" 2>/dev/null; then
        fail "$case" "capture archive incomplete (manifest: $(head -c 200 "$arc/manifest.json" 2>/dev/null))"
        return 1
    fi
    if [ "$case" != bandwidth ] && ! grep -Eq '"op" *: *"launch"' "$arc/events.ndjson"; then
        fail "$case" "no launch recorded"
        return 1
    fi

    if [ "$w" = hidden_segment ]; then
        # The same capture without its sidecar, for the negative case.
        rm -rf "$WORK/$case-nosidecar.hrr"
        cp -r "$arc" "$WORK/$case-nosidecar.hrr"
        grep HRR_SEGMENT "$LOG/$case.app.log" | timeout "$T" "$BIN/hrr-sidecar" --archive "$arc" \
            >"$LOG/$case.sidecar.log" 2>&1
        rc=$?
        if [ "$rc" != 0 ]; then
            fail "$case" "hrr-sidecar exit $rc: $(tail -n 1 "$LOG/$case.sidecar.log")"
            return 1
        fi
    fi

    t0=$(now_ns)
    timeout "$T" "$BIN/hrr-play" "$arc" --backend cuda -o "$rep" >"$LOG/$case.play.log" 2>&1
    rc=$?
    t1=$(now_ns)
    PLAY_WALL_MS=$(ms_between "$t0" "$t1")
    if [ "$rc" != 0 ]; then
        fail "$case" "hrr-play exit $rc: $(grep -m1 -E 'fatal|error|FAIL' "$LOG/$case.play.log" || tail -n 1 "$LOG/$case.play.log")"
        return 1
    fi
    local d2h
    d2h=$(sed -n 's/^d2h *: *\([0-9]*\) pass.*/\1/p' "$LOG/$case.play.log" | head -n 1)
    if [ -z "$d2h" ] || [ "$d2h" = 0 ]; then
        fail "$case" "replay validated no D2H ($(grep -m1 '^d2h' "$LOG/$case.play.log"))"
        return 1
    fi
    if [ "$w" = hidden_segment ] && ! grep -Eq '^region segs *: *[1-9]' "$LOG/$case.play.log"; then
        fail "$case" "the segment was not materialised ($(grep -m1 '^region segs' "$LOG/$case.play.log"))"
        return 1
    fi

    timeout "$T" "$BIN/hrr-diff" "$arc" "$rep" >"$LOG/$case.diff.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "$case" "hrr-diff exit $rc: $(tail -n 1 "$LOG/$case.diff.log")"
        return 1
    fi
    pass "$case"
}

for w in saxpy streams_events pool_interior struct_arg pinned_d2h launch_repeat hidden_segment; do
    run_case "$w" "$w"
done

# --- case: launch_repeat's explicit-API launches, under their own names ----
case=launch_repeat_explicit_api
if [ -f "$WORK/launch_repeat.hrr/events.ndjson" ]; then
    counts=""
    for api in __cudaLaunchKernel cudaLaunchKernel cudaLaunchKernelExC; do
        counts="$counts $api=$(grep -c "\"api\":\"$api\",\"op\":\"launch\"" "$WORK/launch_repeat.hrr/events.ndjson")"
    done
    # 20 cudaLaunchKernel and 10 cudaLaunchKernelExC in the workload.
    if [[ "$counts" == *" cudaLaunchKernel=20 cudaLaunchKernelExC=10" ]]; then
        pass "$case"
    else
        fail "$case" "launch events by api:$counts (want cudaLaunchKernel=20 cudaLaunchKernelExC=10)"
    fi
else
    fail "$case" "no capture of launch_repeat"
fi

# --- case: the seed's capture without its sidecar must fail cleanly --------
case=hidden_segment_no_sidecar
if [ -d "$WORK/hidden_segment-nosidecar.hrr" ]; then
    timeout "$T" "$BIN/hrr-play" "$WORK/hidden_segment-nosidecar.hrr" --backend cuda \
        >"$LOG/$case.play.log" 2>&1
    rc=$?
    line=$(grep -m1 -E 'hrr-play: fatal: event [0-9]+ \([^)]*\): .* 0x[0-9a-f]+ not mapped' "$LOG/$case.play.log")
    if [ "$rc" = 1 ] && [ -n "$line" ]; then
        pass "$case"
        echo "  $line"
    else
        fail "$case" "expected exit 1 and a 'not mapped' fatal line, got exit $rc: $(tail -n 1 "$LOG/$case.play.log")"
    fi
else
    fail "$case" "no capture of hidden_segment to replay"
fi

# --- case: nvcc's default (static cudart) is warned about, shared is not ---
case=static_cudart_warning
if [ -x "$WORK/saxpy" ] && timeout "$T" "$NVCC" -arch="$ARCH" -O2 -o "$WORK/saxpy_static" "$SRC/saxpy.cu" >"$LOG/$case.build.log" 2>&1; then
    timeout "$T" "$BIN/hrr-cap" -o "$WORK/saxpy_static.hrr" -- "$WORK/saxpy_static" >/dev/null 2>"$LOG/$case.static.log"
    timeout "$T" "$BIN/hrr-cap" -o "$WORK/saxpy_shared.hrr" -- "$WORK/saxpy" >/dev/null 2>"$LOG/$case.shared.log"
    warn='links the CUDA runtime statically'
    if grep -q "$warn" "$LOG/$case.static.log" && ! grep -q "$warn" "$LOG/$case.shared.log"; then
        pass "$case"
    else
        fail "$case" "static build warned: $(grep -c "$warn" "$LOG/$case.static.log"), shared build warned: $(grep -c "$warn" "$LOG/$case.shared.log")"
    fi
else
    fail "$case" "no shared saxpy build, or nvcc (static cudart) failed: $(tail -n 1 "$LOG/$case.build.log" 2>/dev/null)"
fi

# --- case: a HIP source built for NVIDIA with Debian's HIP headers ---------
case=hip_on_nvidia
if [ -d .gpu/hip-include/hip ]; then
    timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -x cu -I .gpu/hip-include -o "$WORK/hip_on_nvidia" \
        "$SRC/hip_on_nvidia.cpp" >"$LOG/$case.build.log" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        BUILD_RC[hip_on_nvidia]=0
        run_case hip_on_nvidia "$case"
    else
        nerr=$(grep -c '): error' "$LOG/$case.build.log")
        echo "XFAIL $case: Debian's HIP headers ($(cat .gpu/hip-include/VERSION 2>/dev/null || echo libamdhip64-dev)) do not compile with CUDA $("$NVCC" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2): $nerr errors, by kind:"
        # One line per distinct message, with the header lines it occurs on.
        grep '): error' "$LOG/$case.build.log" | sed 's|^.*/hip-include/||' |
            awk -F'): error: ' '{ split($1, a, "("); m[$2] = m[$2] (m[$2] ? "," : "") a[2]; f[$2] = a[1] }
                END { for (k in m) printf "  %s: %s (%s lines %s)\n", "error", k, f[k], m[k] }' | sort
    fi
else
    echo "XFAIL $case: .gpu/hip-include is missing (libamdhip64-dev not installed where gpu-prepare.sh ran)"
fi

# --- speed ----------------------------------------------------------------
echo "--- speed (one run each, same machine, side by side)"
loop_ms() { sed -n 's/^HRR_TIME launch_loop_ms=\([0-9.]*\).*/\1/p' "$1" | head -n 1; }
json_wall() { grep -o '"wall_ms" *: *[0-9.]*' "$1" | head -n 1 | sed 's/.*: *//'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%+.1f %%", (a - b) * 100 / b; else print "n/a" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

if run_case launch_loop launch_loop loop 100000; then
    p=$(loop_ms "$LOG/launch_loop.plain.log")
    c=$(loop_ms "$LOG/launch_loop.app.log")
    # The replay again, timed alone, with the engine's own wall time.
    t0=$(now_ns)
    timeout "$T" "$BIN/hrr-play" "$WORK/launch_loop.hrr" --backend cuda --json >"$LOG/launch_loop.play.json" 2>&1
    t1=$(now_ns)
    rw=$(ms_between "$t0" "$t1")
    rj=$(json_wall "$LOG/launch_loop.play.json")
    echo "launch_loop 100k: plain loop ${p} ms (process ${PLAIN_WALL_MS} ms)"
    echo "launch_loop 100k: captured loop ${c} ms, overhead $(pct "$c" "$p") (target <= +10 %); process ${CAP_WALL_MS} ms"
    echo "launch_loop 100k: replay process ${rw} ms = $(ratio "$rw" "$PLAIN_WALL_MS") of the plain process (target <= 1.20x); engine wall ${rj:-?} ms = $(ratio "${rj:-0}" "$p") of the plain loop"
fi

if run_case launch_loop bandwidth bw 256; then
    sed -n 's/^bandwidth: /plain   : /p' "$LOG/bandwidth.plain.log"
    sed -n 's/^bandwidth: /captured: /p' "$LOG/bandwidth.app.log"
    t0=$(now_ns)
    timeout "$T" "$BIN/hrr-play" "$WORK/bandwidth.hrr" --backend cuda --json --timing >"$LOG/bandwidth.play.json" 2>&1
    t1=$(now_ns)
    rj=$(json_wall "$LOG/bandwidth.play.json")
    if grep -q '"copies"' "$LOG/bandwidth.play.json"; then
        # The device calls alone (hrr-play times each copy); blob reads, hash
        # checks and D2H comparison are outside these figures.
        python3 - "$LOG/bandwidth.play.json" <<'PY'
import json, sys
c = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["copies"]
def rate(b, ms): return b / 1e6 / ms if ms else 0.0
print("replay  : copies h2d %.2f GB/s (%d MiB in %.1f ms), d2h %.2f GB/s (%d MiB in %.1f ms)" % (
    rate(c["h2d_bytes"], c["h2d_ms"]), c["h2d_bytes"] >> 20, c["h2d_ms"],
    rate(c["d2h_bytes"], c["d2h_ms"]), c["d2h_bytes"] >> 20, c["d2h_ms"]))
PY
        awk -v ms="${rj:-0}" 'BEGIN { if (ms > 0) printf "replay  : whole engine (blob reads, hash checks, compares included): 10 x 256 MiB in %.1f ms = %.2f GB/s\n", ms, 10 * 268435456 / 1e9 / (ms / 1e3) }'
    else
        # 5 H2D + 5 D2H of 256 MiB (warm-up included); the engine's wall time
        # also covers blob reads, allocations and the D2H comparison, so this
        # is a lower bound on the replayed copies' bandwidth.
        awk -v ms="${rj:-0}" 'BEGIN { if (ms > 0) printf "replay  : hrr-play reports no per-copy time; 10 x 256 MiB copied in %.1f ms of engine wall time = %.2f GB/s (lower bound)\n", ms, 10 * 268435456 / 1e9 / (ms / 1e3); else print "replay  : no engine wall time reported" }'
    fi
    grep -E '^backend (h2d|d2h)' "$LOG/backend.log" | sed 's/^/backend : /'
    echo "target  : replayed copies >= 80 % of the plain pinned bandwidth"
fi

echo "logs: $LOG"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
