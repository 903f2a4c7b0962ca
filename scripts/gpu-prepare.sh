#!/usr/bin/env bash
# Prepares .gpu/ for scripts/gpu-pass.sh on the GPU machine (which has no Rust
# and no network): the release binaries, the hrr-backend-cuda GPU test binary and
# Debian's HIP headers. Run here, from the repository root:
#
#   scripts/gpu-prepare.sh            # copy what target/release holds
#   scripts/gpu-prepare.sh --build    # build the release binaries first
#
# Result (.gpu/ is git-ignored; carry it to the GPU machine):
#   .gpu/bin/{hrr-cap,hrr-play,hrr-sidecar,hrr-diff,hrr-extract,hrr-trace,libhrr_intercept.so}
#   .gpu/bin/hrr-cuda-gpu-tests       (lib/backends/cuda/tests/gpu.rs, release)
#   .gpu/hip-include/hip/...          (copy of /usr/include/hip, symlinks resolved)
#   .gpu/cuda-check/{decls.c,names.txt} (cuda-api's tables as C, for
#                                      scripts/cuda-header-check.sh)
#   .gpu/MANIFEST                     (commit, date, sizes, sha256)
set -euo pipefail

cd "$(dirname "$0")/.."
build=0
for a in "$@"; do
    case "$a" in
        --build) build=1 ;;
        -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "gpu-prepare: unknown argument $a" >&2; exit 2 ;;
    esac
done

bins=(hrr-cap hrr-play hrr-sidecar hrr-diff hrr-extract hrr-trace)
lib=libhrr_intercept.so

if [ "$build" = 1 ]; then
    cargo build --release -p hrr-cap -p hrr-play -p hrr-sidecar -p hrr-diff -p hrr-extract -p hrr-trace -p hrr-intercept
fi

rm -rf .gpu/bin .gpu/hip-include .gpu/cuda-check
mkdir -p .gpu/bin .gpu/hip-include .gpu/cuda-check

missing=0
for f in "${bins[@]}" "$lib"; do
    if [ -f "target/release/$f" ]; then
        cp "target/release/$f" ".gpu/bin/$f"
    else
        echo "gpu-prepare: target/release/$f is missing (run with --build)" >&2
        missing=1
    fi
done

# The backend's GPU test binary; cargo prints its path.
exe=$(cargo test --release -p hrr-backend-cuda --test gpu --no-run --message-format=json 2>/dev/null |
    grep -o '"executable":"[^"]*"' | tail -n 1 | sed 's/"executable":"//; s/"$//')
if [ -n "$exe" ] && [ -x "$exe" ]; then
    cp "$exe" .gpu/bin/hrr-cuda-gpu-tests
else
    echo "gpu-prepare: could not build the hrr-backend-cuda GPU tests" >&2
    missing=1
fi

# Debug info is not needed there, and carried files are size-limited.
if command -v strip >/dev/null; then
    for f in .gpu/bin/*; do strip --strip-debug "$f" 2>/dev/null || true; done
fi

# Debian's HIP headers (libamdhip64-dev), for tests/workloads/cuda/hip_on_nvidia.cpp.
if [ -d /usr/include/hip ]; then
    cp -rL /usr/include/hip .gpu/hip-include/hip
    dpkg-query -W -f='${Package} ${Version}\n' libamdhip64-dev >.gpu/hip-include/VERSION 2>/dev/null || true
else
    echo "gpu-prepare: /usr/include/hip is missing (apt-get install libamdhip64-dev); hip_on_nvidia will be skipped" >&2
fi

# The CUDA tables as C redeclarations (the GPU machine has CUDA's headers,
# gcc and nvcc, but no Rust to generate them).
if ! cargo run -q -p cuda-api --bin cuda-c-decls >.gpu/cuda-check/decls.c ||
    ! cargo run -q -p cuda-api --bin cuda-c-decls -- --names >.gpu/cuda-check/names.txt; then
    echo "gpu-prepare: cuda-c-decls failed" >&2
    missing=1
fi

{
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
    echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "hip headers: $(dpkg-query -W -f='${Package} ${Version}' libamdhip64-dev 2>/dev/null || echo unknown)"
    (cd .gpu/bin && sha256sum -- * 2>/dev/null)
} >.gpu/MANIFEST

du -sh .gpu/bin .gpu/hip-include | sed 's/^/gpu-prepare: /'
total=$(du -sm .gpu | cut -f1)
if [ "$total" -gt 60 ]; then
    echo "gpu-prepare: warning: .gpu/ is ${total} MiB; the carry limit is 64 MiB" >&2
fi
exit "$missing"
