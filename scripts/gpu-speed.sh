#!/usr/bin/env bash
# The GPU speed targets (docs/PERFORMANCE.md, H200 section), measured with repetition on the GPU machine, from
# the repository root with .gpu/ in place (scripts/gpu-prepare.sh):
#
#   scripts/gpu-speed.sh [ROUNDS]        (default 9)
#
# 1. Launches: the 100k-launch loop plain and under hrr-cap, in alternating
#    order (odd rounds plain first, even rounds captured first, so drift of
#    the machine cancels), then that round's archive replayed, with the
#    launch thread and without it (--no-launch-thread), alternating which
#    goes first. Capture
#    overhead is the median of the per-round ratios captured/plain; the
#    plain loop alone moves by ±10 % between runs on a VM.
# 2. Copies: 256 MiB pinned H2D/D2H plain (the app's own GB/s, 4 copies
#    after a warm-up), captured once, replayed every round with pinned
#    landing (default) and with --pinned-cache 0 (copies from blob files);
#    replay bandwidth = bytes / time in the device calls (`copies` in the
#    JSON summary), all 5+5 copies. Then D2H of new content each copy
#    (`launch_loop bwnew`: a kernel changes a word before each copy, so the
#    capture cannot find the result in its archive), plain and captured;
#    HRR_DEVICE_HASH=off gives the host hash's figures for comparison.
# 3. Training: tests/workloads/torch/train.py for HRR_TRAIN_STEPS (default
#    200) steps, plain and under hrr-cap in alternating order, then that
#    round's archive replayed. Overhead is the median per-round ratio of the
#    training loop's own wall time (`train_loop_ms`, GPU work included), of
#    its first ten steps (first launches: code objects recorded) and of the
#    rest, and of the whole process; replay is compared with the plain
#    process (what a user runs instead of the application).
# 4. Graphs: tests/workloads/cuda/graph_speed.cu, a captured graph of 128
#    tiny kernels launched 1000 times, plain and under hrr-cap in
#    alternating order, then that round's archive replayed with the graph
#    API and with --no-graphs (node by node). Capture overhead is the median
#    per-round ratio of the launch loop's own time (`graph_loop_ms`) and of
#    the whole process; replay is compared with the plain process.
# 5. Profile (not in the default parts): tests/workloads/torch/step_profile.py
#    plain and under hrr-cap in alternating order: the median host time of
#    each phase of a training step and the CPU time per operator, to find
#    where the recorder's cost lands.
# 6. Control (not in the default parts): train.py for HRR_CONTROL_STEPS
#    (default 600) steps three ways in rotating order: plain, with the
#    capture library preloaded but HRR_OUT unset (every call forwarded,
#    nothing recorded), and under hrr-cap. Separates what being interposed
#    costs from what recording costs; the longer steady window (steps 11 to
#    the end) narrows the spread of single runs. Each run's main-thread CPU
#    time and context switches over those steps tell more code run on the
#    thread from the CPU taken away from it.
# 7. Paired: tests/workloads/cuda/launch_paired.cu, plain and under hrr-cap,
#    each round: blocks of 500 launches alternate between the linked
#    cuLaunchKernel (recorded under hrr-cap) and the driver's own function
#    (found in libcuda's symbol table: never recorded), in one process, so
#    the recording cost per launch is measured without the spread between
#    processes; plain, the same difference is the probe's noise. Also the
#    driver's cost of `extra` (hrr-play's form) against kernelParams. And a
#    runtime launch (`<<<>>>`, what the 100k-launch loop makes) against the
#    direct driver call: that difference under hrr-cap less the plain
#    run's in the same round is what recording costs a runtime launch
#    (the runtime-layer recording and the driver wrapper it passes through),
#    as a share of the plain runtime launch.
#    HRR_PAIRED_BUILDS="A=DIR B=DIR" compares builds (directories holding
#    hrr-cap and libhrr_intercept.so) in rotating order, round by round.
# 8. Training A/B (not in the default parts): train.py plain and under each
#    build of HRR_TRAIN_BUILDS="NAME=DIR ..." in rotating order, round by
#    round; per build, the median per-round ratio to plain of the loop, its
#    first ten steps, the rest, and the main thread's CPU over the rest.
#    scripts/gpu-variant.sh NAME REV builds a revision's hrr-cap and capture
#    library into .gpu/variants/NAME for this and for part 7's builds.
# 9. Window (not in the default parts): train.py plain, under a full
#    capture and under --window profiler with no window ever opened (the
#    recorder's bookkeeping alone), in rotating order: the steady steps'
#    ratios to plain.
# 10. Snapshot (not in the default parts): tests/workloads/cuda/
#    window_snapshot.cu with HRR_SNAPSHOT_GIB (default "1 4") GiB of live
#    device memory: cudaProfilerStart's time plain and under --window
#    profiler (where the state is snapshotted), per GiB of state, and the
#    window's replay.
# On the H200 VM one process runs everything (the CUDA launch itself and
# the recorder's code alike) up to 1.4x slower than the next, which is most
# of the round-to-round spread of the ratios. HRR_SPEED_WRAP prefixes every
# program of part 1 with a command to test causes, e.g.
# "taskset -c 2-5" (placement) or "setarch x86_64 -R" (address layout).
# HRR_SPEED_PARTS names the parts to run (default "launches paired copies train graphs"); HRR_SPEED_TMP names where the
# archives go (default /tmp). HRR_SPEED_KEEP names a folder where part
# trainab copies each run's output (ab_ROUND_NAME.log).
# Prints one line per round and a summary; writes nothing else.
set -euo pipefail
ROUNDS=${1:-9}
read -r -a PIN <<<"${HRR_SPEED_WRAP:-}"
[ ${#PIN[@]} -gt 0 ] && echo "every launch-loop run under: ${PIN[*]}"
BIN=${HRR_GPU_BIN:-.gpu/bin}
W=$(mktemp -d "${HRR_SPEED_TMP:-/tmp}/hrr-speed.XXXXXX")
trap 'rm -rf "$W"' EXIT
${NVCC:-nvcc} -cudart shared -arch=${HRR_GPU_ARCH:-sm_90} -O2 -o "$W/ll" tests/workloads/cuda/launch_loop.cu
now_ms() { echo $(($(date +%s%N) / 1000000)); }
field() { sed -n "s/.*$1=\([-0-9.]*\).*/\1/p" "$2" | head -n 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -g | awk '{a[NR]=$1} END {printf "%s..%s", a[1], a[NR]}'; }
gmean() { awk '{s += log($1)} END {printf "%.4f", exp(s / NR)}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f\n", a / b}'; }
# c / d and as a signed percentage; 0 where d is missing (an older probe).
share() { awk -v c="$1" -v d="$2" 'BEGIN {print (d + 0 != 0) ? c / d : 0}'; }
pct() { awk -v c="$1" -v d="$2" 'BEGIN {printf "%+.1f %%", (d + 0 != 0) ? 100 * c / d : 0}'; }

PARTS=" ${HRR_SPEED_PARTS:-launches paired copies train graphs} "
part() { [[ $PARTS == *" $1 "* ]]; }

plain() { "${PIN[@]}" "$W/ll" loop 100000 >"$W/p.log"; }
captured() {
    rm -rf "$W/c.hrr"
    "${PIN[@]}" "$BIN/hrr-cap" -o "$W/c.hrr" -- "$W/ll" loop 100000 >"$W/c.log" 2>/dev/null
}
if part launches; then
echo "--- launches: 100k tiny kernels, $ROUNDS rounds"
replay() { "${PIN[@]}" "$BIN/hrr-play" "$W/c.hrr" --backend cuda --json "$@" >"$W/r.json" 2>/dev/null; }
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then plain; captured; else captured; plain; fi
    p=$(field launch_loop_ms "$W/p.log"); c=$(field launch_loop_ms "$W/c.log")
    pe=$(field enqueue_ms "$W/p.log"); ce=$(field enqueue_ms "$W/c.log")
    # The replay with launches on their own thread (the default) and on the
    # replay thread (--no-launch-thread), in alternating order.
    t0=$(now_ms); "${PIN[@]}" "$W/ll" loop 100000 >/dev/null; t1=$(now_ms)
    if [ $((i % 2)) = 1 ]; then
        replay; t2=$(now_ms); replay --no-launch-thread; t3=$(now_ms); r=$((t2 - t1)) s=$((t3 - t2))
    else
        replay --no-launch-thread; t2=$(now_ms); replay; t3=$(now_ms); s=$((t2 - t1)) r=$((t3 - t2))
    fi
    # What placement costs the replay: the same archive without it.
    t4=$(now_ms); replay --no-placement; t5=$(now_ms); u=$((t5 - t4))
    echo "round $i: plain loop $p ms (enqueue $pe), captured loop $c ms (enqueue $ce) ($(div "$c" "$p")x); plain process $((t1 - t0)) ms, replay process $r ms ($(div $r $((t1 - t0)))x), with --no-launch-thread $s ms ($(div $s $((t1 - t0)))x), with --no-placement $u ms ($(div $u $((t1 - t0)))x)"
    div "$c" "$p" >>"$W/cap_ratio"; echo "$p" >>"$W/plain"; echo "$c" >>"$W/cap"
    div $r $((t1 - t0)) >>"$W/rep_ratio"; div $s $((t1 - t0)) >>"$W/rep_serial_ratio"; div $u $((t1 - t0)) >>"$W/rep_unplaced_ratio"
done
awk -v r="$(median <"$W/cap_ratio")" -v g="$(gmean <"$W/cap_ratio")" -v s="$(spread <"$W/cap_ratio")" -v p="$(median <"$W/plain")" -v c="$(median <"$W/cap")" 'BEGIN {
    printf "capture overhead: median per-round ratio %+.1f %%, geometric mean %+.1f %% (ratios %s; loop medians plain %.1f ms, captured %.1f ms) — target <= +5 %%\n", 100 * (r - 1), 100 * (g - 1), s, p, c }'
awk -v r="$(median <"$W/rep_ratio")" -v s="$(spread <"$W/rep_ratio")" 'BEGIN {
    printf "replay process / plain process: median %.2fx (ratios %s) — target <= 1.00x\n", r, s }'
awk -v r="$(median <"$W/rep_serial_ratio")" -v s="$(spread <"$W/rep_serial_ratio")" 'BEGIN {
    printf "replay process --no-launch-thread / plain process: median %.2fx (ratios %s)\n", r, s }'
awk -v r="$(median <"$W/rep_unplaced_ratio")" -v s="$(spread <"$W/rep_unplaced_ratio")" 'BEGIN {
    printf "replay process --no-placement / plain process: median %.2fx (ratios %s)\n", r, s }'

fi

if part paired; then
# Builds compared side by side: HRR_PAIRED_BUILDS="NAME=DIR ..." (each DIR
# holding hrr-cap and libhrr_intercept.so), run in rotating order within
# each round; default: this run's binaries alone.
read -r -a BUILDS <<<"${HRR_PAIRED_BUILDS:-this=$BIN}"
echo "--- paired: recorded and unrecorded launches in one process, $ROUNDS rounds, builds: ${BUILDS[*]}"
${NVCC:-nvcc} -cudart shared -arch=${HRR_GPU_ARCH:-sm_90} -O2 -o "$W/lp" tests/workloads/cuda/launch_paired.cu -lcuda
for i in $(seq 1 "$ROUNDS"); do
    "$W/lp" >"$W/lp_plain.log" 2>&1
    pc=$(field paired_cost_ns "$W/lp_plain.log")
    prt=$(field paired_runtime_minus_direct_ns "$W/lp_plain.log") pr=$(field paired_runtime_ns "$W/lp_plain.log")
    echo "$pc" >>"$W/lp_p"
    line="round $i: plain: linked - direct $pc ns/launch, extra - kernelParams $(field paired_extra_minus_params_ns "$W/lp_plain.log") ns, runtime - direct $prt ns"
    n=${#BUILDS[@]}
    for k in $(seq 0 $((n - 1))); do
        b=${BUILDS[$(((i + k) % n))]}
        name=${b%%=*} dir=${b#*=}
        rm -rf "$W/lp.hrr"
        "$dir/hrr-cap" -o "$W/lp.hrr" -- "$W/lp" >"$W/lp_cap.log" 2>/dev/null
        cc=$(field paired_cost_ns "$W/lp_cap.log") d=$(field paired_direct_ns "$W/lp_cap.log")
        rc=$(awk -v a="$(field paired_runtime_minus_direct_ns "$W/lp_cap.log")" -v b="$prt" 'BEGIN {printf "%.1f", a - b}')
        line="$line; $name: $cc ns/launch of $d ($(pct "$cc" "$d")), runtime launch $rc ns of $pr ($(pct "$rc" "$pr"))"
        echo "$cc" >>"$W/lp_c_$name"
        share "$cc" "$d" >>"$W/lp_r_$name"
        echo "$rc" >>"$W/lp_rc_$name"
        share "$rc" "$pr" >>"$W/lp_rr_$name"
    done
    echo "$line"
done
for b in "${BUILDS[@]}"; do
    name=${b%%=*}
    awk -v n="$name" -v c="$(median <"$W/lp_c_$name")" -v r="$(median <"$W/lp_r_$name")" -v s="$(spread <"$W/lp_r_$name")" 'BEGIN {
        printf "paired, %s: recording cost %.1f ns per launch, %+.1f %% of a launch (median of rounds; ratios %s)\n", n, c, 100 * r, s }'
    awk -v n="$name" -v c="$(median <"$W/lp_rc_$name")" -v r="$(median <"$W/lp_rr_$name")" -v s="$(spread <"$W/lp_rr_$name")" 'BEGIN {
        printf "paired, %s: runtime launch (<<<>>>) recording cost %.1f ns, %+.1f %% of the plain runtime launch (median of rounds; ratios %s) — target <= +5 %%\n", n, c, 100 * r, s }'
done
echo "paired: the probe without capture $(median <"$W/lp_p") ns (median of rounds)"
fi

if part copies; then
echo "--- copies: 256 MiB pinned H2D and D2H, $ROUNDS rounds"
gbps() { awk -v b="$1" -v ms="$2" 'BEGIN {printf "%.2f", (ms > 0) ? b / 1e6 / ms : 0}'; }
replay_bw() { # $1: extra hrr-play arguments; prints "h2d d2h" GB/s
    # shellcheck disable=SC2086
    "$BIN/hrr-play" "$W/bw.hrr" --backend cuda --json $1 >"$W/b.json" 2>/dev/null
    # The summary's `copies`, read as gpu-pass.sh reads it.
    python3 - "$W/b.json" <<'PY'
import json, sys
c = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["copies"]
def rate(b, ms): return b / 1e6 / ms if ms else 0.0
print("%.2f %.2f" % (rate(c["h2d_bytes"], c["h2d_ms"]), rate(c["d2h_bytes"], c["d2h_ms"])))
PY
}
for i in $(seq 1 "$ROUNDS"); do
    "$W/ll" bw 256 >"$W/bw.log"
    bytes=$(field bw_bytes "$W/bw.log")
    ph=$(gbps "$bytes" "$(field bw_h2d_ms_per_copy "$W/bw.log")")
    pd=$(gbps "$bytes" "$(field bw_d2h_ms_per_copy "$W/bw.log")")
    # The application's own bandwidth under capture (each round a fresh archive).
    rm -rf "$W/bw.hrr"
    "$BIN/hrr-cap" -o "$W/bw.hrr" -- "$W/ll" bw 256 >"$W/bwc.log" 2>/dev/null
    ch=$(gbps "$bytes" "$(field bw_h2d_ms_per_copy "$W/bwc.log")")
    cd=$(gbps "$bytes" "$(field bw_d2h_ms_per_copy "$W/bwc.log")")
    read -r rh rd <<<"$(replay_bw "")"
    read -r fh fd <<<"$(replay_bw "--pinned-cache 0")"
    echo "round $i: plain h2d $ph d2h $pd GB/s; captured h2d $ch d2h $cd GB/s; replay h2d $rh d2h $rd GB/s; replay --pinned-cache 0 h2d $fh d2h $fd GB/s"
    echo "$ph" >>"$W/ph"; echo "$pd" >>"$W/pd"; echo "$rh" >>"$W/rh"; echo "$rd" >>"$W/rd"; echo "$fh" >>"$W/fh"; echo "$fd" >>"$W/fd"
    echo "$ch" >>"$W/ch"; echo "$cd" >>"$W/cd"
    # New content every copy: the blob is written each time.
    "$W/ll" bwnew 256 >"$W/bwn.log"
    pn=$(gbps "$bytes" "$(field bw_new_d2h_ms_per_copy "$W/bwn.log")")
    rm -rf "$W/bwn.hrr"
    "$BIN/hrr-cap" -o "$W/bwn.hrr" -- "$W/ll" bwnew 256 >"$W/bwnc.log" 2>/dev/null
    cn=$(gbps "$bytes" "$(field bw_new_d2h_ms_per_copy "$W/bwnc.log")")
    echo "round $i: new content each copy: plain d2h $pn GB/s; captured d2h $cn GB/s"
    echo "$pn" >>"$W/pn"; echo "$cn" >>"$W/cn"
done
awk -v ph="$(median <"$W/ph")" -v pd="$(median <"$W/pd")" -v rh="$(median <"$W/rh")" -v rd="$(median <"$W/rd")" \
    -v fh="$(median <"$W/fh")" -v fd="$(median <"$W/fd")" -v ch="$(median <"$W/ch")" -v cd="$(median <"$W/cd")" 'BEGIN {
    printf "copies (medians): plain h2d %.2f d2h %.2f GB/s; replay h2d %.2f (%.0f %%) d2h %.2f (%.0f %%) — target >= 80 %%\n", ph, pd, rh, 100 * rh / ph, rd, 100 * rd / pd
    printf "copies (medians): under capture, as the application sees it: h2d %.2f (%.0f %%) d2h %.2f (%.0f %%) — target >= 80 %%\n", ch, 100 * ch / ph, cd, 100 * cd / pd
    printf "copies (medians): replay --pinned-cache 0 h2d %.2f (%.0f %%) d2h %.2f (%.0f %%)\n", fh, 100 * fh / ph, fd, 100 * fd / pd }'
awk -v pn="$(median <"$W/pn")" -v cn="$(median <"$W/cn")" 'BEGIN {
    printf "copies (medians): new content each copy: plain d2h %.2f, under capture %.2f GB/s (%.0f %%)\n", pn, cn, 100 * cn / pn }'
fi

if part train; then
STEPS=${HRR_TRAIN_STEPS:-200}
PY=${PYTHON:-python3}
TRAIN=tests/workloads/torch/train.py
echo "--- training: PyTorch MLP, $STEPS steps, $ROUNDS rounds"
tplain() { HRR_TRAIN_STEPS=$STEPS "$PY" "$TRAIN" >"$W/tp.log" 2>&1; }
tcaptured() {
    rm -rf "$W/t.hrr"
    HRR_TRAIN_STEPS=$STEPS "$BIN/hrr-cap" -o "$W/t.hrr" -- "$PY" "$TRAIN" >"$W/tc.log" 2>/dev/null
}
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then
        t0=$(now_ms); tplain; t1=$(now_ms); tcaptured; t2=$(now_ms); pp=$((t1 - t0)); pc=$((t2 - t1))
    else
        t0=$(now_ms); tcaptured; t1=$(now_ms); tplain; t2=$(now_ms); pc=$((t1 - t0)); pp=$((t2 - t1))
    fi
    p=$(field train_loop_ms "$W/tp.log"); c=$(field train_loop_ms "$W/tc.log")
    ps=$(field train_steady_ms "$W/tp.log"); cs=$(field train_steady_ms "$W/tc.log")
    pw=$(field train_warm_ms "$W/tp.log"); cw=$(field train_warm_ms "$W/tc.log")
    if [ -z "$ps" ] || [ -z "$cs" ]; then
        echo "round $i: a training run printed no train_steady_ms (plain: $(tail -n 1 "$W/tp.log"); captured: $(tail -n 1 "$W/tc.log"))"
        continue
    fi
    t0=$(now_ms); "$BIN/hrr-play" "$W/t.hrr" --backend cuda --json >"$W/tr.json" 2>"$W/tr.err"; t1=$(now_ms); pr=$((t1 - t0))
    "$BIN/hrr-play" "$W/t.hrr" --backend cuda --no-launch-thread >/dev/null 2>&1; t2=$(now_ms); ps1=$((t2 - t1))
    result=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]).get("result","?"))' "$W/tr.json" 2>/dev/null || echo "? ($(tail -n 1 "$W/tr.err"))")
    echo "round $i: loop plain $p ms, captured $c ms ($(div "$c" "$p")x); warm-up (steps 1-10) plain $pw ms, captured $cw ms ($(div "$cw" "$pw")x); steady (steps 11-$STEPS) plain $ps ms, captured $cs ms ($(div "$cs" "$ps")x); process plain $pp ms, captured $pc ms ($(div "$pc" "$pp")x); replay process $pr ms ($(div "$pr" "$pp")x of plain process; --no-launch-thread $ps1 ms, $(div "$ps1" "$pp")x) $result"
    div "$c" "$p" >>"$W/t_loop"; div "$cw" "$pw" >>"$W/t_warm"; div "$cs" "$ps" >>"$W/t_steady"; div "$pc" "$pp" >>"$W/t_proc"; div "$pr" "$pp" >>"$W/t_rep"; div "$ps1" "$pp" >>"$W/t_rep_serial"
done
awk -v l="$(median <"$W/t_loop")" -v ls="$(spread <"$W/t_loop")" -v w="$(median <"$W/t_warm")" -v ws="$(spread <"$W/t_warm")" -v s="$(median <"$W/t_steady")" -v ss="$(spread <"$W/t_steady")" -v p="$(median <"$W/t_proc")" -v ps="$(spread <"$W/t_proc")" 'BEGIN {
    printf "training capture overhead: whole loop median %+.1f %% (ratios %s), warm-up steps median %+.1f %% (ratios %s), steady steps median %+.1f %% (ratios %s), process median %+.1f %% (ratios %s) — target <= +10 %%\n", 100 * (l - 1), ls, 100 * (w - 1), ws, 100 * (s - 1), ss, 100 * (p - 1), ps }'
awk -v r="$(median <"$W/t_rep")" -v s="$(spread <"$W/t_rep")" 'BEGIN {
    printf "training replay process / plain process: median %.2fx (ratios %s) — target <= 1.00x\n", r, s }'
awk -v r="$(median <"$W/t_rep_serial")" -v s="$(spread <"$W/t_rep_serial")" 'BEGIN {
    printf "training replay process --no-launch-thread / plain process: median %.2fx (ratios %s)\n", r, s }'
fi

if part window; then
# What recording costs before a window opens: train.py never calls the
# profiler, so under --window profiler the whole run is outside the window
# (bookkeeping only). Plain, that and a full capture, in rotating order.
STEPS=${HRR_TRAIN_STEPS:-200}
PY=${PYTHON:-python3}
echo "--- window: PyTorch MLP, $STEPS steps, outside a window, $ROUNDS rounds"
wrun() { # $1: plain | full | window
    rm -rf "$W/wt.hrr"
    case $1 in
        plain) HRR_TRAIN_STEPS=$STEPS "$PY" tests/workloads/torch/train.py >"$W/w_$1.log" 2>&1 ;;
        full) HRR_TRAIN_STEPS=$STEPS "$BIN/hrr-cap" -o "$W/wt.hrr" -- "$PY" tests/workloads/torch/train.py >"$W/w_$1.log" 2>/dev/null ;;
        window) HRR_TRAIN_STEPS=$STEPS "$BIN/hrr-cap" -o "$W/wt.hrr" --window profiler -- "$PY" tests/workloads/torch/train.py >"$W/w_$1.log" 2>/dev/null ;;
    esac
}
for i in $(seq 1 "$ROUNDS"); do
    case $((i % 3)) in
        1) order="plain full window" ;;
        2) order="full window plain" ;;
        0) order="window plain full" ;;
    esac
    for m in $order; do wrun "$m"; done
    p=$(field train_steady_ms "$W/w_plain.log"); f=$(field train_steady_ms "$W/w_full.log"); w=$(field train_steady_ms "$W/w_window.log")
    lp=$(field train_loop_ms "$W/w_plain.log"); lw=$(field train_loop_ms "$W/w_window.log")
    if [ -z "$p" ] || [ -z "$f" ] || [ -z "$w" ]; then echo "round $i: a run printed no train_steady_ms"; continue; fi
    echo "round $i ($order): steady plain $p ms, full capture $f ms ($(div "$f" "$p")x), outside a window $w ms ($(div "$w" "$p")x); whole loop plain $lp ms, outside a window $lw ms ($(div "$lw" "$lp")x)"
    div "$f" "$p" >>"$W/w_full"; div "$w" "$p" >>"$W/w_win"; div "$lw" "$lp" >>"$W/w_winloop"
done
awk -v f="$(median <"$W/w_full")" -v fs="$(spread <"$W/w_full")" -v w="$(median <"$W/w_win")" -v ws="$(spread <"$W/w_win")" -v l="$(median <"$W/w_winloop")" -v ls="$(spread <"$W/w_winloop")" 'BEGIN {
    printf "outside a window: steady steps median %+.1f %% (ratios %s), whole loop %+.1f %% (ratios %s) — target <= +2 %%; full capture steady %+.1f %% (ratios %s)\n", 100 * (w - 1), ws, 100 * (l - 1), ls, 100 * (f - 1), fs }'
fi

if part snapshot; then
# The window's snapshot: cudaProfilerStart's time with GiB of live device
# memory, plain and under --window profiler, and the window replayed.
echo "--- snapshot: cudaProfilerStart with live device memory, $ROUNDS rounds"
${NVCC:-nvcc} -cudart shared -arch=${HRR_GPU_ARCH:-sm_90} -O2 -o "$W/ws" tests/workloads/cuda/window_snapshot.cu
for gib in ${HRR_SNAPSHOT_GIB:-1 4}; do
    for i in $(seq 1 "$ROUNDS"); do
        "$W/ws" "$gib" >"$W/ws_p.log" 2>&1 || echo "plain window_snapshot failed: $(tail -n 1 "$W/ws_p.log")"
        rm -rf "$W/ws.hrr"
        "$BIN/hrr-cap" -o "$W/ws.hrr" --window profiler -- "$W/ws" "$gib" >"$W/ws_c.log" 2>"$W/ws_c.err" || echo "captured window_snapshot failed: $(tail -n 2 "$W/ws_c.err")"
        p=$(field profiler_start_ms "$W/ws_p.log"); c=$(field profiler_start_ms "$W/ws_c.log")
        state=$(grep -o '"state_bytes" *: *[0-9]*' "$W/ws.hrr/manifest.json" | grep -o '[0-9]*$')
        echo "$gib GiB round $i: cudaProfilerStart plain $p ms, under capture $c ms; state $state bytes; $(awk -v c="$c" -v p="$p" -v b="$state" 'BEGIN {printf "%.1f ms per GiB", (c - p) / (b / 2^30)}')"
        awk -v c="$c" -v p="$p" -v b="$state" 'BEGIN {print (c - p) / (b / 2^30)}' >>"$W/ws_$gib"
    done
    rc=0; "$BIN/hrr-play" "$W/ws.hrr" --backend cuda >"$W/ws_r.log" 2>&1 || rc=$?
    echo "$gib GiB: snapshot cost median $(median <"$W/ws_$gib") ms per GiB (spread $(spread <"$W/ws_$gib")); window archive $(du -sh "$W/ws.hrr" | cut -f1); replay exit $rc: $(grep -E '^(result|placement|d2h)' "$W/ws_r.log" | tr '\n' ' ')"
done
fi

if part graphs; then
echo "--- graphs: a graph of 128 tiny kernels launched 1000 times, $ROUNDS rounds"
${NVCC:-nvcc} -cudart shared -arch=${HRR_GPU_ARCH:-sm_90} -O2 -o "$W/gs" tests/workloads/cuda/graph_speed.cu
gplain() { "$W/gs" 128 1000 >"$W/gp.log"; }
gcaptured() {
    rm -rf "$W/g.hrr"
    "$BIN/hrr-cap" -o "$W/g.hrr" -- "$W/gs" 128 1000 >"$W/gc.log" 2>/dev/null
}
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then
        t0=$(now_ms); gplain; t1=$(now_ms); gcaptured; t2=$(now_ms); pp=$((t1 - t0)); pc=$((t2 - t1))
    else
        t0=$(now_ms); gcaptured; t1=$(now_ms); gplain; t2=$(now_ms); pc=$((t1 - t0)); pp=$((t2 - t1))
    fi
    p=$(field graph_loop_ms "$W/gp.log"); c=$(field graph_loop_ms "$W/gc.log")
    t0=$(now_ms); "$BIN/hrr-play" "$W/g.hrr" --backend cuda --json >"$W/gr.json" 2>"$W/gr.err"; t1=$(now_ms)
    "$BIN/hrr-play" "$W/g.hrr" --backend cuda --json --no-graphs >"$W/gn.json" 2>"$W/gn.err"; t2=$(now_ms)
    pr=$((t1 - t0)); pn=$((t2 - t1))
    result=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]).get("result","?"))' "$W/gr.json" 2>/dev/null || echo "? ($(tail -n 1 "$W/gr.err"))")
    echo "round $i: loop plain $p ms, captured $c ms ($(div "$c" "$p")x); process plain $pp ms, captured $pc ms ($(div "$pc" "$pp")x); replay process $pr ms ($(div "$pr" "$pp")x of plain) $result, --no-graphs $pn ms ($(div "$pn" "$pp")x)"
    div "$c" "$p" >>"$W/g_loop"; div "$pc" "$pp" >>"$W/g_proc"; div "$pr" "$pp" >>"$W/g_rep"; div "$pn" "$pp" >>"$W/g_nog"
done
awk -v l="$(median <"$W/g_loop")" -v ls="$(spread <"$W/g_loop")" -v p="$(median <"$W/g_proc")" -v ps="$(spread <"$W/g_proc")" 'BEGIN {
    printf "graph capture overhead: launch loop median %+.1f %% (ratios %s), process median %+.1f %% (ratios %s) — target <= +10 %%\n", 100 * (l - 1), ls, 100 * (p - 1), ps }'
awk -v r="$(median <"$W/g_rep")" -v s="$(spread <"$W/g_rep")" -v n="$(median <"$W/g_nog")" -v ns="$(spread <"$W/g_nog")" 'BEGIN {
    printf "graph replay process / plain process: median %.2fx (ratios %s), --no-graphs %.2fx (ratios %s) — target <= 1.00x\n", r, s, n, ns }'
fi

if part control; then
CSTEPS=${HRR_CONTROL_STEPS:-600}
echo "--- control: training, $CSTEPS steps, plain / preloaded (nothing recorded) / captured, $ROUNDS rounds"
LIB=$(cd "$BIN" && pwd)/libhrr_intercept.so
cplain() { HRR_TRAIN_STEPS=$CSTEPS "${PYTHON:-python3}" tests/workloads/torch/train.py >"$W/c_plain.log" 2>&1; }
cpreload() { HRR_TRAIN_STEPS=$CSTEPS LD_PRELOAD="$LIB" "${PYTHON:-python3}" tests/workloads/torch/train.py >"$W/c_preload.log" 2>&1; }
ccaptured() {
    rm -rf "$W/c.hrr"
    HRR_TRAIN_STEPS=$CSTEPS "$BIN/hrr-cap" -o "$W/c.hrr" -- "${PYTHON:-python3}" tests/workloads/torch/train.py >"$W/c_captured.log" 2>/dev/null
}
for i in $(seq 1 "$ROUNDS"); do
    case $((i % 3)) in
        1) cplain; cpreload; ccaptured ;;
        2) cpreload; ccaptured; cplain ;;
        0) ccaptured; cplain; cpreload ;;
    esac
    p=$(field train_steady_ms "$W/c_plain.log"); l=$(field train_steady_ms "$W/c_preload.log"); c=$(field train_steady_ms "$W/c_captured.log")
    if [ -z "$p" ] || [ -z "$l" ] || [ -z "$c" ]; then
        echo "round $i: a run printed no train_steady_ms"
        continue
    fi
    echo "round $i: steady (steps 11-$CSTEPS) plain $p ms, preloaded $l ms ($(div "$l" "$p")x), captured $c ms ($(div "$c" "$p")x)"
    # Of those, the main thread's CPU time and its context switches
    # (voluntary,involuntary): more code run on it, or the CPU taken from it.
    sw() { sed -n 's/.*train_steady_ctxsw=\([0-9,]*\).*/\1/p' "$1" | head -n 1; }
    echo "round $i: main thread CPU plain $(field train_steady_cpu_ms "$W/c_plain.log") ms, preloaded $(field train_steady_cpu_ms "$W/c_preload.log") ms, captured $(field train_steady_cpu_ms "$W/c_captured.log") ms; context switches plain $(sw "$W/c_plain.log"), preloaded $(sw "$W/c_preload.log"), captured $(sw "$W/c_captured.log")"
    div "$l" "$p" >>"$W/c_pre"; div "$c" "$p" >>"$W/c_cap"
done
awk -v l="$(median <"$W/c_pre")" -v ls="$(spread <"$W/c_pre")" -v c="$(median <"$W/c_cap")" -v cs="$(spread <"$W/c_cap")" 'BEGIN {
    printf "control: preloaded, nothing recorded, median %+.1f %% (ratios %s); captured median %+.1f %% (ratios %s)\n", 100 * (l - 1), ls, 100 * (c - 1), cs }'
fi

if part trainab; then
# Builds compared on the training loop: plain and each build of
# HRR_TRAIN_BUILDS="NAME=DIR[:OUT] ..." (each DIR holding hrr-cap and
# libhrr_intercept.so; default: this run's binaries; OUT: where its archive
# goes, e.g. /dev/shm to take the disk out) in rotating order
# within each round, so that a change is judged against the build before it
# on the same instance, round by round.
read -r -a TB <<<"${HRR_TRAIN_BUILDS:-this=$BIN}"
ABSTEPS=${HRR_TRAIN_STEPS:-200}
RUNS=("plain=" "${TB[@]}")
echo "--- training A/B: $ABSTEPS steps, $ROUNDS rounds, plain and ${TB[*]} in rotating order"
FIELDS="loop warm steady steady_cpu"
for i in $(seq 1 "$ROUNDS"); do
    line="round $i:"
    n=${#RUNS[@]}
    for k in $(seq 0 $((n - 1))); do
        spec=${RUNS[$(((i + k) % n))]}
        name=${spec%%=*} dir=${spec#*=} out=$W
        [[ $dir == *:* ]] && out=${dir#*:} dir=${dir%%:*}
        if [ -z "$dir" ]; then
            HRR_TRAIN_STEPS=$ABSTEPS "${PYTHON:-python3}" tests/workloads/torch/train.py >"$W/ab_$name.log" 2>&1
        else
            rm -rf "$out/ab.hrr"
            HRR_TRAIN_STEPS=$ABSTEPS "$dir/hrr-cap" -o "$out/ab.hrr" -- "${PYTHON:-python3}" tests/workloads/torch/train.py >"$W/ab_$name.log" 2>/dev/null
            rm -rf "$out/ab.hrr"
        fi
        [ -n "${HRR_SPEED_KEEP:-}" ] && cp "$W/ab_$name.log" "$HRR_SPEED_KEEP/ab_${i}_$name.log"
        line="$line $name"
        for f in $FIELDS; do line="$line $f $(field "train_${f}_ms" "$W/ab_$name.log")"; done
        line="$line;"
    done
    echo "$line"
    for b in "${TB[@]}"; do
        name=${b%%=*}
        for f in $FIELDS; do
            p=$(field "train_${f}_ms" "$W/ab_plain.log") c=$(field "train_${f}_ms" "$W/ab_$name.log")
            [ -n "$p" ] && [ -n "$c" ] && div "$c" "$p" >>"$W/ab_${name}_$f"
        done
    done
done
for b in "${TB[@]}"; do
    name=${b%%=*} line="training A/B, $name / plain (median of per-round ratios):"
    for f in $FIELDS; do
        [ -s "$W/ab_${name}_$f" ] || continue
        line="$line $f $(awk -v m="$(median <"$W/ab_${name}_$f")" 'BEGIN {printf "%+.1f %%", 100 * (m - 1)}') ($(spread <"$W/ab_${name}_$f"));"
    done
    echo "$line"
done
fi

if part profile; then
echo "--- profile: where a training step's host time goes, $ROUNDS rounds"
CAP=$(cd "$BIN" && pwd)/hrr-cap
for i in $(seq 1 "$ROUNDS"); do
    for how in plain captured; do
        if [ "$how" = plain ]; then
            (cd tests/workloads/torch && "${PYTHON:-python3}" step_profile.py) >"$W/sp.log" 2>&1
        else
            rm -rf "$W/sp.hrr"
            (cd tests/workloads/torch && "$CAP" -o "$W/sp.hrr" -- "${PYTHON:-python3}" step_profile.py) >"$W/sp.log" 2>&1
        fi
        echo "round $i $how: $(grep -m1 '^phase_us' "$W/sp.log")"
        grep '^op_us' "$W/sp.log" | head -n 12 | sed "s/^/round $i $how: /"
    done
done
fi
