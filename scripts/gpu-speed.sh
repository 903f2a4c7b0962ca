#!/usr/bin/env bash
# Issue 4's speed targets, measured with repetition: N alternating rounds of
# the 100k-launch loop run plain, captured and replayed on the same GPU, then
# the median of each. Run on the GPU machine from the repository root with
# .gpu/ in place (scripts/gpu-prepare.sh):
#
#   scripts/gpu-speed.sh [ROUNDS]        (default 7)
#
# Prints one line per round and a summary; writes nothing else.
set -euo pipefail
ROUNDS=${1:-7}
BIN=${HRR_GPU_BIN:-.gpu/bin}
W=$(mktemp -d /tmp/hrr-speed.XXXXXX)
${NVCC:-nvcc} -cudart shared -arch=${HRR_GPU_ARCH:-sm_90} -O2 -o "$W/ll" tests/workloads/cuda/launch_loop.cu
now_ms() { echo $(($(date +%s%N) / 1000000)); }
loop_ms() { sed -n 's/^HRR_TIME launch_loop_ms=\([0-9.]*\).*/\1/p' "$1" | head -n 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$W/plain" ; : >"$W/cap" ; : >"$W/pproc" ; : >"$W/rproc" ; : >"$W/rwall"
for i in $(seq 1 "$ROUNDS"); do
    t0=$(now_ms); "$W/ll" loop 100000 >"$W/p.log"; t1=$(now_ms)
    rm -rf "$W/c.hrr"
    "$BIN/hrr-cap" -o "$W/c.hrr" -- "$W/ll" loop 100000 >"$W/c.log" 2>/dev/null
    t2=$(now_ms); "$BIN/hrr-play" "$W/c.hrr" --backend cuda --json >"$W/r.json"; t3=$(now_ms)
    p=$(loop_ms "$W/p.log"); c=$(loop_ms "$W/c.log")
    rw=$(sed -n 's/.*"wall_ms":\([0-9.]*\).*/\1/p' "$W/r.json")
    echo "round $i: plain loop $p ms, captured loop $c ms, plain process $((t1 - t0)) ms, replay process $((t3 - t2)) ms (engine $rw ms)"
    echo "$p" >>"$W/plain"; echo "$c" >>"$W/cap"; echo $((t1 - t0)) >>"$W/pproc"; echo $((t3 - t2)) >>"$W/rproc"; echo "$rw" >>"$W/rwall"
done
P=$(median <"$W/plain"); C=$(median <"$W/cap"); PP=$(median <"$W/pproc"); RP=$(median <"$W/rproc"); RW=$(median <"$W/rwall")
awk -v p="$P" -v c="$C" -v pp="$PP" -v rp="$RP" -v rw="$RW" -v n="$ROUNDS" 'BEGIN {
    printf "median of %d rounds: plain loop %.1f ms, captured loop %.1f ms: capture overhead %+.1f %% (target <= +10 %%)\n", n, p, c, 100 * (c - p) / p
    printf "median of %d rounds: replay process %.0f ms vs plain process %.0f ms: %.2fx (target <= 1.20x); replay engine %.1f ms = %.2fx the plain loop\n", n, rp, pp, rp / pp, rw, rw / p
}'
rm -rf "$W"
