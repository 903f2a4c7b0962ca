#!/usr/bin/env bash
# The fuzzing smoke on stable Rust, alone: every fuzz target runs its
# checked-in seeds, its past crashes and a fixed number of seeded mutations
# of the seeds (each target's default, about a minute for all of them on
# two cores; docs/FUZZING.md, *Smoke*). `cargo test --workspace` (CI,
# scripts/test.sh) runs the same tests; this runs only them, and shows each
# target's count and time.
#
#   scripts/fuzz-smoke.sh [ITERS [SEED]]    e.g. scripts/fuzz-smoke.sh 200000
#
# ITERS: new inputs per target instead of the defaults (HRR_FUZZ_ITERS);
# SEED: the generator's seed (HRR_FUZZ_SEED), for other inputs than CI's.
# A failing input is written to target/tmp/ and named; copy it into the
# target's fuzz/regressions/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n ${1:-} ]] && export HRR_FUZZ_ITERS=$1
[[ -n ${2:-} ]] && export HRR_FUZZ_SEED=$2
tests=(
    "-p hrr-core --test fuzz_corpus"
    "-p hrr-replay --test fuzz_archive"
    "-p hrr-codeobj --test fuzz_corpus"
)
for t in "${tests[@]}"; do
    # shellcheck disable=SC2086 # word splitting of the package and test
    cargo test -q $t --no-run
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
status=0
for t in "${tests[@]}"; do
    # shellcheck disable=SC2086
    cargo test -q $t -- --nocapture >"$log" 2>&1 || status=1
    grep -oE 'fuzz smoke: .*|panicked at .*|.* FAILED' "$log" || true
    if [[ $status -ne 0 ]]; then
        tail -30 "$log" >&2
        echo "fuzz-smoke: cargo test $t failed" >&2
        exit 1
    fi
done
echo "fuzz-smoke: every target in $((SECONDS - start)) s"
