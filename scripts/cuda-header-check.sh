#!/usr/bin/env bash
# Checks hrr's CUDA signature tables (cuda-api: the driver's cuda_fn!, the
# runtime's cudart_fn!) against CUDA's own headers: the C file cuda-c-decls
# generates redeclares every table line after <cuda.h> and
# <cuda_runtime_api.h>, so a line that differs from CUDA's prototype is a
# compile error (conflicting types).
#
#   scripts/cuda-header-check.sh DECLS.c NAMES.txt [--include DIR] [--nvcc NVCC]
#
#   DECLS.c    cargo run -q -p cuda-api --bin cuda-c-decls
#   NAMES.txt  cargo run -q -p cuda-api --bin cuda-c-decls -- --names
#   --include  CUDA's include directory; without it, CUDA 13.0's headers are
#              fetched once from PyPI's wheels (nvidia-cuda-runtime, whose
#              include/ has cuda.h and cuda_runtime_api.h, and nvidia-cuda-crt
#              for crt/, and nvidia-cuda-profiler-api for cudaProfiler.h) into
#              ${HRR_CACHE:-~/.cache/hrr}/cuda-headers-13.0
#   --nvcc     also compile it as CUDA (nvcc declares the compiler ABI's
#              __cudaGetKernel and __cudaLaunchKernel, which no header does
#              for a host compiler)
#
# Compiled with gcc as C (plain; -DCUDA_API_PER_THREAD_DEFAULT_STREAM, where
# the _ptds/_ptsz names are declared; -D__CUDA_API_VERSION_INTERNAL, where
# the versioned names cuda.h maps away are) and as C++ (the compiler ABI of
# crt/host_runtime.h), each with -Wredundant-decls: a table line that met a
# header prototype says so, and every line must meet one in some mode.
# Exit 0 when all compile and every line was checked; 1 otherwise.
set -uo pipefail

# Pinned: the CUDA 13.0 wheels the tables were written against.
RUNTIME_WHEEL="nvidia-cuda-runtime==13.0.96"
CRT_WHEEL="nvidia-cuda-crt==13.0.88"
# cudaProfiler.h and cuda_profiler_api.h (cuProfilerStart, cudaProfilerStart).
PROFILER_WHEEL="nvidia-cuda-profiler-api==13.0.85"
# Declared only where nvcc compiles (crt/device_functions.h under __CUDACC__).
NVCC_ONLY="__cudaGetKernel __cudaLaunchKernel __cudaLaunchKernel_ptsz"

die() { echo "cuda-header-check: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 DECLS.c NAMES.txt [--include DIR] [--nvcc NVCC]"
decls=$1 names=$2
shift 2
inc="" nvcc=""
while [ $# -gt 0 ]; do
    case "$1" in
        --include) inc=$2; shift 2 ;;
        --nvcc) nvcc=$2; shift 2 ;;
        *) die "unknown argument $1" ;;
    esac
done
[ -s "$decls" ] || die "$decls is missing or empty"
[ -s "$names" ] || die "$names is missing or empty"
# Absolute: the checks run in a scratch directory.
decls=$(realpath "$decls") names=$(realpath "$names")

if [ -z "$inc" ]; then
    cache="${HRR_CACHE:-$HOME/.cache/hrr}/cuda-headers-13.0"
    inc="$cache/nvidia/cu13/include"
    if [ ! -f "$inc/cuda_runtime_api.h" ] || [ ! -f "$inc/crt/host_runtime.h" ] || [ ! -f "$inc/cudaProfiler.h" ]; then
        mkdir -p "$cache/wheels" || die "cannot create $cache"
        python3 -m pip download --quiet --no-deps --dest "$cache/wheels" "$RUNTIME_WHEEL" "$CRT_WHEEL" "$PROFILER_WHEEL" ||
            die "could not download $RUNTIME_WHEEL, $CRT_WHEEL and $PROFILER_WHEEL from PyPI"
        python3 - "$cache" "$cache"/wheels/*.whl <<'PY' || die "could not unpack the wheels"
import sys, zipfile
dest = sys.argv[1]
for w in sys.argv[2:]:
    with zipfile.ZipFile(w) as z:
        z.extractall(dest, [n for n in z.namelist() if "/include/" in n])
PY
    fi
fi
[ -f "$inc/cuda.h" ] && [ -f "$inc/cuda_runtime_api.h" ] || die "no cuda.h / cuda_runtime_api.h in $inc"
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$inc/cuda.h" | head -n 1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
: >"$work/matched"
# The names of the table lines a compiler said met an earlier declaration
# (C says 'NAME', C++ 'RET NAME(ARGS)').
matched() {
    sed -n "s/^[^:]*:[0-9]*:[0-9]*: warning: redundant redeclaration of '\([^']*\)'.*/\1/p" "$1" |
        sed -E 's/\(.*//; s/.*[ *]//' >>"$work/matched"
}
compile() {
    local label=$1
    shift
    if LC_ALL=C "$@" >"$work/out" 2>&1; then
        echo "    ok    $label"
    else
        echo "    FAIL  $label:"
        grep -E 'error:' -A4 "$work/out" | head -n 40 | sed 's/^/        /'
        failed=1
    fi
    matched "$work/out"
}
echo "cuda-header-check: $(grep -c . "$names") table lines against CUDA ${version:-?} headers in $inc"
cp "$decls" "$work/decls.c"
cd "$work" || die "cannot enter $work"
compile "C" gcc -x c -std=gnu11 -fsyntax-only -Wredundant-decls -I"$inc" decls.c
compile "C, -DCUDA_API_PER_THREAD_DEFAULT_STREAM" gcc -x c -std=gnu11 -fsyntax-only -Wredundant-decls -DCUDA_API_PER_THREAD_DEFAULT_STREAM -I"$inc" decls.c
compile "C, -D__CUDA_API_VERSION_INTERNAL" gcc -x c -std=gnu11 -fsyntax-only -Wredundant-decls -D__CUDA_API_VERSION_INTERNAL -I"$inc" decls.c
compile "C++ (compiler ABI)" g++ -x c++ -fsyntax-only -Wredundant-decls -I"$inc" decls.c
if [ -n "$nvcc" ]; then
    cp decls.c decls.cu
    compile "nvcc" "$nvcc" -I"$inc" -Xcompiler -Wredundant-decls -c -o decls.o decls.cu
    compile "nvcc, -DCUDA_API_PER_THREAD_DEFAULT_STREAM" "$nvcc" -I"$inc" -Xcompiler -Wredundant-decls -DCUDA_API_PER_THREAD_DEFAULT_STREAM -c -o decls.o decls.cu
fi

sort -u matched >matched.sorted
unchecked=$(sort -u "$names" | comm -23 - matched.sorted | tr '\n' ' ')
expected=""
if [ -z "$nvcc" ]; then
    for n in $unchecked; do
        case " $NVCC_ONLY " in *" $n "*) expected+="$n " ;; esac
    done
fi
unexpected=""
for n in $unchecked; do
    case " $expected " in *" $n "*) ;; *) unexpected+="$n " ;; esac
done
total=$(sort -u "$names" | grep -c .)
checked=$(sort -u "$names" | comm -12 - matched.sorted | grep -c .)
[ "$total" -gt 0 ] || { echo "cuda-header-check: FAIL: no table line read from $names"; failed=1; }
echo "cuda-header-check: $checked of $total table lines met CUDA's prototype and agree with it"
[ -n "$expected" ] && echo "cuda-header-check: not declared for a host compiler, checked where nvcc runs (scripts/gpu-pass.sh): $expected"
if [ -n "$unexpected" ]; then
    echo "cuda-header-check: FAIL: no header declares: $unexpected(a name that is not CUDA's, or a mode this script lacks)"
    failed=1
fi
[ "$failed" -eq 0 ]
