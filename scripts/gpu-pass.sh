#!/usr/bin/env bash
# The GPU pass (DESIGN.md §6): CUDA workloads through capture → sidecar → play →
# diff on an NVIDIA GPU with CUDA 13 (nvcc, driver). Run from the repository
# root with .gpu/ in place (scripts/gpu-prepare.sh makes it):
#
#   scripts/gpu-pass.sh
#
# Prints one line per case, `PASS name` or `FAIL name: reason` (an `XFAIL`
# line, counted in neither total, records a build that is known not to work,
# or a trust_* case that fails while its capture reports unrecorded calls),
# then the speed measurements, then exactly `N passed, M failed`; exits 1 when
# M > 0. Every step runs under `timeout`; a failing case never stops the pass.
# Logs go to $OUT when set (the GPU tool collects it), else ./gpu-out/: the
# printed report as gpu-pass.txt, every step's log under logs/ (packed into
# logs.tar.gz and removed when $OUT is set: collectors fetch few files).
# Archives and executables go to a scratch directory ($HRR_GPU_WORK, default
# a fresh /tmp dir) so that large blobs do not land in the collected logs.
#
# Environment: NVCC (default nvcc), HRR_GPU_ARCH (default sm_90),
# HRR_STEP_TIMEOUT (seconds per step, default 120; PyTorch steps get
# HRR_TORCH_TIMEOUT, default 300), HRR_GPU_BIN (default .gpu/bin),
# HRR_GPU_WORK (scratch directory), PYTHON (default python3, with torch),
# HRR_GPU_CASES (space-separated case names or globs, e.g. "torch_* driver_*":
# only those run; default all; to split the pass over two commands; a pattern
# starting with ! excludes, e.g. "!trust_*"; "trust_*" selects the real
# programs' shapes of tests/workloads/python/, each needing every allocation
# placed: PyTorch, JAX, CuPy, NCCL, transformers).
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
TT=${HRR_TORCH_TIMEOUT:-300}
PYTHON=${PYTHON:-python3}
SELECT=${HRR_GPU_CASES:-}
# NCCL: headers and libnccl.so.2 of the nvidia-nccl pip package PyTorch
# brings (no system libnccl-dev is assumed). The replays of the collective
# cases load that library (HRR_NCCL_LIBRARY), not a soname search.
NCCL_DIR=${HRR_NCCL_DIR:-$("$PYTHON" - 2>/dev/null <<'PY'
import os
try:
    import nvidia.nccl as m
    d = os.path.dirname(m.__file__) if getattr(m, "__file__", None) else list(m.__path__)[0]
    if os.path.exists(os.path.join(d, "lib", "libnccl.so.2")):
        print(d)
except Exception:
    pass
PY
)}
if [ -n "$NCCL_DIR" ] && [ -z "${HRR_NCCL_LIBRARY:-}" ]; then
    export HRR_NCCL_LIBRARY=$NCCL_DIR/lib/libnccl.so.2
fi
# shellcheck source=scripts/gpu-lib.sh
. "$ROOT/scripts/gpu-lib.sh"
gpu_out_setup gpu-pass.txt

# --- environment ----------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    "$NVCC" --version 2>&1 | tail -n 2 | sed 's/^/nvcc: /'
    [ -f .gpu/MANIFEST ] && sed 's/^/manifest: /' .gpu/MANIFEST
    "$PYTHON" -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1
    "$PYTHON" -c 'import triton; print("triton:", triton.__version__)' 2>&1 | tail -n 1
    # The trust_* cases' frameworks (versions only: nothing touches the GPU).
    "$PYTHON" - <<'PY' 2>&1 | grep -E '^(numpy|jax|jaxlib|cupy|transformers): '
import importlib
for m in ("numpy", "jax", "jaxlib", "cupy", "transformers"):
    try:
        print(f"{m}: {importlib.import_module(m).__version__}")
    except Exception as e:
        print(f"{m}: not importable ({type(e).__name__}: {e})")
PY
} | tee "$LOG/environment.txt"

if gpu_bins_missing; then
    echo "0 passed, 1 failed"
    exit 1
fi

# --- build the workloads (in parallel) ------------------------------------
WORKLOADS=(saxpy streams_events pool_interior struct_arg pinned_d2h launch_repeat hidden_segment launch_loop
    saxpy_static driver_ptx driver_vmm cublas_sgemm graph_unrecorded ptr_table host_memory pitched symbols pools
    graph_captured graph_nodes_driver graph_generic_nodes graph_host_memory driver_api_extra texture2d
    texture2d_ptds graph_setters job_launcher graph_arrays texture_mipmap nccl_one_rank device_hash
    device_hash_reset device_reset)
declare -A BUILD_RC
build_one() {
    local w=$1
    case "$w" in
        # nvcc's default: the CUDA runtime linked statically.
        saxpy_static) timeout "$T" "$NVCC" -arch="$ARCH" -O2 -o "$WORK/$w" "$SRC/saxpy.cu" ;;
        # Driver-API programs in C: no runtime at all.
        driver_ptx | driver_vmm | graph_nodes_driver | graph_generic_nodes | driver_api_extra | graph_setters) timeout "$T" "$NVCC" -O2 -o "$WORK/$w" "$SRC/$w.c" -lcuda ;;
        # The runtime built for per-thread default streams: its array copies
        # reach the driver's _ptds/_ptsz forms.
        texture2d_ptds) timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 --default-stream per-thread -o "$WORK/$w" "$SRC/texture2d.cu" ;;
        hidden_segment) timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 -o "$WORK/$w" "$SRC/$w.cu" -lcuda ;;
        cublas_sgemm) timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 -o "$WORK/$w" "$SRC/$w.cu" -lcublas ;;
        # NCCL's API from the pip package's headers and library.
        nccl_one_rank)
            if [ -z "$NCCL_DIR" ]; then
                echo "error: no nvidia.nccl package with lib/libnccl.so.2 for $PYTHON (set HRR_NCCL_DIR)"
                false
            else
                timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 -I"$NCCL_DIR/include" -o "$WORK/$w" "$SRC/$w.cu" \
                    -L"$NCCL_DIR/lib" -l:libnccl.so.2 -Xlinker -rpath -Xlinker "$NCCL_DIR/lib"
            fi ;;
        *) timeout "$T" "$NVCC" -cudart shared -arch="$ARCH" -O2 -o "$WORK/$w" "$SRC/$w.cu" ;;
    esac >"$LOG/$w.build.log" 2>&1
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
if ! want backend; then
    :
elif [ -x "$BIN/hrr-cuda-gpu-tests" ]; then
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

# --- case: cuda-api's tables against this machine's CUDA headers ------------
# The C file gpu-prepare.sh generated, compiled with gcc and nvcc: nvcc also
# declares the compiler ABI's __cudaGetKernel and __cudaLaunchKernel.
if want cuda_headers; then
    case=cuda_headers
    inc=""
    for d in "${CUDA_HOME:-/nonexistent}/include" /usr/local/cuda/include; do
        if [ -f "$d/cuda_runtime_api.h" ]; then inc=$d; break; fi
    done
    if [ ! -s .gpu/cuda-check/decls.c ] || [ ! -s .gpu/cuda-check/names.txt ]; then
        fail "$case" ".gpu/cuda-check/ missing (run scripts/gpu-prepare.sh)"
    elif [ -z "$inc" ]; then
        fail "$case" "no cuda_runtime_api.h in \$CUDA_HOME/include or /usr/local/cuda/include"
    elif timeout "$T" scripts/cuda-header-check.sh .gpu/cuda-check/decls.c .gpu/cuda-check/names.txt \
        --include "$inc" --nvcc "$(command -v "$NVCC" || echo "$NVCC")" >"$LOG/$case.log" 2>&1; then
        grep -m1 'table lines met' "$LOG/$case.log"
        pass "$case"
    else
        fail "$case" "$(grep -m1 -E 'error:|FAIL' "$LOG/$case.log")"
    fi
fi


for w in saxpy streams_events pool_interior struct_arg pinned_d2h launch_repeat; do
    run_case "$w" "$w"
done

# --- case: the default archive form (the rest of the pass keeps its events
# plain for grep; see scripts/gpu-lib.sh): events.ndjson.zst and compressed
# blobs, replayed and diffed.
check_compressed() {
    [ -f "$2/events.ndjson.zst" ] && [ ! -e "$2/events.ndjson" ] ||
        { echo "expected events.ndjson.zst alone: $(ls "$2" | tr '\n' ' ')"; return 1; }
}
CASE_ENV=(HRR_EVENTS=zst)
NO_LAUNCH=1
CHECK=check_compressed
run_case saxpy saxpy_compressed

# --- the seed's scenario: memory the capture never saw ---------------------
# The driver layer records hidden_segment's cuMemAlloc (it is no longer
# hidden): the seed's scenario is the runtime layer alone.
CASE_ENV=(HRR_CUDA_DRIVER_LAYER=off)
SIDECAR=1
run_case hidden_segment hidden_segment
# The same capture without its sidecar: see hidden_segment_no_sidecar below.
if [ -d "$WORK/hidden_segment.hrr" ]; then
    rm -rf "$WORK/hidden_segment-nosidecar.hrr"
    cp -r "$WORK/hidden_segment.hrr" "$WORK/hidden_segment-nosidecar.hrr"
    rm -rf "$WORK/hidden_segment-nosidecar.hrr/regions"
fi
# With the driver layer the allocation is recorded: no sidecar needed.
check_driver_alloc() {
    local n
    n=$(events_with "$2" '"api":"cuMemAlloc_v2","op":"alloc"')
    [ "$n" -ge 1 ] || { echo "the driver allocation is not recorded ($n cuMemAlloc_v2 events)"; return 1; }
}
CHECK=check_driver_alloc
run_case hidden_segment hidden_segment_driver_layer

# --- case: launch_repeat's explicit-API launches, under their own names ----
case=launch_repeat_explicit_api
if ! want "$case"; then
    :
elif [ -f "$WORK/launch_repeat.hrr/events.ndjson" ]; then
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
if ! want "$case"; then
    :
elif [ -d "$WORK/hidden_segment-nosidecar.hrr" ]; then
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

# --- the driver layer ---------------------------------------------------
# nvcc's default build (static cudart): recorded through dlsym and
# cuGetProcAddress, under the driver's names.
check_static() {
    local n
    n=$(events_with "$2" '"api":"cuLaunchKernel(Ex)?(_ptsz)?","op":"launch"')
    [ "$n" -ge 1 ] || { echo "no driver-layer launch recorded ($n)"; return 1; }
    ! grep -q 'links the CUDA runtime statically' "$LOG/$1.cap.stderr" ||
        { echo "hrr-cap still warns about the static runtime"; return 1; }
}
CHECK=check_static
run_case saxpy_static saxpy_static

# A driver-API program: PTX, a module global, three launch forms.
check_driver_ptx() {
    local g a m
    g=$(events_with "$2" '"op":"global"')
    a=$(events_with "$2" '"api":"cuLaunchKernelEx","op":"launch".*"attrs":\[')
    # Modules load lazily (from a launch's or a global's code blob), so
    # cuModuleLoadData leaves no event of its own: count the launches
    # (kernelParams, extra, cuLaunchKernelEx) instead.
    m=$(events_with "$2" '"op":"launch"')
    [ "$g" -ge 1 ] && [ "$a" -ge 1 ] && [ "$m" -ge 3 ] ||
        { echo "events: global $g, cuLaunchKernelEx with attrs $a, launches $m (want >= 1, >= 1, >= 3)"; return 1; }
}
CHECK=check_driver_ptx
run_case driver_ptx driver_ptx

# Virtual memory: a reservation, pieces mapped into it, a buffer across them.
check_vmm() {
    local v m
    v=$(events_with "$2" '"op":"va_reserve"')
    m=$(events_with "$2" '"op":"mem_map"')
    [ "$v" -ge 1 ] && [ "$m" -ge 2 ] || { echo "events: va_reserve $v, mem_map $m"; return 1; }
}
CHECK=check_vmm
run_case driver_vmm driver_vmm

# NCCL's handles, host functions and callbacks between kernels, peer copies
# on device 0: each recorded (nothing unrecorded), the replay byte-exact.
check_api_extra() {
    local r e i h p
    r=$(events_with "$2" '"op":"mem_retain"')
    e=$(events_with "$2" '"op":"mem_export"')
    i=$(events_with "$2" '"op":"mem_import"')
    h=$(events_with "$2" '"op":"host_func"')
    p=$(events_with "$2" '"op":"memcpy_peer"')
    [ "$r" -ge 3 ] && [ "$e" -ge 1 ] && [ "$i" -ge 1 ] && [ "$h" -ge 6 ] && [ "$p" -ge 6 ] ||
        { echo "events: mem_retain $r, mem_export $e, mem_import $i, host_func $h, memcpy_peer $p"; return 1; }
    ! grep -q '"unrecorded"' "$2/manifest.json" || { echo "unrecorded calls: $(grep -o '"unrecorded":{[^}]*}' "$2/manifest.json")"; return 1; }
}
CHECK=check_api_extra
run_case driver_api_extra driver_api_extra

# cuBLAS: its kernels reach the driver directly.
check_cublas() {
    local n
    n=$(events_with "$2" '"api":"cuLaunchKernel(Ex)?(_ptsz)?","op":"launch"')
    [ "$n" -ge 1 ] || { echo "no cuBLAS launch at the driver layer"; return 1; }
}
CHECK=check_cublas
run_case cublas_sgemm cublas_sgemm

# 2D/3D copies, symbols and pools: nothing may be left unrecorded (their
# effects are in the replay), and the capture holds the ops they are.
check_recorded() {
    local arc=$2 op
    shift 2
    if grep -q '"unrecorded"' "$arc/manifest.json"; then
        echo "calls left unrecorded: $(grep -o '"unrecorded" *: *{[^}]*}' "$arc/manifest.json")"
        return 1
    fi
    for op in "${RECORDED_OPS[@]}"; do
        [ "$(events_with "$arc" "\"op\" *: *\"$op\"")" -gt 0 ] || { echo "no $op event"; return 1; }
    done
}
RECORDED_OPS=(memcpy_rect memset_rect)
CHECK=check_recorded
run_case pitched pitched
RECORDED_OPS=(global)
CHECK=check_recorded
run_case symbols symbols
RECORDED_OPS=(pool_create pool_alloc pool_destroy)
CHECK=check_recorded
run_case pools pools
# Arrays and texture objects: the runtime's array, copy and object calls
# reach the driver's (cuArrayCreate_v2, cuMemcpy2D*_v2, cuTexObjectCreate),
# recorded as their ops; the kernel's texture argument must be marked as an
# object, which replay maps to its own.
check_texture() {
    check_recorded "$@" || return 1
    [ "$(events_with "$2" '"objs" *: *\[')" -gt 0 ] || { echo "no launch argument marked as an object (objs)"; return 1; }
}
RECORDED_OPS=(array_create memcpy_array tex_create tex_destroy array_destroy)
CHECK=check_texture
run_case texture2d texture2d
# The same program with per-thread default streams: the copies are the
# driver's per-thread forms, recorded like the plain ones.
check_texture_ptds() {
    check_texture "$@" || return 1
    [ "$(events_with "$2" '"api" *: *"cuMemcpy[23]D[A-Za-z]*_v2_pt(ds|sz)"')" -gt 0 ] ||
        { echo "no array copy under a _ptds/_ptsz entry point"; return 1; }
}
RECORDED_OPS=(array_create memcpy_array tex_create tex_destroy array_destroy)
CHECK=check_texture_ptds
run_case texture2d_ptds texture2d_ptds

# Mipmap levels and NV12 planes: the level and plane handles translated,
# each level's contents read by one kernel through a texture object.
# (array_plane only where the device takes NV12 arrays: not required.)
RECORDED_OPS=(mipmap_create mipmap_level memcpy_array tex_create mipmap_destroy)
CHECK=check_texture
run_case texture_mipmap texture_mipmap

# Collectives at NCCL's own API: the capture holds the communicator, the
# collectives and the group, and none of the kernels NCCL launches itself
# (they would wait for peers no replay provides); the replay issues the
# collectives through libnccl.so.2 and every result read back matches.
# NCCL's own driver lookups may be counted unrecorded (not checked here).
check_nccl() {
    local arc=$2 op k
    for op in "${RECORDED_OPS[@]}"; do
        [ "$(events_with "$arc" "\"op\" *: *\"$op\"")" -gt 0 ] || { echo "no $op event"; return 1; }
    done
    k=$(events_with "$arc" '"op" *: *"launch".*"name" *: *"[^"]*nccl')
    [ "${k:-0}" = 0 ] || { echo "$k launches of NCCL's own kernels recorded"; return 1; }
}
RECORDED_OPS=(nccl_comm_init nccl_coll nccl_group_start nccl_group_end nccl_comm_destroy alloc)
CHECK=check_nccl
run_case nccl_one_rank nccl_one_rank

# Pointer tables in device memory: right only with every allocation at its
# recorded address; pure translation (--no-placement) must fail.
check_placement() {
    local line rc
    line=$(grep -m1 '^placement' "$LOG/$1.play.log")
    [[ "$line" =~ ^placement\ :\ ([0-9]+)\ of\ ([0-9]+)\  ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -gt 0 ] ||
        { echo "not every allocation placed: $line"; return 1; }
    timeout "$T" "$BIN/hrr-play" "$2" --backend cuda --no-placement >"$LOG/$1.noplace.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { echo "--no-placement must fail (exit 1), got exit $rc: $(tail -n 1 "$LOG/$1.noplace.log")"; return 1; }
}
CHECK=check_placement
run_case ptr_table ptr_table

# A device reset between two "tests" (cudaDeviceReset, which reaches
# cuDevicePrimaryCtxReset through the runtime's driver lookup): recorded as
# device_reset with nothing unrecorded (checked on the capture's own
# `unrecorded : 0 calls` line), and the replay frees what the first test
# had, so every allocation of the second is placed at its recorded address
# (the same one, when the driver handed the address out again).
check_device_reset() {
    local line
    RECORDED_OPS=(device_reset)
    check_recorded "$@" || return 1
    grep -qx 'unrecorded : 0 calls' "$LOG/$1.cap.stderr" ||
        { echo "capture: $(grep -m1 '^unrecorded' "$LOG/$1.cap.stderr" || echo 'no unrecorded line')"; return 1; }
    [ "$(events_with "$2" '"api" *: *"cuDevicePrimaryCtxReset(_v2)?"')" -gt 0 ] ||
        { echo "no device_reset under cuDevicePrimaryCtxReset"; return 1; }
    line=$(grep -m1 '^placement' "$LOG/$1.play.log")
    [[ "$line" =~ ^placement\ :\ ([0-9]+)\ of\ ([0-9]+)\  ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -gt 0 ] ||
        { echo "not every allocation placed: $line"; return 1; }
    grep -qx PASS "$LOG/$1.play.log" || { echo "replay: no PASS line"; return 1; }
}
CHECK=check_device_reset
run_case device_reset device_reset

# Large D2H copies are hashed on the device (a BLAKE3 kernel compiled by
# NVRTC, on the copy's stream before it). device_hash_check: every copy, of
# every size, hashed on the device and on the host, each pair compared (one
# stderr line each); device_hash: the default, its blobs named by the
# device's hash and checked by hrr-cap against their files, then replayed.
check_device_hash_each() {
    local want agree wrong
    want=$(sed -n 's/^HRR_DEVICE_HASH_COPIES=\([0-9]*\)/\1/p' "$LOG/$1.app.log")
    agree=$(grep -c 'device hash: [0-9]* bytes: [0-9a-f]* agrees with' "$LOG/$1.cap.stderr")
    wrong=$(grep -c 'DISAGREES' "$LOG/$1.cap.stderr")
    [ -n "$want" ] && [ "$agree" = "$want" ] && [ "$wrong" = 0 ] ||
        { echo "device hash: $agree of ${want:-?} copies agree with the host, $wrong disagree: $(grep -m1 -E 'DISAGREES|device hash' "$LOG/$1.cap.stderr")"; return 1; }
}
check_device_hash_used() {
    grep -q 'device hash: loaded in context' "$LOG/$1.cap.stderr" ||
        { echo "the device hash was not used: $(grep -m1 'device hash' "$LOG/$1.cap.stderr" || echo 'no device hash line')"; return 1; }
}
CASE_ENV=(HRR_DEVICE_HASH=check)
CHECK=check_device_hash_each
run_case device_hash device_hash_check
CASE_ENV=(HRR_LOG=1)
CHECK=check_device_hash_used
run_case device_hash device_hash
# Across cudaDeviceReset: the primary context dies with the hash's module,
# scratch and result page, and the next one (often at the same handle) must
# load its own. device_hash_reset_check: both copies agree with the host;
# device_hash_reset: the default. Each needs the hash loaded in both
# contexts (a stale one crashes the program or falls back to the host).
check_device_hash_reloaded() {
    local loads
    loads=$(grep -c 'device hash: loaded in context' "$LOG/$1.cap.stderr")
    [ "$loads" = 2 ] ||
        { echo "device hash loaded $loads times, want 2 (once per context): $(grep -m1 -E 'device hash: context|failed' "$LOG/$1.cap.stderr" || echo 'no failure line')"; return 1; }
}
check_device_hash_reset_each() {
    check_device_hash_each "$@" && check_device_hash_reloaded "$@"
}
CASE_ENV=(HRR_DEVICE_HASH=check HRR_LOG=1)
CHECK=check_device_hash_reset_each
run_case device_hash_reset device_hash_reset_check
CASE_ENV=(HRR_LOG=1)
CHECK=check_device_hash_reloaded
run_case device_hash_reset device_hash_reset

# Host memory kernels read and write (mapped pinned, managed, registered):
# the capture must hold the host's writes (host_write) and the kernels'
# (host_read), and replay checks them with the D2H copies.
check_host_memory() {
    local w r
    w=$(events_with "$2" '"op" *: *"host_write"')
    r=$(events_with "$2" '"op" *: *"host_read"')
    [ "${w:-0}" -ge 3 ] && [ "${r:-0}" -ge 1 ] ||
        { echo "expected host_write and host_read events, got $w and $r"; return 1; }
}
CHECK=check_host_memory
run_case host_memory host_memory

# --- CUDA graphs ------------------------------------------------------------
# Recorded at instantiation (graph_exec: the graph read back through the
# driver's queries) and per launch (graph_launch: the host bytes of its copy
# nodes); the captured work itself must not appear as if it ran (no plain
# launch events), nothing may be left unrecorded, and the replay must pass
# with the driver's graph API (the run) and node by node (--no-graphs).
# GRAPH_LAUNCHES: the graph launches the workload makes (GRAPH_AT_LEAST=1:
# at least that many); GRAPH_KERNELS: the least number of kernel nodes of its
# first graph_exec; GRAPH_PLAIN=1: the workload also launches kernels outside
# graphs (else a launch event is captured work recorded as if it ran), and
# calls left unrecorded fail the case only when they are graph or capture
# calls (PyTorch makes others).
check_graph() {
    local case=$1 arc=$2 x l k kn rc un
    un=$(grep -o '"unrecorded" *: *{[^}]*}' "$arc/manifest.json")
    if [ -n "$un" ] && { [ "${GRAPH_PLAIN:-0}" != 1 ] || grep -Eq 'Graph|Capture|HostFunc' <<<"$un"; }; then
        echo "calls left unrecorded: $un"
        return 1
    fi
    x=$(events_with "$arc" '"op" *: *"graph_exec"')
    l=$(events_with "$arc" '"op" *: *"graph_launch"')
    k=$(events_with "$arc" '"op" *: *"launch"')
    kn=$(grep -m1 '"op" *: *"graph_exec"' "$arc/events.ndjson" | grep -o '"kind" *: *"kernel"' | wc -l)
    if [ "${GRAPH_AT_LEAST:-0}" = 1 ]; then
        [ "${x:-0}" -ge 1 ] && [ "${l:-0}" -ge "$GRAPH_LAUNCHES" ]
    else
        [ "${x:-0}" -ge 1 ] && [ "${l:-0}" = "$GRAPH_LAUNCHES" ]
    fi || { echo "graph_exec events: ${x:-0} (want >= 1), graph_launch: ${l:-0} (want $GRAPH_LAUNCHES)"; return 1; }
    [ "${GRAPH_PLAIN:-0}" = 1 ] || [ "${k:-0}" = 0 ] ||
        { echo "${k:-0} launch events: captured work recorded as if it ran"; return 1; }
    [ "$kn" -ge "$GRAPH_KERNELS" ] || { echo "the first graph_exec has $kn kernel nodes (want >= $GRAPH_KERNELS)"; return 1; }
    if grep -q '"kind" *: *"unsupported"' "$arc/events.ndjson"; then
        echo "unsupported nodes: $(grep -o '"kind" *: *"unsupported" *, *"what" *: *"[^"]*"' "$arc/events.ndjson" | sort -u | head -n 3)"
        return 1
    fi
    timeout "$STEP_T" "$BIN/hrr-play" "$arc" --backend cuda --no-graphs "${COMPARE[@]}" >"$LOG/$case.nographs.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] && grep -q '^PASS' "$LOG/$case.nographs.log" ||
        { echo "--no-graphs replay exit $rc: $(grep -m1 -E 'fatal|error|FAIL' "$LOG/$case.nographs.log")"; return 1; }
}
NO_LAUNCH=1
GRAPH_LAUNCHES=3
GRAPH_KERNELS=3
CHECK=check_graph
run_case graph_captured graph_captured
# Built node by node through the driver API; node setters between launches.
NO_LAUNCH=1
GRAPH_LAUNCHES=3
GRAPH_KERNELS=2
CHECK=check_graph
run_case graph_nodes_driver graph_nodes_driver
# Built with the generic node API (cuGraphAddNode_v2, one programmatic edge),
# cuGraphExecNodeSetParams between launches: both setters rewrite the
# topology (graph_exec), and the graph checks above. Its host node (added by
# cuGraphAddNode_v2) overwrites the D2H result before it: the capture runs
# it through the graph trampoline, so every launch records that D2H result
# as copied (3 blobs a launch: the upload and both D2H nodes) and replay
# checks it; a result left unrecorded or recorded as overwritten fails.
check_graph_generic() {
    local s b
    s=$(events_with "$2" '"api":"cuGraphExecNodeSetParams","op":"graph_exec"')
    [ "${s:-0}" = 2 ] || { echo "cuGraphExecNodeSetParams graph_exec events: ${s:-0} (want 2)"; return 1; }
    ! grep -q 'could not wrap' "$LOG/$1.cap.stderr" ||
        { echo "a host node ran unwrapped: $(grep -m1 'could not wrap' "$LOG/$1.cap.stderr")"; return 1; }
    b=$(grep '"op" *: *"graph_launch"' "$2/events.ndjson" | while read -r line; do
        grep -o '"blob"' <<<"$line" | wc -l
    done | sort -u | tr '\n' ' ')
    [ "$b" = "3 " ] || { echo "blobs per graph_launch: $b(want 3: the host node's D2H must be recorded)"; return 1; }
    grep -q '"kind" *: *"host"' "$2/events.ndjson" || { echo "no host node in the topology"; return 1; }
    check_graph "$@"
}
NO_LAUNCH=1
GRAPH_LAUNCHES=3
GRAPH_KERNELS=3
CHECK=check_graph_generic
run_case graph_generic_nodes graph_generic_nodes
# cuGraphNodeSetEnabled (off, then on) and cuGraphExecChildGraphNodeSetParams
# between launches: each rewrites the topology (graph_exec), nothing is
# left unrecorded, and every launch's results replay.
check_graph_setters() {
    local e c
    e=$(events_with "$2" '"api":"cuGraphNodeSetEnabled","op":"graph_exec"')
    c=$(events_with "$2" '"api":"cuGraphExecChildGraphNodeSetParams","op":"graph_exec"')
    [ "${e:-0}" = 2 ] && [ "${c:-0}" = 1 ] ||
        { echo "graph_exec events: cuGraphNodeSetEnabled ${e:-0} (want 2), cuGraphExecChildGraphNodeSetParams ${c:-0} (want 1)"; return 1; }
    ! grep -q '"unrecorded"' "$2/manifest.json" || { echo "unrecorded calls: $(grep -o '"unrecorded":{[^}]*}' "$2/manifest.json")"; return 1; }
    check_graph "$@"
}
NO_LAUNCH=1
GRAPH_LAUNCHES=4
GRAPH_KERNELS=2
CHECK=check_graph_setters
run_case graph_setters graph_setters
# Array copies as graph nodes (captured cudaMemcpy2DToArrayAsync and
# FromArrayAsync, cudaGraphAddMemcpyNode naming an array), one moved by
# cudaGraphExecMemcpyNodeSetParams: memcpy_array nodes, none unsupported,
# and every launch's window download replays.
check_graph_arrays() {
    local a s
    a=$(grep -m1 '"op" *: *"graph_exec"' "$2/events.ndjson" | grep -o '"kind" *: *"memcpy_array"' | wc -l)
    s=$(events_with "$2" '"api":"cuGraphExecMemcpyNodeSetParams","op":"graph_exec"')
    [ "$a" = 3 ] && [ "${s:-0}" = 1 ] ||
        { echo "memcpy_array nodes in the first graph_exec: $a (want 3), graph_exec of cuGraphExecMemcpyNodeSetParams: ${s:-0} (want 1)"; return 1; }
    check_graph "$@"
}
NO_LAUNCH=1
GRAPH_LAUNCHES=3
GRAPH_KERNELS=1
CHECK=check_graph_arrays
run_case graph_arrays graph_arrays
# Kernel nodes reading and writing mapped pinned host memory: the host's
# writes recorded before the graph launches (host_write, under
# cuGraphLaunch), the kernels' at the synchronisations (host_read); the
# graph checks above; and a capture with HRR_HOST_MEMORY=off must replay
# wrong (exit 1), or the case proves nothing.
check_graph_host_memory() {
    local case=$1 arc=$2 w r rc off=$WORK/$1-off.hrr
    w=$(events_with "$arc" '"api":"cuGraphLaunch(_ptsz)?","op":"host_write"')
    r=$(events_with "$arc" '"op":"host_read"')
    if [ "${w:-0}" -lt 4 ] || [ "${r:-0}" -lt 2 ]; then
        echo "expected >= 4 host_write events of cuGraphLaunch and >= 2 host_read, got ${w:-0} and ${r:-0}"
        return 1
    fi
    check_graph "$@" || return 1
    rm -rf "$off"
    HRR_HOST_MEMORY=off timeout "$T" "$BIN/hrr-cap" -o "$off" --platform cuda -- "$WORK/graph_host_memory" \
        >"$LOG/$case.off.app.log" 2>"$LOG/$case.off.cap.stderr" ||
        { echo "the capture with HRR_HOST_MEMORY=off failed: $(tail -n 1 "$LOG/$case.off.cap.stderr")"; return 1; }
    timeout "$T" "$BIN/hrr-play" "$off" --backend cuda >"$LOG/$case.off.play.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { echo "captured with HRR_HOST_MEMORY=off, the replay must fail (exit 1), got exit $rc"; return 1; }
}
NO_LAUNCH=1
GRAPH_LAUNCHES=5
GRAPH_KERNELS=1
CHECK=check_graph_host_memory
run_case graph_host_memory graph_host_memory

# --- PyTorch --------------------------------------------------------------
# torch_case CASE SCRIPT [VAR=value...]: two plain runs first; the same
# checksum twice means the workload is deterministic and is compared byte
# for byte, else it is reported as nondeterministic and compared with a
# tolerance (the capture of one run against the replay).
TORCH=$ROOT/tests/workloads/torch
torch_case() {
    local case=$1 script=$2 c1 c2
    shift 2
    local vars=(TORCHINDUCTOR_CACHE_DIR="$WORK/inductor" TRITON_CACHE_DIR="$WORK/triton" "$@")
    if ! want "$case"; then
        reset_case
        return 1
    fi
    if ! "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
        fail "$case" "$PYTHON cannot import torch"
        reset_case
        return 1
    fi
    for i in 1 2; do
        env "${vars[@]}" timeout "$TT" "$PYTHON" "$TORCH/$script" >"$LOG/$case.plain$i.log" 2>&1
        local rc=$?
        if [ "$rc" != 0 ]; then
            fail "$case" "the workload fails without capture (exit $rc): $(grep -m1 -E 'WRONG|Error' "$LOG/$case.plain$i.log" || tail -n 1 "$LOG/$case.plain$i.log")"
            reset_case
            return 1
        fi
    done
    c1=$(grep -m1 'checksum' "$LOG/$case.plain1.log")
    c2=$(grep -m1 'checksum' "$LOG/$case.plain2.log")
    cp "$LOG/$case.plain1.log" "$LOG/$case.plain.log"
    if [ "$c1" != "$c2" ]; then
        echo "NOTE $case: nondeterministic: two plain runs differ ($c1 / $c2); compared with --atol 1e-4 --rtol 1e-3"
        COMPARE=(--atol 1e-4 --rtol 1e-3)
    fi
    CASE_ENV=("${vars[@]}")
    PLAIN_DONE=1
    STEP_T=$TT
    run_exe "$case" "$PYTHON" "$TORCH/$script"
}
check_torch_matmul() {
    local n
    n=$(events_with "$2" '"api":"cuLaunchKernel(Ex)?(_ptsz)?","op":"launch"')
    [ "$n" -ge 1 ] || { echo "no cuBLAS launch at the driver layer"; return 1; }
}
CHECK=check_torch_matmul
# HRR_LOG: the capture library says how PyTorch's driver lookups were routed.
torch_case torch_matmul matmul.py HRR_LOG=1
if [ -f "$LOG/torch_matmul.cap.stderr" ]; then
    echo "  routes: cudaGetDriverEntryPoint answers already routed by cuGetProcAddress: $(grep -c 'already this library' "$LOG/torch_matmul.cap.stderr"), routed by its own wrapper: $(grep -c 'routed here' "$LOG/torch_matmul.cap.stderr"); counted (stubs) lookups: $(grep -c 'is not recorded; its calls are counted' "$LOG/torch_matmul.cap.stderr")"
fi
torch_case torch_train train.py

# --- case: one kernel of a PyTorch capture extracted and replayed alone ---
# The middle launch of the training step's capture (cuBLAS or elementwise,
# whichever it is): hrr-extract replays up to it on the GPU, snapshots what it
# reaches, and writes an archive that must replay byte-exact on its own, and
# benchmark with --loop/--timing.
# extract_case SRC CASE [NAME_RE [OPS]]: extracts the middle launch of SRC's
# capture (of those whose kernel name matches NAME_RE, when given), replays
# it alone; the extracted archive must hold an event of each of OPS.
extract_case() {
    local src=$1 case=$2 pick=${3:-} need=${4:-} arc out seqs n seq
    want "$case" || return 0
    arc=$WORK/$src.hrr
    out=$WORK/$case.hrr
    if [ ! -f "$arc/manifest.json" ]; then
        fail "$case" "no $src capture to extract from"
        return 1
    fi
    seqs=$(grep -E '"op":"launch"' "$arc/events.ndjson" |
        { if [ -n "$pick" ]; then grep -iE "\"name\":\"[^\"]*($pick)"; else cat; fi; } |
        sed -n 's/^{"seq":\([0-9]*\),.*/\1/p')
    n=$(echo "$seqs" | grep -c .)
    if [ "$n" -lt 1 ]; then
        fail "$case" "$src has no launch${pick:+ of a kernel matching $pick}"
        return 1
    fi
    seq=$(echo "$seqs" | sed -n "$(( (n + 1) / 2 ))p")
    rm -rf "$out"
    timeout "$T" "$BIN/hrr-extract" "$arc" --launch "$seq" -o "$out" --backend cuda >"$LOG/$case.extract.log" 2>&1
    local rc=$?
    if [ "$rc" != 0 ]; then
        fail "$case" "hrr-extract --launch $seq exit $rc: $(grep -m1 -E 'error|fatal' "$LOG/$case.extract.log" || tail -n 1 "$LOG/$case.extract.log")"
        return 1
    fi
    local op
    for op in $need; do
        if ! grep -q "\"op\":\"$op\"" "$out/events.ndjson"; then
            fail "$case" "the extracted launch $seq holds no $op event"
            return 1
        fi
    done
    timeout "$T" "$BIN/hrr-play" "$out" --backend cuda >"$LOG/$case.play.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ] || ! grep -q '^PASS' "$LOG/$case.play.log"; then
        fail "$case" "replay of the extracted launch $seq exit $rc: $(grep -m1 -E 'fatal|error|FAIL' "$LOG/$case.play.log" || tail -n 1 "$LOG/$case.play.log")"
        return 1
    fi
    timeout "$T" "$BIN/hrr-play" "$out" --backend cuda --loop 20 --timing >"$LOG/$case.loop.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "$case" "--loop 20 --timing exit $rc: $(tail -n 1 "$LOG/$case.loop.log")"
        return 1
    fi
    pass "$case"
    echo "  seq $seq, launch $(( (n + 1) / 2 )) of $n ($(grep -m1 -o '"name":"[^"]*"' <(grep "^{\"seq\":$seq," "$arc/events.ndjson") | cut -c9-70)): $(grep -m1 '^d2h' "$LOG/$case.play.log"); $(du -sh "$out" | cut -f1) archive; $(grep -m1 -iE 'launch|kernel' "$LOG/$case.loop.log")"
}
extract_case torch_train torch_extract
extract_case cublas_sgemm cublas_extract
# Its one launch: a buffer across two mapped pieces, and a module global.
extract_case driver_vmm driver_vmm_extract '' 'mem_map global'

# --- case: the training step's capture and its timed replay as Perfetto JSON ---
case=torch_trace
if want "$case"; then
    arc=$WORK/torch_train.hrr
    rep=$WORK/torch_trace.replay.hrr
    rm -rf "$rep"
    if [ ! -f "$arc/manifest.json" ]; then
        fail "$case" "no torch_train capture"
    elif ! timeout "$T" "$BIN/hrr-play" "$arc" --backend cuda --timing -o "$rep" >"$LOG/$case.play.log" 2>&1; then
        fail "$case" "timed replay failed: $(grep -m1 -E 'fatal|error|FAIL' "$LOG/$case.play.log")"
    elif ! timeout "$T" "$BIN/hrr-trace" "$arc" -o "$WORK/$case.cap.json" 2>"$LOG/$case.trace.log" ||
        ! timeout "$T" "$BIN/hrr-trace" "$rep" -o "$WORK/$case.replay.json" 2>>"$LOG/$case.trace.log"; then
        fail "$case" "hrr-trace failed: $(tail -n 1 "$LOG/$case.trace.log")"
    elif ! why=$("$PYTHON" - "$WORK/$case.cap.json" "$WORK/$case.replay.json" <<'PY' 2>&1
import json, sys
out = []
for path in sys.argv[1:]:
    ev = json.load(open(path))["traceEvents"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    timed = [e for e in kernels if e.get("args", {}).get("timing") == "device"]
    assert kernels, f"{path}: no kernel slices"
    out.append(f"{len(ev)} events, {len(kernels)} kernels, {len(timed)} with device time")
    last_timed = len(timed)
assert last_timed > 0, "the timed replay's kernels carry no device time"
print("; ".join(out))
PY
    ); then
        fail "$case" "$why"
    else
        pass "$case"
        echo "  capture / timed replay: $why"
    fi
fi
# --- case: a window of a training loop (hrr-cap --window profiler) ---------
# torch.cuda.profiler.start() before step 50, stop() after step 53: the
# window's archive (state preamble + four steps) replays alone byte for byte
# (torch_case's replay and diff); its D2H are the same bytes, in the same
# order, as a run of D2H of a whole-run capture of the same script; its
# size and capture time are reported beside the whole run's.
check_torch_window() {
    local case=$1 arc=$2 full=$WORK/$1.full.hrr t0 t1 rc why
    grep -q '"trigger" *: *"profiler"' "$arc/manifest.json" ||
        { echo "the manifest does not say it is a profiler window"; return 1; }
    [ ! -e "$WORK/$case-w2.hrr" ] || { echo "one profiler range, but a second window archive exists"; return 1; }
    rm -rf "$full"
    t0=$(now_ns)
    env "${CASE_ENV[@]}" timeout "$STEP_T" "$BIN/hrr-cap" -o "$full" --platform cuda -- "$PYTHON" "$TORCH/window.py" \
        >"$LOG/$case.full.app.log" 2>"$LOG/$case.full.cap.stderr"
    rc=$?
    t1=$(now_ns)
    [ "$rc" = 0 ] || { echo "the whole-run capture exit $rc: $(tail -n 1 "$LOG/$case.full.cap.stderr")"; return 1; }
    why=$("$PYTHON" - "$arc" "$full" <<'PY' 2>&1
import json, sys
def d2h(path):
    out = []
    for line in open(f"{path}/events.ndjson"):
        e = json.loads(line)
        if e.get("op") == "memcpy" and e.get("dir") == "d2h" and e.get("blob"):
            out.append(e["blob"])
    return out
w, f = d2h(sys.argv[1]), d2h(sys.argv[2])
assert len(w) >= 4, f"the window holds {len(w)} D2H (want >= 4: one loss per step)"
at = [i for i in range(len(f) - len(w) + 1) if f[i:i + len(w)] == w]
assert at, f"the window's {len(w)} D2H are not a run of the whole capture's {len(f)}"
print(f"{len(w)} D2H = the whole run's D2H {at[0]}..{at[0] + len(w) - 1} of {len(f)}")
PY
    ) || { echo "$why"; return 1; }
    {
        echo "  $why"
        echo "  window: $(du -sh "$arc" | cut -f1) archive, capture ${CAP_WALL_MS} ms, state $(grep -o '"state_bytes" *: *[0-9]*' "$arc/manifest.json" | grep -o '[0-9]*$') bytes; whole run: $(du -sh "$full" | cut -f1) archive, capture $(ms_between "$t0" "$t1") ms"
    } >"$LOG/$case.report"
}
CHECK=check_torch_window
CAP_ARGS=(--window profiler)
torch_case torch_window window.py
[ -f "$LOG/torch_window.report" ] && cat "$LOG/torch_window.report"

check_expandable() {
    local v m
    v=$(events_with "$2" '"op":"va_reserve"')
    m=$(events_with "$2" '"op":"mem_map"')
    [ "$v" -ge 1 ] && [ "$m" -ge 2 ] || { echo "events: va_reserve $v, mem_map $m (expandable segments not recorded?)"; return 1; }
}
CHECK=check_expandable
torch_case torch_expandable expandable.py
# A matmul of that capture: its tensors are mapped virtual memory (and
# cuBLAS kernels read module globals), recreated by the extracted archive.
extract_case torch_expandable torch_expandable_extract 'gemm' 'va_reserve mem_map'
check_compiled() {
    local m
    m=$(events_with "$2" '"op":"module_load"')
    [ "$m" -ge 1 ] || { echo "no module_load: Triton's cubins not recorded"; return 1; }
}
CHECK=check_compiled
torch_case torch_compile compiled.py
# torch.cuda.graph: a whole training step captured, replayed three times.
GRAPH_LAUNCHES=3
GRAPH_AT_LEAST=1
GRAPH_KERNELS=3
GRAPH_PLAIN=1
CHECK=check_graph
torch_case torch_cuda_graph cuda_graph.py
GRAPH_AT_LEAST=0
GRAPH_PLAIN=0

# --- case: work no event records is reported, and --strict refuses it -----
# A graph with a host node, then a peer 3D copy (cudaMemcpy3DPeer): the
# graph and its host node are recorded, the driver's cuMemcpy3DPeer counted.
case=graph_unrecorded
if ! want "$case"; then
    :
elif [ "${BUILD_RC[$case]}" = 0 ]; then
    arc=$WORK/$case.hrr
    rm -rf "$arc"
    timeout "$T" "$BIN/hrr-cap" -o "$arc" --platform cuda -- "$WORK/$case" >"$LOG/$case.app.log" 2>"$LOG/$case.cap.stderr"
    rc=$?
    line=$(grep -m1 '^unrecorded : ' "$LOG/$case.cap.stderr")
    timeout "$T" "$BIN/hrr-play" "$arc" --backend cuda >"$LOG/$case.play.log" 2>&1
    play_rc=$?
    timeout "$T" "$BIN/hrr-play" "$arc" --backend cuda --strict >"$LOG/$case.strict.log" 2>&1
    strict_rc=$?
    if [ "$rc" = 0 ] && [[ "$line" == *cuMemcpy3DPeer* ]] && grep -q '^unrecorded : [1-9]' "$LOG/$case.play.log" &&
        [ "$play_rc" = 0 ] && [ "$(events_with "$arc" '"op" *: *"graph_launch"')" = 3 ] &&
        [ "$strict_rc" = 1 ] && grep -q -- '--strict refuses' "$LOG/$case.strict.log"; then
        pass "$case"
        echo "  $line"
    else
        fail "$case" "capture exit $rc, line '${line:-none}', play exit $play_rc ($(grep -m1 '^unrecorded' "$LOG/$case.play.log")), --strict exit $strict_rc (want 1)"
    fi
else
    fail "$case" "nvcc failed: $(grep -m1 -i error "$LOG/$case.build.log")"
fi

# --- case: a HIP source built for NVIDIA with Debian's HIP headers ---------
case=hip_on_nvidia
if ! want "$case"; then
    :
elif [ -d .gpu/hip-include/hip ]; then
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

# --- trust: programs of the shapes whose allocations replay missed ------------
# PyTorch's caching allocator (default and expandable segments), float cumsum
# on misaligned views, JAX, CuPy, one-rank NCCL, transformers' generate: each
# needs every device allocation at its recorded address. Each case captures
# its workload twice and compares the two captures (hrr-diff --exact, and the
# D2H results in order, whatever their seq): a program whose two captures
# differ is reported `nondeterministic` rather than its replay blamed. Then
# it replays the first capture; the case passes only when the replay ends in
# PASS, `hrr-diff --exact` of capture and replay passes, and the replay's
# `placement : P of A allocations at recorded addresses` line has P == A > 0.
# A framework that cannot be imported is a FAIL (as torch is for torch_*).
# TRUST_XFAIL_UNRECORDED=1 before a case: if its capture reports unrecorded
# calls (JAX's command buffers: graph API calls not recorded yet) and it
# fails, its line is XFAIL (counted in neither total), with the same details.
# Select them with HRR_GPU_CASES='trust_*' (or e.g. 'trust_jax*').
PYW=$ROOT/tests/workloads/python
TRUST_XFAIL_UNRECORDED=0
# TRUST_OPS=(op …) before a trust_case: ops its archive must hold (check_nccl).
TRUST_OPS=()
# trust_d2h ARCHIVE: a capture's D2H results in order (entry point, size, blob
# id), one a line, to compare two captures whose seqs may not line up.
trust_d2h() {
    python3 - "$1/events.ndjson" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        if '"d2h"' not in line and '"host_read"' not in line:
            continue
        try:
            e = json.loads(line)
        except ValueError:
            continue
        op = e.get("op")
        if (op in ("memcpy", "memcpy_rect") and e.get("dir") == "d2h") or op == "host_read":
            print(e.get("api"), e.get("size", "-"), e.get("blob", "-"))
PY
}
# manifest_events ARCHIVE: the manifest's event count.
manifest_events() { grep -o '"events" *: *[0-9]*' "$1/manifest.json" 2>/dev/null | head -n 1 | grep -o '[0-9]*$'; }
# trust_case CASE MODULE SCRIPT [ARGS...]: the steps above for
# `$PYTHON tests/workloads/python/SCRIPT ARGS...`, in the environment
# CASE_ENV (VAR=value ...); MODULE is the Python module it needs.
trust_case() {
    local case=$1 module=$2 script=$3
    shift 3
    local xfail_unrec=$TRUST_XFAIL_UNRECORDED
    TRUST_XFAIL_UNRECORDED=0
    local want_ops=("${TRUST_OPS[@]}")
    TRUST_OPS=()
    if ! want "$case"; then
        reset_case
        return 0
    fi
    local vars=(PYTHONHASHSEED=0 PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR="$WORK/inductor"
        TRITON_CACHE_DIR="$WORK/triton" "${CASE_ENV[@]}")
    local cmd=("$PYTHON" "$PYW/$script" "$@")
    reset_case
    local arc=$WORK/$case.hrr arc2=$WORK/$case.cap2.hrr rep=$WORK/$case.replay.hrr
    local out rc rc2 line n
    {
        echo "case: $case"
        echo "env: ${vars[*]}"
        echo "command: ${cmd[*]}"
    } >"$LOG/$case.env.log"

    if ! out=$(env "${vars[@]}" timeout "$T" "$PYTHON" -c "import $module" 2>&1); then
        echo "$out" >"$LOG/$case.import.log"
        fail "$case" "$PYTHON cannot import $module: $(tail -n 1 <<<"$out")"
        return 1
    fi

    # Two captures, one after the other.
    rm -rf "$arc" "$arc2" "$rep"
    env "${vars[@]}" timeout "$TT" "$BIN/hrr-cap" -o "$arc" --platform cuda -- "${cmd[@]}" \
        >"$LOG/$case.app.log" 2>"$LOG/$case.cap.stderr"
    rc=$?
    if [ "$rc" != 0 ]; then
        # Whose fault: the same command without capture tells.
        env "${vars[@]}" timeout "$TT" "${cmd[@]}" >"$LOG/$case.plain.log" 2>&1
        local prc=$?
        if [ "$prc" != 0 ]; then
            fail "$case" "the workload fails without capture too (exit $prc): $(grep -m1 -E 'WRONG|Error' "$LOG/$case.plain.log" || tail -n 1 "$LOG/$case.plain.log")"
        else
            fail "$case" "capture exit $rc (the workload alone passes): $(grep -m1 -E 'WRONG' "$LOG/$case.app.log" || tail -n 1 "$LOG/$case.cap.stderr")"
        fi
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
    if ! grep -Eq '"op" *: *"launch"' "$arc/events.ndjson"; then
        fail "$case" "no launch recorded"
        return 1
    fi
    if [ "${#want_ops[@]}" -gt 0 ]; then
        local why
        RECORDED_OPS=("${want_ops[@]}")
        if ! why=$(check_nccl "$case" "$arc"); then
            fail "$case" "$why"
            return 1
        fi
    fi
    env "${vars[@]}" timeout "$TT" "$BIN/hrr-cap" -o "$arc2" --platform cuda -- "${cmd[@]}" \
        >"$LOG/$case.app2.log" 2>"$LOG/$case.cap2.stderr"
    rc2=$?

    # Are the two captures alike?
    local det note k1 k2 e1 e2 r1 r2 first
    k1=$(grep -m1 ': checksum ' "$LOG/$case.app.log" | sed 's/.*: checksum //')
    k2=$(grep -m1 ': checksum ' "$LOG/$case.app2.log" | sed 's/.*: checksum //')
    e1=$(manifest_events "$arc")
    e2=$(manifest_events "$arc2")
    if [ "$rc2" != 0 ] || ! grep -Eq '"complete" *: *true' "$arc2/manifest.json" 2>/dev/null; then
        det=unknown
        note="unknown: the second capture failed or is incomplete (exit $rc2): $(tail -n 1 "$LOG/$case.cap2.stderr")"
    else
        timeout "$T" "$BIN/hrr-diff" "$arc" "$arc2" --exact >"$LOG/$case.capdiff.log" 2>&1
        rc=$?
        trust_d2h "$arc" >"$LOG/$case.cap1.d2h"
        trust_d2h "$arc2" >"$LOG/$case.cap2.d2h"
        r1=$(wc -l <"$LOG/$case.cap1.d2h")
        r2=$(wc -l <"$LOG/$case.cap2.d2h")
        if [ "$rc" = 0 ] && [ "$k1" = "$k2" ]; then
            det=identical
            note="identical (hrr-diff --exact cap1 cap2 PASS; $e1 / $e2 events, $r1 D2H results; checksum $k1)"
        elif [ "$k1" = "$k2" ] && cmp -s "$LOG/$case.cap1.d2h" "$LOG/$case.cap2.d2h"; then
            det=same
            note="the same $r1 D2H results in the same order and checksum $k1, but the event sequences differ ($e1 / $e2 events; hrr-diff --exact cap1 cap2 exit $rc: $(grep -m1 '^d2h' "$LOG/$case.capdiff.log"))"
        else
            det=nondeterministic
            first=$(cmp "$LOG/$case.cap1.d2h" "$LOG/$case.cap2.d2h" 2>/dev/null | grep -o 'line [0-9]*')
            note="nondeterministic: the two captures differ (D2H results $r1 / $r2${first:+, first difference at result ${first#line }}; checksums $k1 / $k2; $e1 / $e2 events; hrr-diff --exact cap1 cap2: $(grep -m1 '^d2h' "$LOG/$case.capdiff.log"))"
        fi
    fi

    # The replay of the first.
    timeout "$TT" "$BIN/hrr-play" "$arc" --backend cuda -o "$rep" --exact >"$LOG/$case.play.log" 2>&1
    rc=$?
    local verdict placement d2h problems=() p a
    verdict=$(grep -E '^(PASS|FAIL)' "$LOG/$case.play.log" | tail -n 1)
    placement=$(grep -m1 '^placement : ' "$LOG/$case.play.log")
    d2h=$(grep -m1 '^d2h : ' "$LOG/$case.play.log")
    if [ "$rc" != 0 ] || [[ "$verdict" != PASS* ]]; then
        line=$(grep -m1 -E 'fatal|error' "$LOG/$case.play.log")
        problems+=("replay exit $rc, ${verdict:-no PASS/FAIL line}${d2h:+ ($d2h)}${line:+: $line}")
    fi
    if [[ "$placement" =~ ^placement\ :\ ([0-9]+)\ of\ ([0-9]+)\  ]]; then
        p=${BASH_REMATCH[1]}
        a=${BASH_REMATCH[2]}
        if [ "$a" = 0 ] || [ "$p" != "$a" ]; then
            problems+=("placement $p of $a")
        fi
    else
        problems+=("no placement line in the replay's output")
    fi
    n=$(sed -n 's/^d2h : \([0-9]*\) pass.*/\1/p' <<<"$d2h")
    if [ -z "$n" ] || [ "$n" = 0 ]; then
        problems+=("the replay validated no D2H")
    fi
    if [ -f "$rep/manifest.json" ]; then
        timeout "$T" "$BIN/hrr-diff" "$arc" "$rep" --exact >"$LOG/$case.diff.log" 2>&1
        rc=$?
        if [ "$rc" != 0 ]; then
            problems+=("hrr-diff --exact exit $rc ($(grep -m1 -E '^d2h|error' "$LOG/$case.diff.log"))")
        fi
    else
        problems+=("no replay archive to diff")
    fi
    if [ "$rc2" != 0 ]; then
        problems+=("second capture exit $rc2: $(tail -n 1 "$LOG/$case.cap2.stderr")")
    fi

    local reason="" unrec unrec_n
    for line in "${problems[@]}"; do
        reason+="${reason:+; }$line"
    done
    unrec=$(grep -m1 '^unrecorded : ' "$LOG/$case.cap.stderr")
    unrec_n=$(sed -n 's/^unrecorded : \([0-9]*\) calls.*/\1/p' <<<"$unrec")
    # A program whose two captures differ: the replay's mismatches are told
    # apart by replaying five times (runs_explain, gpu-lib.sh).
    local runs=""
    if [ -n "$reason" ] && [ "$det" = nondeterministic ]; then
        runs_explain "$case" "$arc" && reason=""
        runs=$RUNS
    fi
    if [ -z "$reason" ]; then
        [ "$det" = nondeterministic ] && CASE_NOTE="the two captures differ${runs:+; $runs}"
        pass "$case"
        CASE_NOTE=
    elif [ "$xfail_unrec" = 1 ] && [ "${unrec_n:-0}" -gt 0 ]; then
        echo "XFAIL $case: expected while calls go unrecorded ($unrec): $([ "$det" = nondeterministic ] && echo "nondeterministic; ")$reason"
    elif [ "$det" = nondeterministic ]; then
        fail "$case" "nondeterministic (two captures differ; see below), and the replays agree on a D2H the capture does not: $reason; $runs"
    else
        fail "$case" "$reason"
    fi
    echo "  captures: $note"
    echo "  capture: ${unrec:-no unrecorded line}; second capture: $(grep -m1 '^unrecorded : ' "$LOG/$case.cap2.stderr" || echo none)"
    echo "  replay: ${placement:-no placement line}; ${d2h:-no d2h line}; $(grep -m1 '^unrecorded : ' "$LOG/$case.play.log" || echo 'no unrecorded line')"
    line=$(grep -m1 'note: placement: event' "$LOG/$case.play.log")
    [ -n "$line" ] && echo "  first allocation not placed: $line"
    grep -E ': (repeat scans differing|allocator|pool before|jax |cupy |torch |transformers |tokens )' "$LOG/$case.app.log" |
        head -n 3 | sed 's/^/  app: /'
    [ "${#problems[@]}" = 0 ]
}
trust_case trust_torch_many_allocs torch torch_many_allocs.py
CASE_ENV=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
trust_case trust_torch_many_allocs_expandable torch torch_many_allocs.py
# Random values (the reported shape: may be nondeterministic, see the
# script), then exact ones through the same kernels.
trust_case trust_cumsum torch elementwise_cumsum.py
trust_case trust_cumsum_exact torch elementwise_cumsum.py --exact
# JAX's defaults: 75 % of the memory preallocated, command buffers (CUDA
# graphs) on; then command buffers off; then allocation on demand (command
# buffers off too, so that placement is judged without graphs).
TRUST_XFAIL_UNRECORDED=1
trust_case trust_jax jax jax_program.py
CASE_ENV=(XLA_FLAGS=--xla_gpu_enable_command_buffer=)
trust_case trust_jax_nocmdbuf jax jax_program.py
CASE_ENV=(XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=)
trust_case trust_jax_noprealloc jax jax_program.py
trust_case trust_cupy cupy cupy_program.py
# Through the collective path: the archive must hold NCCL's calls
# (TRUST_OPS, checked as check_nccl does) and none of NCCL's own kernels.
TRUST_OPS=(nccl_comm_init nccl_coll)
trust_case trust_nccl1 torch.distributed nccl_one_rank.py
CASE_ENV=(NCCL_CUMEM_ENABLE=0)
TRUST_OPS=(nccl_comm_init nccl_coll)
trust_case trust_nccl1_nocumem torch.distributed nccl_one_rank.py
trust_case trust_generate transformers transformers_generate.py

# --- case: a job of two processes sharing the one GPU ---------------------
# job_launcher makes no CUDA call and starts two workers (RANK 0 and 1, no
# NCCL): the capture must give a job file of two ranked process archives,
# replayed as one job (both processes at once) and diffed as one.
if want job_two_processes; then
    case=job_two_processes
    arc=$WORK/$case.hrr rep=$WORK/$case.rep.hrr
    rm -rf "$arc" "$rep" "$WORK/$case"-*.hrr "$WORK/$case".*job.json "$WORK/$case.rep"-*.hrr
    if [ "${BUILD_RC[job_launcher]:-1}" != 0 ]; then
        fail "$case" "build failed: $(grep -m1 error "$LOG/job_launcher.build.log")"
    elif ! timeout "$T" "$BIN/hrr-cap" -o "$arc" --platform cuda -- "$WORK/job_launcher" \
        >"$LOG/$case.app.log" 2>"$LOG/$case.cap.stderr"; then
        fail "$case" "capture failed: $(tail -n 1 "$LOG/$case.cap.stderr")"
    elif ! grep -q 'hrr-cap: job : 2 processes (rank 0, rank 1)' "$LOG/$case.cap.stderr"; then
        fail "$case" "no job of ranks 0 and 1: $(grep -m1 'hrr-cap: ' "$LOG/$case.cap.stderr")"
    elif ! timeout "$T" "$BIN/hrr-play" "$arc" -o "$rep" >"$LOG/$case.play.log" 2>"$LOG/$case.play.stderr" ||
        [ "$(tail -n 1 "$LOG/$case.play.log")" != PASS ] ||
        [ "$(grep -c '^process : .*: PASS$' "$LOG/$case.play.log")" != 2 ]; then
        fail "$case" "job replay: $(tail -n 1 "$LOG/$case.play.log") $(grep -m1 -E 'fatal|error' "$LOG/$case.play.stderr")"
    elif ! timeout "$T" "$BIN/hrr-diff" "$arc" "$rep" >"$LOG/$case.diff.log" 2>&1; then
        fail "$case" "job diff: $(tail -n 1 "$LOG/$case.diff.log")"
    else
        grep '^process : ' "$LOG/$case.play.log" | sed 's/^/  /'
        pass "$case"
    fi
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

NO_LAUNCH=1
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
