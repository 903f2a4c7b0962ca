# shellcheck shell=bash
# Variables set here and read by the sourcing script look unused to shellcheck:
# shellcheck disable=SC2034
# Shared by the GPU passes (scripts/gpu-pass.sh, scripts/third-party-pass.sh);
# sourced, never run. It holds the report and log plumbing and the pipeline
# every case goes through: plain run, capture, (sidecar), play, diff.
#
# The sourcing script sets, before calling anything here:
#   BIN    the hrr binaries and libhrr_intercept.so
#   TOP    the output directory (the report and logs/), LOG=$TOP/logs
#   WORK   scratch directory for executables and archives
#   T      the default timeout of a step, in seconds
#   SELECT space-separated case names or globs; empty selects every case
# and reads passed, failed, skipped (the counts) at its end.

passed=0
failed=0
skipped=0
# Archives keep plain events.ndjson, which the checks grep (the GPU machine
# may have no zstd); gpu-pass.sh's saxpy_compressed takes the default form.
export HRR_EVENTS=plain

# gpu_out_setup REPORT: creates $LOG and $WORK, copies everything printed
# from here on to $TOP/REPORT, and at exit packs logs/ into logs.tar.gz when
# $OUT is set (collectors fetch few files).
gpu_out_setup() {
    mkdir -p "$LOG" "$WORK"
    REPORT=$1
    exec > >(tee "$TOP/$REPORT") 2>&1
    TEE_PID=$!
    trap pack_logs EXIT
}
pack_logs() {
    if [ -n "${OUT:-}" ]; then
        tar -czf "$TOP/logs.tar.gz" -C "$TOP" logs && rm -rf "$LOG"
    fi
    # Let tee finish writing the report before the collector reads it.
    exec >&- 2>&-
    wait "$TEE_PID" 2>/dev/null
}

# gpu_bins_missing: true (and names it on stderr) when an hrr binary is missing.
gpu_bins_missing() {
    local f
    for f in hrr-cap hrr-play hrr-sidecar hrr-diff libhrr_intercept.so; do
        if [ ! -e "$BIN/$f" ]; then
            echo "$(basename "$0"): $BIN/$f is missing; run scripts/gpu-prepare.sh where the binaries were built" >&2
            return 0
        fi
    done
    return 1
}

# want CASE: whether SELECT selects it. A pattern starting with ! excludes
# what it matches ("!trust_*": every case but those); with only exclusions,
# everything else is selected.
want() {
    [ -z "${SELECT:-}" ] && return 0
    local pat picked=1 includes=0
    set -f # the patterns are globs on case names, not on file names
    for pat in $SELECT; do
        if [[ $pat == '!'* ]]; then
            # shellcheck disable=SC2053
            [[ $1 == ${pat#!} ]] && { set +f; return 1; }
        else
            includes=1
            # shellcheck disable=SC2053
            [[ $1 == $pat ]] && picked=0
        fi
    done
    set +f
    [ "$includes" = 0 ] && return 0
    return "$picked"
}
# CASE_NOTE, when set, follows the case's PASS or FAIL line in brackets.
pass() { echo "PASS $1${CASE_NOTE:+ [$CASE_NOTE]}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2${CASE_NOTE:+ [$CASE_NOTE]}"; failed=$((failed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }
now_ns() { date +%s%N; }
ms_between() { echo $((($2 - $1) / 1000000)); }

# --- nondeterministic programs --------------------------------------------
# runs_explain CASE ARCHIVE: the archive of a program whose two captures
# differ, replayed five times (hrr-play --runs 5, log $LOG/CASE.runs.log).
# Returns 0 when every D2H either matches or differs among the replays
# themselves, with every allocation placed: the mismatches are the
# program's own; a D2H the replays agree on and the capture does not stays
# a failure. Sets RUNS to a line saying what the replays found.
runs_explain() {
    local case=$1 arc=$2 rc
    timeout "$T" "$BIN/hrr-play" "$arc" --backend cuda --runs 5 >"$LOG/$case.runs.log" 2>&1
    rc=$?
    RUNS="hrr-play --runs 5: exit $rc, $(grep -m1 '^d2h' "$LOG/$case.runs.log" || tail -n 1 "$LOG/$case.runs.log"); $(grep -m1 '^placement' "$LOG/$case.runs.log")"
    [ "$rc" = 0 ] && grep -q '^PASS' "$LOG/$case.runs.log" &&
        grep -Eq '^d2h : [1-9][0-9]* pass .* 0 fail, [1-9][0-9]* nondeterministic' "$LOG/$case.runs.log" &&
        [[ $(grep -m1 '^placement' "$LOG/$case.runs.log") =~ ^placement\ :\ ([0-9]+)\ of\ ([0-9]+) ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" != 0 ]
}

# --- the pipeline, one workload -------------------------------------------
# run_case WORKLOAD CASE [ARGS...]: plain run, capture, (sidecar), play, diff
# of the built workload $WORK/WORKLOAD. run_exe CASE EXE [ARGS...]: the same
# for any command. Per-case settings (reset after each case):
#   CASE_ENV=(VAR=value ...)  environment of every run of the case
#   COMPARE=(--atol A --rtol R)  tolerance for hrr-play and hrr-diff
#   SIDECAR=1                 feed the app's HRR_SEGMENT lines to hrr-sidecar
#   NO_LAUNCH=1               the case launches nothing (no launch check)
#   CAP_ARGS=(--window SPEC)  more hrr-cap options (its capture only)
#   PLAIN_DONE=1              the plain run was made already (torch cases)
#   STEP_T=seconds            the timeout of each step
#   CHECK=function            more checks after PASS-worthy results: prints
#                             a reason and returns 1 to fail the case
#   CAP_CHECK=function        called (in this shell, so that it can set
#                             CASE_NOTE) as CAP_CHECK CASE RC right after the
#                             capture, RC its exit status, before any other
#                             check of it: sets CAP_WHY and returns 1 to fail
#                             the case
#   PLAY_FAIL=function        called (in this shell) as PLAY_FAIL CASE
#                             ARCHIVE CMD... when hrr-play fails: may set
#                             CASE_NOTE, and returns 0 when the failure is
#                             explained as the program's own nondeterminism
#                             (the case then passes with that note)
#   CASE_NOTE=text            appended to the case's PASS or FAIL line
# Sets CAP_WALL_MS, PLAIN_WALL_MS, PLAY_WALL_MS for the speed section.
reset_case() {
    CASE_ENV=(); COMPARE=(); CAP_ARGS=(); SIDECAR=0; NO_LAUNCH=0; PLAIN_DONE=0; STEP_T=$T; CHECK=; CAP_CHECK=; PLAY_FAIL=; CASE_NOTE=
}
reset_case
run_case() {
    local w=$1 case=$2
    shift 2
    if ! want "$case"; then
        reset_case
        return 1
    fi
    if [ "${BUILD_RC[$w]}" != 0 ]; then
        fail "$case" "nvcc failed: $(grep -m1 -i error "$LOG/$w.build.log")"
        reset_case
        return 1
    fi
    run_exe "$case" "$WORK/$w" "$@"
}
run_exe() {
    local case=$1
    shift
    local r
    if ! want "$case"; then
        reset_case
        return 1
    fi
    run_exe_steps "$case" "$@"
    r=$?
    reset_case
    return $r
}
run_exe_steps() {
    local case=$1
    shift
    local arc=$WORK/$case.hrr rep=$WORK/$case.replay.hrr rc t0 t1
    CAP_WALL_MS="" PLAIN_WALL_MS="" PLAY_WALL_MS=""
    if [ "$PLAIN_DONE" != 1 ]; then
        t0=$(now_ns)
        env "${CASE_ENV[@]}" timeout "$STEP_T" "$@" >"$LOG/$case.plain.log" 2>&1
        rc=$?
        t1=$(now_ns)
        PLAIN_WALL_MS=$(ms_between "$t0" "$t1")
        if [ "$rc" != 0 ]; then
            fail "$case" "the workload fails without capture (exit $rc): $(tail -n 1 "$LOG/$case.plain.log")"
            return 1
        fi
    fi

    rm -rf "$arc" "$rep"
    t0=$(now_ns)
    env "${CASE_ENV[@]}" timeout "$STEP_T" "$BIN/hrr-cap" -o "$arc" --platform cuda "${CAP_ARGS[@]}" -- "$@" 2>"$LOG/$case.cap.stderr" |
        tee "$LOG/$case.app.log" >/dev/null
    rc=${PIPESTATUS[0]}
    t1=$(now_ns)
    CAP_WALL_MS=$(ms_between "$t0" "$t1")
    if [ -n "$CAP_CHECK" ]; then
        CAP_WHY=
        if ! "$CAP_CHECK" "$case" "$rc"; then
            fail "$case" "$CAP_WHY"
            return 1
        fi
    fi
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
    if [ "$NO_LAUNCH" != 1 ] && ! grep -Eq '"op" *: *"(launch|graph_launch)"' "$arc/events.ndjson"; then
        fail "$case" "no launch recorded"
        return 1
    fi

    if [ "$SIDECAR" = 1 ]; then
        grep HRR_SEGMENT "$LOG/$case.app.log" | timeout "$T" "$BIN/hrr-sidecar" --archive "$arc" \
            >"$LOG/$case.sidecar.log" 2>&1
        rc=$?
        if [ "$rc" != 0 ]; then
            fail "$case" "hrr-sidecar exit $rc: $(tail -n 1 "$LOG/$case.sidecar.log")"
            return 1
        fi
    fi

    t0=$(now_ns)
    timeout "$STEP_T" "$BIN/hrr-play" "$arc" --backend cuda -o "$rep" "${COMPARE[@]}" >"$LOG/$case.play.log" 2>&1
    rc=$?
    t1=$(now_ns)
    PLAY_WALL_MS=$(ms_between "$t0" "$t1")
    if [ "$rc" != 0 ]; then
        if [ -n "$PLAY_FAIL" ] && "$PLAY_FAIL" "$case" "$arc" "$@"; then
            pass "$case"
            return 0
        fi
        fail "$case" "hrr-play exit $rc: $(grep -m1 -E 'fatal|error|FAIL' "$LOG/$case.play.log" || tail -n 1 "$LOG/$case.play.log")"
        return 1
    fi
    local d2h
    d2h=$(sed -n 's/^d2h *: *\([0-9]*\) pass.*/\1/p' "$LOG/$case.play.log" | head -n 1)
    if [ -z "$d2h" ] || [ "$d2h" = 0 ]; then
        fail "$case" "replay validated no D2H ($(grep -m1 '^d2h' "$LOG/$case.play.log"))"
        return 1
    fi
    if [ "$SIDECAR" = 1 ] && ! grep -Eq '^region segs *: *[1-9]' "$LOG/$case.play.log"; then
        fail "$case" "the segment was not materialised ($(grep -m1 '^region segs' "$LOG/$case.play.log"))"
        return 1
    fi

    timeout "$T" "$BIN/hrr-diff" "$arc" "$rep" "${COMPARE[@]}" >"$LOG/$case.diff.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "$case" "hrr-diff exit $rc: $(tail -n 1 "$LOG/$case.diff.log")"
        return 1
    fi
    if [ -n "$CHECK" ]; then
        local why
        if ! why=$("$CHECK" "$case" "$arc"); then
            fail "$case" "$why"
            return 1
        fi
    fi
    pass "$case"
}

# events_with CASE_ARCHIVE PATTERN: how many event lines match (grep -E).
events_with() { grep -Ec "$2" "$1/events.ndjson" 2>/dev/null; }
