#!/usr/bin/env bash
# Builds the capture side (hrr-cap and libhrr_intercept.so) of a revision
# into .gpu/variants/NAME, for the GPU speed script's side-by-side parts
# (HRR_PAIRED_BUILDS, HRR_TRAIN_BUILDS take NAME=DIR pairs). Run here, from
# any directory of the checkout; carry .gpu/ as usual:
#
#   scripts/gpu-variant.sh NAME REV    e.g. scripts/gpu-variant.sh before HEAD~1
#
# REV is built from a temporary worktree into target/variant (its own
# target directory: this checkout's builds are left alone); .gpu/bin is not
# touched, and scripts/gpu-prepare.sh keeps .gpu/variants.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
    sed -n '2,11p' "$0" >&2
    exit 2
fi
name=$1 rev=$2
case $name in
    '' | *[!A-Za-z0-9_.-]*)
        echo "gpu-variant: NAME may hold letters, digits, '.', '_' and '-' only: $name" >&2
        exit 2
        ;;
esac
commit=$(git rev-parse --verify --quiet "$rev^{commit}") ||
    { echo "gpu-variant: $rev: no such revision" >&2; exit 2; }
root=$PWD
wt=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$wt"' EXIT
git worktree add --quiet --detach "$wt" "$commit"
CARGO_TARGET_DIR="$root/target/variant" cargo build --release --quiet \
    --manifest-path "$wt/Cargo.toml" -p hrr-cap -p hrr-intercept
out=.gpu/variants/$name
rm -rf "$out"
mkdir -p "$out"
for f in hrr-cap libhrr_intercept.so; do
    cp "target/variant/release/$f" "$out/$f"
    strip --strip-debug "$out/$f" 2>/dev/null || true
done
echo "$commit" >"$out/COMMIT"
echo "gpu-variant: $out ($(git log -1 --format='%h %s' "$commit" | cut -c1-72)): $(du -sh "$out" | cut -f1)"
