#!/usr/bin/env bash
# Capture cost as the application sees it (docs/PERFORMANCE.md, "Capture"):
# a C loop of 100k tiny launches and a large-copy program on the CPU runtime,
# each run plain and under hrr-cap, alternately, ROUNDS times (release build);
# then the driver layer's launch (how CUDA is recorded) through the test
# suite's stand-in libcuda, 200k launches, each followed by touching 0 and
# 16 KiB of memory (a real driver's launch evicts the recorder's data).
# Usage: lib/capture/intercept/benches/capture_loop.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
ROUNDS=${1:-5}
cargo build -q --release -p hrr-runtime-cpu -p hrr-intercept -p hrr-cap
R=$PWD/target/release
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
C=lib/capture/intercept/tests/c
CFLAGS="-O2 -D__HIP_PLATFORM_AMD__ -I/usr/include -I$C"
LIBS="-L$R -Wl,-rpath,$R -Wl,--no-as-needed -lhrr_hip_cpu"
gcc -O2 -shared -fPIC -Itests/workloads/include $C/kernels.c -o "$W/kernels.so"
gcc $CFLAGS $C/launch_loop.c -o "$W/launch_loop" $LIBS
gcc $CFLAGS $C/h2d_copy.c -o "$W/h2d_copy" $LIBS
gcc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic $C/fake_cuda/libcuda.c -o "$W/libcuda.so.1"
gcc -O2 -I$C $C/driver_loop.c -o "$W/driver_loop" -L"$W" -Wl,-rpath,"$W" -l:libcuda.so.1
ns() { sed -n 's/.* \([0-9.]*\) ns\/launch.*/\1/p'; }
plain=() capd=()
for i in $(seq "$ROUNDS"); do
    plain+=("$("$W/launch_loop" "$W/kernels.so" 100000 | ns)")
    rm -rf "$W/c.hrr"
    capd+=("$("$R/hrr-cap" -o "$W/c.hrr" -- "$W/launch_loop" "$W/kernels.so" 100000 2>/dev/null | ns)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mp=$(median "${plain[@]}") mc=$(median "${capd[@]}")
echo "launch loop: plain ${plain[*]} ns; captured ${capd[*]} ns"
echo "launch loop: median plain $mp ns, captured $mc ns, capture cost $(echo "$mc - $mp" | bc) ns/launch"
for mode in plain captured; do
    rm -rf "$W/b.hrr"
    if [ $mode = plain ]; then
        /usr/bin/time -f "$mode maxrss %M KiB" "$W/h2d_copy" 64 8
        /usr/bin/time -f "$mode launch-loop maxrss %M KiB" "$W/launch_loop" "$W/kernels.so" 100000 >/dev/null
    else
        /usr/bin/time -f "$mode maxrss %M KiB" "$R/hrr-cap" -o "$W/b.hrr" -- "$W/h2d_copy" 64 8
        rm -rf "$W/c.hrr"
        /usr/bin/time -f "$mode launch-loop maxrss %M KiB" "$R/hrr-cap" -o "$W/c.hrr" -- "$W/launch_loop" "$W/kernels.so" 100000 >/dev/null
    fi
done 2>&1
for fp in 0 16; do
    plain=() capd=()
    for i in $(seq "$ROUNDS"); do
        plain+=("$("$W/driver_loop" 200000 $fp | ns)")
        rm -rf "$W/d.hrr"
        capd+=("$("$R/hrr-cap" -o "$W/d.hrr" -- "$W/driver_loop" 200000 $fp 2>/dev/null | ns)")
    done
    mp=$(median "${plain[@]}") mc=$(median "${capd[@]}")
    echo "driver loop, $fp KiB touched per launch: median plain $mp ns, captured $mc ns, capture cost $(echo "$mc - $mp" | bc) ns/launch"
done
