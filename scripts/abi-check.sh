#!/usr/bin/env bash
# AMD ABI conformance (ABI of every export, symbol versions) against Debian's real ROCm 5.2:
#
#   0. the HIP signature table is current         scripts/gen-hip-signatures.sh --check
#   1. compile-time proof, HIP table, CPU runtime  cargo build in abi/ (its own workspace)
#      + hsa-sys
#   2. compile-time proof, interposer              cargo build --no-default-features --features intercept
#   3. negative control                            --features negative-control must FAIL (6 mismatches)
#   4. export coverage + symbol versions           cargo test in abi/, once per feature (nm/readelf on the built .so;
#                                                  a C program linked to libamdhip64.so.5 captured
#                                                  with the interposer, then replayed)
#   5. C side                                      tests/abi/check-c.sh (layouts, workloads linked to
#                                                  the real ROCm, hipcc gfx90a build, host IR)
#   6. hsa-sys vs the C headers                    cargo test -p hsa-sys --test c_layout
#   7. the CUDA tables vs CUDA 13.0's headers      cuda-api's cuda-c-decls, compiled by
#                                                  scripts/cuda-header-check.sh against the
#                                                  headers of PyPI's nvidia-cuda-runtime and
#                                                  nvidia-cuda-crt wheels (pinned; fetched once
#                                                  into ~/.cache/hrr, or $HRR_CACHE)
#
# Exit: 0 when every step passed; 1 when any failed; 0 with a SKIP line when a
# required Debian package is missing (set HRR_ABI_REQUIRE=1 to make that fatal).
# Ends with "abi-check: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# ------------------------------------------------------------ prerequisites
required=(libamdhip64-dev libhsa-runtime-dev libamdhip64-5 hipcc clang-15 clang-tools-15 libclang-15-dev rocm-device-libs gcc binutils)
missing=()
for p in "${required[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "abi-check: SKIP: missing Debian packages: ${missing[*]} (apt-get install ${missing[*]})"
    [ "${HRR_ABI_REQUIRE:-0}" = 1 ] && exit 1
    exit 0
fi
if ! command -v cargo >/dev/null; then
    echo "abi-check: SKIP: cargo not found"
    [ "${HRR_ABI_REQUIRE:-0}" = 1 ] && exit 1
    exit 0
fi

export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-15/lib}"
export HIP_PATH="${HIP_PATH:-/usr}"
# The main workspace's build, where CARGO_TARGET_DIR puts it.
main_target="${CARGO_TARGET_DIR:-$root/target}"
case "$main_target" in /*) ;; *) main_target="$root/$main_target" ;; esac
abi_target="$root/target/abi"
log_dir="$abi_target/logs"
mkdir -p "$log_dir"

passed=0
failed=0
step() { echo; echo "== abi-check: $*"; }
ok() { echo "abi-check: PASS $*"; passed=$((passed + 1)); }
ko() { echo "abi-check: FAIL $*"; failed=$((failed + 1)); }
abi_cargo() { (cd "$root/abi" && CARGO_TARGET_DIR="$abi_target" cargo "$@"); }

step "building the main workspace's cdylibs and tools ($main_target/debug)"
if ! cargo build -p hrr-runtime-cpu -p hrr-intercept -p hrr-cap -p hrr-play 2>&1 | tail -3; then
    ko "cargo build -p hrr-runtime-cpu -p hrr-intercept -p hrr-cap -p hrr-play"
fi

# ------------------------------------------------------------ 0
step "0. the HIP signature table (lib/api/hip/src/table.rs) is what Debian's headers generate"
if scripts/gen-hip-signatures.sh --check >"$log_dir/table.log" 2>&1; then
    tail -1 "$log_dir/table.log" | sed 's/^/    /'
    ok "the checked-in table is current"
else
    tail -30 "$log_dir/table.log"
    ko "lib/api/hip/src/table.rs is stale or the generator failed (see $log_dir/table.log)"
fi

# ------------------------------------------------------------ 1
step "1. compile-time ABI proof: HIP table, CPU runtime, hsa-sys (abi/, bindgen of Debian's headers)"
if abi_cargo build --locked >"$log_dir/build.log" 2>&1; then
    ok "every HIP table entry, every export of libhrr_hip_cpu.so and every hsa-sys PFN type has the signature of Debian's HIP/HSA 5.2.3 headers (and of hip-runtime-sys 0.1.2 where it declares them)"
else
    grep -E '^error' -A6 "$log_dir/build.log" | head -60
    ko "abi/ does not compile (see $log_dir/build.log)"
fi

# ------------------------------------------------------------ 2
step "2. compile-time ABI proof: interposer (--no-default-features --features intercept)"
intercept_ok=0
if abi_cargo build --locked --no-default-features --features intercept >"$log_dir/build-intercept.log" 2>&1; then
    ok "every export of libhrr_intercept.so has the signature of hip-runtime-sys / Debian's headers / the references"
    intercept_ok=1
else
    grep -E '^error' -A6 "$log_dir/build-intercept.log" | head -40
    if grep -qE 'E0603|private|cannot find value .* in module `o`|unresolved import `hrr_intercept::exports' "$log_dir/build-intercept.log"; then
        ko "the interposer's export modules are private: make them 'pub mod' in lib/capture/intercept/src/hip/exports/mod.rs so abi/ can name its functions"
    else
        ko "abi/ --features intercept does not compile (see $log_dir/build-intercept.log)"
    fi
fi

# ------------------------------------------------------------ 3
step "3. negative control: deliberately wrong signatures must fail the build"
if abi_cargo build --locked --features negative-control >"$log_dir/negative.log" 2>&1; then
    ko "the negative control compiled: the ABI assertions cannot fail"
else
    n=$(grep -c 'evaluation panicked: ABI mismatch' "$log_dir/negative.log" || true)
    if [ "$n" -eq 6 ]; then
        grep -o 'evaluation panicked: ABI mismatch: .*' "$log_dir/negative.log" | sed 's/^/    /'
        ok "all 6 wrong signatures (one a table line) were rejected at compile time"
    else
        grep -E '^error' -A4 "$log_dir/negative.log" | head -30
        ko "negative control failed for another reason ($n of 6 ABI mismatches reported)"
    fi
fi

# ------------------------------------------------------------ 4
step "4. export coverage and symbol versions (cargo test in abi/)"
# The CPU runtime and the interposer define the same #[no_mangle] symbols, so
# their checks are tested in two builds (one test binary cannot link both).
export HRR_ABI_LIBDIR="$main_target/debug"
if abi_cargo test --locked -- --nocapture >"$log_dir/test.log" 2>&1; then
    grep -E '^(libamdhip64|libhrr_|[0-9]+ (signature checks|failed calls)|skipped :|test result: .* [1-9][0-9]* passed)' "$log_dir/test.log" | sed 's/^/    /'
    ok "abi/ tests (every CPU-runtime export checked; hip* unversioned; versioned refs captured; failed calls skipped at replay)"
else
    grep -E 'panicked|FAILED|^error|assert' -A8 "$log_dir/test.log" | head -60
    ko "abi/ tests (see $log_dir/test.log)"
fi
if [ "$intercept_ok" = 1 ]; then
    if HRR_ABI_REQUIRE_INTERCEPT=1 abi_cargo test --locked --no-default-features --features intercept --test exports \
        -- --nocapture >"$log_dir/test-intercept.log" 2>&1; then
        grep -E '^(libhrr_|[0-9]+ signature checks)' "$log_dir/test-intercept.log" | sed 's/^/    /'
        ok "every export of libhrr_intercept.so has an ABI check"
    else
        grep -E 'panicked|FAILED|^error|assert' -A8 "$log_dir/test-intercept.log" | head -40
        ko "abi/ interposer export coverage (see $log_dir/test-intercept.log)"
    fi
else
    echo "abi-check: (interposer export coverage not tested: step 2 failed)"
fi

# ------------------------------------------------------------ 5
step "5. C side: tests/abi/check-c.sh"
if tests/abi/check-c.sh "$abi_target/c-work"; then
    ok "C layouts, workloads against the real ROCm, hipcc gfx90a, host IR"
else
    ko "tests/abi/check-c.sh"
fi

# ------------------------------------------------------------ 6
step "6. hsa-sys against Debian's HSA headers (C program)"
if cargo test -p hsa-sys --test c_layout 2>&1 | tail -4 | tee "$log_dir/hsa-sys.log" | grep -q 'test result: ok'; then
    ok "hsa-sys constants, layouts and function types match hsa.h / hsa_ext_amd.h"
else
    cat "$log_dir/hsa-sys.log"
    ko "cargo test -p hsa-sys --test c_layout"
fi

# ------------------------------------------------------------ 7
step "7. the CUDA signature tables (cuda-api: driver and runtime) against CUDA 13.0's headers"
decls="$abi_target/cuda-decls.c"
names="$abi_target/cuda-names.txt"
if ! cargo run -q -p cuda-api --bin cuda-c-decls >"$decls" 2>"$log_dir/cuda-decls.log" ||
    ! cargo run -q -p cuda-api --bin cuda-c-decls -- --names >"$names" 2>>"$log_dir/cuda-decls.log"; then
    cat "$log_dir/cuda-decls.log"
    ko "cuda-c-decls failed (see $log_dir/cuda-decls.log)"
elif scripts/cuda-header-check.sh "$decls" "$names" >"$log_dir/cuda-headers.log" 2>&1; then
    grep -E '^cuda-header-check: ' "$log_dir/cuda-headers.log" | sed 's/^/    /'
    ok "every CUDA table line (cu*, cuda*, __cuda*) redeclared in C agrees with CUDA 13.0's prototype"
else
    tail -40 "$log_dir/cuda-headers.log"
    ko "the CUDA tables against CUDA's headers (see $log_dir/cuda-headers.log)"
fi

echo
echo "abi-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
