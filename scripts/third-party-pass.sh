#!/usr/bin/env bash
# Third-party programs through the recorder: NVIDIA's cuda-samples, built as
# their authors build them and run as a user runs them, on an NVIDIA GPU with
# CUDA 13 (nvcc, driver, cuBLAS, cuSPARSE). Run from the repository root with
# .gpu/ (scripts/gpu-prepare.sh) and .third-party/
# (scripts/third-party-prepare.sh) in place:
#
#   scripts/third-party-pass.sh [SAMPLE...]     # all of scripts/cuda-samples.list
#   scripts/third-party-pass.sh --list          # the samples and nvcc lines; runs nothing
#
# Each sample: built with nvcc (scripts/cuda-samples.list: sources, flags, a
# fatbin it loads at run time), run once without the recorder (its exit
# status and the verdict it prints, if any), then the pipeline of
# scripts/gpu-pass.sh (scripts/gpu-lib.sh): hrr-cap → hrr-play → hrr-diff.
# A capture must not change what the program sees: its exit status and its
# stdout must be those of the plain run, after masking the numbers on lines
# that print timings or rates. Masked, on every sample, the lines matching
# (case-insensitive) the extended regular expression MASK below, and on a
# sample the lines matching its list entry's mask; nothing else.
#
# Prints one line per sample:
#   PASS NAME [exit 0, "VERDICT"; unrecorded : N calls (...)]
#   FAIL NAME: REASON [...]   the capture changed the exit status or the
#                             output, the archive is incomplete, hrr-play or
#                             hrr-diff failed, ...
#   SKIP NAME: REASON         not prepared, nvcc failed, or the program fails
#                             without the recorder
# then exactly `N passed, M failed, K skipped`; exits 1 when M > 0. When the
# replay of a capture fails, the sample is captured a second time and the two
# captures are compared with hrr-diff, which tells a sample that computes
# differently on each run from a replay fault; such a sample is replayed five
# times (hrr-play --runs 5) and passes, marked nondeterministic, when every
# D2H matches or differs among the replays themselves (nondet_check below).
#
# Logs go to $OUT when set, else ./third-party-out/: the report as
# third-party-pass.txt, every step's log under logs/ (NAME.build.log with the
# nvcc lines, NAME.plain.stdout/.stderr, NAME.app.log (stdout under capture),
# NAME.cap.stderr, NAME.{plain,app}.masked and NAME.stdout.diff,
# NAME.play.log, NAME.diff.log), packed into logs.tar.gz when $OUT is set.
# Executables and archives go to $HRR_GPU_WORK (default a fresh /tmp dir).
#
# Environment: NVCC (default nvcc), HRR_GPU_ARCH (default sm_90),
# HRR_GPU_BIN (default .gpu/bin), HRR_GPU_WORK, HRR_CUDA_SAMPLES (default
# .third-party/cuda-samples), HRR_SAMPLES (names or globs, as the arguments),
# HRR_SAMPLE_TIMEOUT (seconds per run of a sample, default 120),
# HRR_BUILD_TIMEOUT (seconds per nvcc, default 600), HRR_BUILD_JOBS (nvcc
# runs at once, default nproc), HRR_SAMPLES_RECHECK=0
# (no second capture), HRR_SAMPLES_KEEP=1 (keep the archives of samples that
# pass too; by default only failures' stay in the scratch directory).
set -u -o pipefail

ROOT=$(pwd)
LIST=$ROOT/scripts/cuda-samples.list
NVCC=${NVCC:-nvcc}
ARCH=${HRR_GPU_ARCH:-sm_90}
T=${HRR_SAMPLE_TIMEOUT:-120}
BT=${HRR_BUILD_TIMEOUT:-600}
RECHECK=${HRR_SAMPLES_RECHECK:-1}
KEEP=${HRR_SAMPLES_KEEP:-0}
JOBS=${HRR_BUILD_JOBS:-$(nproc)}
SAMPLES=${HRR_CUDA_SAMPLES:-$ROOT/.third-party/cuda-samples}
# Every sample's timing and rate lines.
MASK='time|msec|[0-9] ?ms\b|\(ms\)|GB/s|flop|Mpixels/sec|bandwidth|throughput|speedup|elapsed'
# A line of a sample's own verdict.
VERDICT='PASS|[Pp]assed|^Success$|returned OK'

list_only=0
SELECT=${HRR_SAMPLES:-}
args_sel=""
for a in "$@"; do
    case "$a" in
        --list) list_only=1 ;;
        -h | --help) sed -n '2,47p' "$0" | cut -c3-; exit 0 ;;
        -*) echo "third-party-pass: unknown option $a (see --help)" >&2; exit 2 ;;
        *) args_sel="$args_sel $a" ;;
    esac
done
[ -n "$args_sel" ] && SELECT=$args_sel
# Functions and counters only; BIN, TOP, LOG and WORK are set before use.
# shellcheck source=scripts/gpu-lib.sh
. "$ROOT/scripts/gpu-lib.sh"

# --- the list -------------------------------------------------------------
NAMES=()
declare -A DIR SRCS FLAGS FATBIN ARGS SMASK BUILD_RC
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }
n=0
while IFS= read -r line; do
    n=$((n + 1))
    [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
    IFS='|' read -r name dir srcs flags fatbin args mask <<<"$line"
    name=$(trim "$name")
    bars=${line//[^|]/}
    if [ "${#bars}" -lt 6 ] || [[ ! "$name" =~ ^[A-Za-z0-9_]+$ ]] || [ -z "$(trim "$dir")" ] ||
        [ -z "$(trim "$srcs")" ]; then
        echo "third-party-pass: $LIST line $n: want 7 fields split by |, a name of letters, digits and _, a directory and sources: $line" >&2
        exit 2
    fi
    if [ -n "${DIR[$name]:-}" ]; then
        echo "third-party-pass: $LIST line $n: $name is listed twice" >&2
        exit 2
    fi
    fb=$(trim "$fatbin")
    if [ -n "$fb" ] && [[ ! "$fb" =~ ^[^[:space:]]+\.cu[[:space:]]+[^[:space:]]+\.fatbin$ ]]; then
        echo "third-party-pass: $LIST line $n: fatbin must be 'KERNEL.cu OUTPUT.fatbin', got '$fb'" >&2
        exit 2
    fi
    NAMES+=("$name")
    DIR[$name]=$(trim "$dir")
    SRCS[$name]=$(trim "$srcs")
    FLAGS[$name]=$(trim "$flags")
    FATBIN[$name]=$fb
    ARGS[$name]=$(trim "$args")
    SMASK[$name]=$(trim "$mask")
done <"$LIST"

# nvcc_lines NAME: sets FATBIN_CMD (empty when none) and EXE_CMD, the
# sample's nvcc command lines, building into $WORK/NAME/.
nvcc_lines() {
    local name=$1 d=$WORK/$1 src=$SAMPLES/Samples/${DIR[$1]} s kernel out
    local -a srcs flags
    read -ra srcs <<<"${SRCS[$name]}"
    read -ra flags <<<"${FLAGS[$name]}"
    FATBIN_CMD=()
    if [ -n "${FATBIN[$name]}" ]; then
        read -r kernel out <<<"${FATBIN[$name]}"
        FATBIN_CMD=("$NVCC" "-gencode=arch=compute_${ARCH#sm_},code=$ARCH" -I"$SAMPLES/Common"
            -fatbin -o "$d/$out" "$src/$kernel")
    fi
    EXE_CMD=("$NVCC" -arch="$ARCH" -std=c++17 -lineinfo -I"$SAMPLES/Common" -o "$d/$name")
    for s in "${srcs[@]}"; do EXE_CMD+=("$src/$s"); done
    EXE_CMD+=("${flags[@]}")
}

if [ "$list_only" = 1 ]; then
    # shellcheck disable=SC2016
    WORK='$WORK'
    SAMPLES=${SAMPLES#"$ROOT/"}
    for name in "${NAMES[@]}"; do
        want "$name" || continue
        nvcc_lines "$name"
        echo "$name (Samples/${DIR[$name]})${ARGS[$name]:+ args: ${ARGS[$name]}}${SMASK[$name]:+ mask: ${SMASK[$name]}}"
        [ "${#FATBIN_CMD[@]}" = 0 ] || echo "  ${FATBIN_CMD[*]}"
        echo "  ${EXE_CMD[*]}"
    done
    exit 0
fi

BIN=${HRR_GPU_BIN:-$ROOT/.gpu/bin}
TOP=${OUT:-$ROOT/third-party-out}
WORK=${HRR_GPU_WORK:-$(mktemp -d /tmp/hrr-samples.XXXXXX)}
# Samples run in their own directories: every path absolute.
mkdir -p "$TOP" "$WORK"
TOP=$(cd "$TOP" && pwd)
WORK=$(cd "$WORK" && pwd)
case "$BIN" in /*) ;; *) BIN=$ROOT/$BIN ;; esac
case "$SAMPLES" in /*) ;; *) SAMPLES=$ROOT/$SAMPLES ;; esac
LOG=$TOP/logs
gpu_out_setup third-party-pass.txt

# A selection that names no sample is a mistake, not an empty pass.
if [ -n "$SELECT" ]; then
    for pat in $SELECT; do
        hit=0
        for name in "${NAMES[@]}"; do
            # shellcheck disable=SC2053
            [[ $name == $pat ]] && hit=1
        done
        if [ "$hit" = 0 ]; then
            echo "third-party-pass: no sample of $LIST matches '$pat'" >&2
            echo "0 passed, 1 failed, 0 skipped"
            exit 1
        fi
    done
fi

# --- environment ----------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n) $(uname -r)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    "$NVCC" --version 2>&1 | tail -n 2 | sed 's/^/nvcc: /'
    [ -f .gpu/MANIFEST ] && sed 's/^/manifest: /' .gpu/MANIFEST
    sed 's/^/cuda-samples: /' "$SAMPLES/REVISION" 2>/dev/null || echo "cuda-samples: $SAMPLES/REVISION missing"
} | tee "$LOG/environment.txt"

if gpu_bins_missing; then
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
if [ ! -f "$SAMPLES/Common/helper_cuda.h" ]; then
    echo "third-party-pass: $SAMPLES/Common is missing; run scripts/third-party-prepare.sh where there is network (or --from a clone)" >&2
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi

# --- build (in parallel) --------------------------------------------------
# build_one NAME: the sample's directory (its data/ files, the fatbin, the
# executable); the log starts with the nvcc lines.
build_one() {
    local name=$1 d=$WORK/$1 src=$SAMPLES/Samples/${DIR[$1]}
    rm -rf "$d"
    mkdir -p "$d"
    # CMake copies a sample's data files next to its executable.
    [ ! -d "$src/data" ] || cp -R "$src/data/." "$d/"
    nvcc_lines "$name"
    if [ "${#FATBIN_CMD[@]}" != 0 ]; then
        echo "+ ${FATBIN_CMD[*]}"
        timeout "$BT" "${FATBIN_CMD[@]}" || return
    fi
    echo "+ ${EXE_CMD[*]}"
    timeout "$BT" "${EXE_CMD[@]}"
}
built=()
pids=()
for name in "${NAMES[@]}"; do
    want "$name" || continue
    if [ ! -d "$SAMPLES/Samples/${DIR[$name]}" ]; then
        BUILD_RC[$name]=absent
        continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
    { build_one "$name"; echo $? >"$WORK/$name.build.rc"; } >"$LOG/$name.build.log" 2>&1 &
    built+=("$name")
    pids+=($!)
done
# Not a bare wait: that would wait for the report's tee too.
for pid in "${pids[@]}"; do wait "$pid"; done
for name in "${built[@]}"; do
    BUILD_RC[$name]=$(cat "$WORK/$name.build.rc" 2>/dev/null || echo lost)
done

# --- each sample: plain run, then the pipeline ----------------------------
# mask_stdout FILE SAMPLE_MASK: FILE with the numbers masked on the lines
# MASK or SAMPLE_MASK match.
mask_stdout() {
    local re=$MASK
    [ -z "$2" ] || re="$re|$2"
    # % delimits the address: the expressions hold / but never %.
    sed -E "\\%$re%I s/-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?/#/g" "$1"
}
# The capture hook (scripts/gpu-lib.sh): the note, and the capture's exit
# status and masked stdout against the plain run's.
cap_check() {
    local case=$1 rc=$2 unrec first last
    unrec=$(grep -m1 '^unrecorded : ' "$LOG/$case.cap.stderr")
    local verdict="no verdict printed"
    [ -z "$VERDICT_LINE" ] || verdict="\"$VERDICT_LINE\""
    CASE_NOTE="exit $PLAIN_RC, $verdict; ${unrec:-no unrecorded line from hrr-cap}"
    if [ "$rc" != "$PLAIN_RC" ]; then
        # The last words of the program or of hrr-cap, not hrr-cap's summary.
        last=$({ cat "$LOG/$case.app.log"; grep -v -E '^hrr-cap: [0-9]+ events, |^unrecorded : ' "$LOG/$case.cap.stderr"; } |
            grep -v '^[[:space:]]*$' | tail -n 1)
        CAP_WHY="capture changed the exit status: $PLAIN_RC without the recorder, $rc with it${last:+: $last}"
        return 1
    fi
    mask_stdout "$LOG/$case.plain.stdout" "${SMASK[$case]}" >"$LOG/$case.plain.masked"
    mask_stdout "$LOG/$case.app.log" "${SMASK[$case]}" >"$LOG/$case.app.masked"
    if ! diff "$LOG/$case.plain.masked" "$LOG/$case.app.masked" >"$LOG/$case.stdout.diff"; then
        first=$(grep -m2 '^[<>]' "$LOG/$case.stdout.diff" | paste -sd' ' -)
        CAP_WHY="capture changed the app's output ($(grep -c '^[<>]' "$LOG/$case.stdout.diff") lines differ, < without, > with the recorder): $first"
        return 1
    fi
}
# nondet_check NAME ARCHIVE CMD...: hrr-play failed on ARCHIVE. A second
# capture compared with the first by hrr-diff tells a sample that computes
# differently on each run from a replay fault; such a sample's failure is
# its own when runs_explain (gpu-lib.sh, as gpu-pass.sh's trust cases) says
# so. Adds what it found to CASE_NOTE; returns 0 in that case alone.
nondet_check() {
    local case=$1 arc=$2 rc
    shift 2
    rm -rf "$WORK/$case.2.hrr"
    timeout "$T" "$BIN/hrr-cap" -o "$WORK/$case.2.hrr" --platform cuda -- "$@" \
        >"$LOG/$case.app2.log" 2>"$LOG/$case.cap2.stderr"
    rc=$?
    if [ "$rc" != 0 ]; then
        CASE_NOTE+="; a second capture failed (exit $rc): $(tail -n 1 "$LOG/$case.cap2.stderr")"
        return 1
    fi
    timeout "$T" "$BIN/hrr-diff" "$arc" "$WORK/$case.2.hrr" >"$LOG/$case.recheck.log" 2>&1
    rc=$?
    rm -rf "$WORK/$case.2.hrr"
    if [ "$rc" = 0 ]; then
        CASE_NOTE+="; a second capture agrees with the first: the program's results are the same from run to run"
        return 1
    fi
    runs_explain "$case" "$arc"
    rc=$?
    CASE_NOTE+="; nondeterministic: a second capture differs from the first; $RUNS"
    return $rc
}
run_sample() {
    local name=$1 d=$WORK/$1 rc f
    local -a args
    read -ra args <<<"${ARGS[$name]}"
    case "${BUILD_RC[$name]:-}" in
        0) ;;
        absent) skip "$name" "Samples/${DIR[$name]} is not in $SAMPLES (run scripts/third-party-prepare.sh)"; return ;;
        124) skip "$name" "nvcc timed out after ${BT}s"; return ;;
        *) skip "$name" "nvcc failed (exit ${BUILD_RC[$name]}): $(grep -m1 -E 'error|fatal' "$LOG/$name.build.log" || tail -n 1 "$LOG/$name.build.log")"; return ;;
    esac
    for f in plain.stdout plain.stderr app.log cap.stderr play.log diff.log; do rm -f "$LOG/$name.$f"; done
    cd "$d" || { skip "$name" "no directory $d"; return; }
    timeout "$T" "./$name" "${args[@]}" >"$LOG/$name.plain.stdout" 2>"$LOG/$name.plain.stderr"
    PLAIN_RC=$?
    if [ "$PLAIN_RC" != 0 ]; then
        local why="exit $PLAIN_RC"
        [ "$PLAIN_RC" = 2 ] && why="exit 2, the samples' EXIT_WAIVED"
        [ "$PLAIN_RC" = 124 ] && why="timed out after ${T}s"
        skip "$name" "the program fails without the recorder ($why): $(cat "$LOG/$name.plain.stdout" "$LOG/$name.plain.stderr" | grep -v '^\s*$' | tail -n 1)"
        cd "$ROOT" || exit 1
        return
    fi
    VERDICT_LINE=$(grep -E "$VERDICT" "$LOG/$name.plain.stdout" | tail -n 1 | cut -c1-80)
    PLAIN_DONE=1
    CAP_CHECK=cap_check
    [ "$RECHECK" = 1 ] && PLAY_FAIL=nondet_check
    run_exe "$name" "./$name" "${args[@]}"
    rc=$?
    # Streaming samples capture gigabytes: keep the archives of failures only.
    [ "$rc" != 0 ] || [ "$KEEP" = 1 ] || rm -rf "$WORK/$name.hrr" "$WORK/$name.replay.hrr"
    cd "$ROOT" || exit 1
}

for name in "${NAMES[@]}"; do
    want "$name" || continue
    run_sample "$name"
done

echo "logs: $LOG"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
