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
# AMD ABI conformance against Debian's ROCm (its own cargo workspace, abi/).
echo "+ scripts/abi-check.sh"
HRR_ABI_REQUIRE=1 bash scripts/abi-check.sh || status=1
# The fuzz targets: cargo test above ran them as property tests over their
# seeds; with nightly and cargo-fuzz here, libFuzzer runs each briefly too.
if cargo +nightly --version >/dev/null 2>&1 && cargo fuzz --version >/dev/null 2>&1; then
    echo "+ scripts/fuzz.sh ${HRR_FUZZ_SECONDS:-10}"
    bash scripts/fuzz.sh "${HRR_FUZZ_SECONDS:-10}" || status=1
else
    echo "+ scripts/fuzz.sh skipped: no nightly toolchain or cargo-fuzz (the property tests ran)"
fi
exit $status
