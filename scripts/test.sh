#!/usr/bin/env bash
# The README's test command: builds the whole workspace and runs every test,
# the end-to-end pipeline tests on the CPU runtime included (tests/e2e).
#
#   scripts/test.sh [cargo test args…]     e.g. scripts/test.sh -- seed
#
# Needs: Rust (cargo) and the Debian packages in scripts/apt-packages.txt. No GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages (scripts/apt-packages.txt): installed when missing (root or sudo).
bash scripts/deps.sh
if ! command -v cargo >/dev/null 2>&1; then
    echo "test.sh: cargo not found: install Rust (https://rustup.rs)" >&2
    exit 2
fi

echo "+ cargo build --workspace"
cargo build --workspace
status=0
# The workspace lints (Cargo.toml's [workspace.lints]: SAFETY comments,
# documented library items) and clippy's defaults, as errors.
echo "+ cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings || status=1
echo "+ cargo test --workspace --no-fail-fast $*"
cargo test --workspace --no-fail-fast "$@" || status=1
# The third-party GPU pass's own logic, with a fake nvcc and fake hrr binaries.
echo "+ scripts/third-party-selftest.sh"
bash scripts/third-party-selftest.sh || status=1
# AMD ABI conformance against Debian's ROCm (its own cargo workspace, abi/).
echo "+ scripts/abi-check.sh"
HRR_ABI_REQUIRE=1 bash scripts/abi-check.sh || status=1
# The fuzz targets: cargo test above ran the fuzzing smoke of each (its seeds,
# past crashes and a fixed number of seeded mutations, about a minute for all;
# scripts/fuzz-smoke.sh runs it alone, docs/FUZZING.md). libFuzzer runs them
# too when asked for (HRR_FUZZ_SECONDS=N, with nightly and cargo-fuzz):
# building the sanitizer-instrumented fuzz crates takes longer than the
# whole suite.
if [[ -n ${HRR_FUZZ_SECONDS:-} ]]; then
    echo "+ scripts/fuzz.sh $HRR_FUZZ_SECONDS"
    bash scripts/fuzz.sh "$HRR_FUZZ_SECONDS" || status=1
fi
exit $status
