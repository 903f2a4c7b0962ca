#!/usr/bin/env bash
# Runs every fuzz target under libFuzzer for SECONDS each (default 60), one
# after the other, one job each at low priority, and prints executions and
# crashes per target: the long runs. CI runs the fuzzing smoke instead
# (scripts/fuzz-smoke.sh, stable Rust, inside cargo test); docs/FUZZING.md
# says which is which.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 3600 archive
#
# Targets (cargo-fuzz crates, each its own workspace, not built by cargo test):
#   lib/hrr-core/fuzz     event_reader manifest sidecar hrrr archive_dir
#   lib/hrr-replay/fuzz   archive
#   lib/hrr-codeobj/fuzz  bundle amdgpu_note cuda_fatbin any_image
# Inputs: fuzz/seeds/<target>/ (checked in) and fuzz/corpus/<target>/ (what
# scripts/fuzz-corpus.sh captured, and what the fuzzer found; not in git).
# A crash lands in fuzz/artifacts/<target>/; copy it to
# fuzz/regressions/<target>/ (the stable tests run every file there) and fix it.
#
# libFuzzer needs nightly Rust and cargo-fuzz (`cargo install cargo-fuzz`).
# Without them this runs the fuzzing smoke: the same target bodies on stable
# Rust over the seeds plus seeded mutations (what `cargo test` runs in CI;
# HRR_FUZZ_ITERS=N for more).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
want=("$@")

declare -A crate=(
    [event_reader]=lib/hrr-core/fuzz [manifest]=lib/hrr-core/fuzz
    [sidecar]=lib/hrr-core/fuzz [hrrr]=lib/hrr-core/fuzz [archive_dir]=lib/hrr-core/fuzz
    [archive]=lib/hrr-replay/fuzz
    [bundle]=lib/hrr-codeobj/fuzz [amdgpu_note]=lib/hrr-codeobj/fuzz
    [cuda_fatbin]=lib/hrr-codeobj/fuzz [any_image]=lib/hrr-codeobj/fuzz
)
order=(event_reader manifest sidecar hrrr archive_dir archive bundle amdgpu_note cuda_fatbin any_image)
[[ ${#want[@]} -gt 0 ]] && order=("${want[@]}")

if ! cargo +nightly --version >/dev/null 2>&1 || ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain or cargo-fuzz: running the fuzzing smoke instead"
    exec bash scripts/fuzz-smoke.sh
fi

status=0
for t in "${order[@]}"; do
    dir=${crate[$t]:-}
    [[ -n $dir ]] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
    mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t"
    seeds=()
    [[ -d $dir/seeds/$t ]] && seeds=("seeds/$t")
    log=$(mktemp)
    rm -f "$dir"/fuzz-*.log
    # -rss_limit_mb / -malloc_limit_mb: an input must not make the target
    # allocate without bound; -timeout: nor hang. -max_len: small inputs
    # (whole archives are larger). With -jobs=1 libFuzzer runs one worker
    # whose output goes to fuzz-0.log.
    max_len=16384
    [[ $t == archive || $t == archive_dir ]] && max_len=262144
    (cd "$dir" && nice -n 19 cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$secs" -jobs=1 -workers=1 -timeout=20 -max_len=$max_len \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/") >"$log" 2>&1 || status=1
    cat "$dir"/fuzz-*.log >>"$log" 2>/dev/null || true
    rm -f "$dir"/fuzz-*.log
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    crashes=$(find "$dir/artifacts/$t" -type f | wc -l)
    echo "$t: ${execs:-?} executions in ${secs}s, $crashes crash file(s) in $dir/artifacts/$t"
    if grep -q 'ERROR: libFuzzer\|panicked at\|SUMMARY:' "$log"; then
        grep -m5 'ERROR: libFuzzer\|panicked at\|SUMMARY:' "$log" | sed "s/^/  $t: /"
    fi
    if [[ -z $execs ]]; then
        echo "  $t: libFuzzer did not report; its output:" && tail -5 "$log" | sed "s/^/  $t: /"
    fi
    rm -f "$log"
done
exit $status
