#!/usr/bin/env bash
# Puts the third-party programs scripts/third-party-pass.sh runs under
# .third-party/ (git-ignored; carried to the GPU machine, which has no
# network): NVIDIA's cuda-samples (BSD-3-Clause) at a pinned commit, only the
# sample directories scripts/cuda-samples.list names, Common/'s top-level
# headers and the licence. Their sources are never committed to this
# repository. Run from anywhere:
#
#   scripts/third-party-prepare.sh                  # from GitHub (network)
#   scripts/third-party-prepare.sh --from GITDIR    # from a local clone or bare
#                                                   # git dir holding the commit
#
# Options: --url URL (default https://github.com/NVIDIA/cuda-samples; fetched
# at depth 1 without blobs, then only the files needed), --rev COMMIT (default
# the pinned one below). Result: .third-party/cuda-samples/{Samples/...,
# Common/*.h, LICENSE, REVISION}; REVISION names the commit and the source.
# The sample directories' doc/ and .vscode/ are left out.
set -euo pipefail

cd "$(dirname "$0")/.."
# NVIDIA/cuda-samples v13.0-9-gc94ff366 (2025-09-05), for CUDA 13.
PIN=c94ff366aed18c797b8a85dfaac7817b0228b420
PIN_DESC=v13.0-9-gc94ff366
URL=https://github.com/NVIDIA/cuda-samples
LIST=scripts/cuda-samples.list
DEST=.third-party/cuda-samples

from=""
rev=$PIN
while [ $# -gt 0 ]; do
    case "$1" in
        --from) from=${2:?--from needs a git directory}; shift 2 ;;
        --url) URL=${2:?--url needs a URL}; shift 2 ;;
        --rev) rev=${2:?--rev needs a commit}; shift 2 ;;
        -h | --help) sed -n '2,17p' "$0" | cut -c3-; exit 0 ;;
        *) echo "third-party-prepare: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

# The sample directories: the second field of the list's sample lines.
mapfile -t dirs < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$LIST" |
    awk -F'|' '{ gsub(/^[ \t]+|[ \t]+$/, "", $2); print $2 }' | sort -u)
if [ "${#dirs[@]}" = 0 ]; then
    echo "third-party-prepare: $LIST names no sample" >&2
    exit 1
fi
for d in "${dirs[@]}"; do
    if [[ -z "$d" || "$d" == *..* || "$d" == /* ]]; then
        echo "third-party-prepare: $LIST: bad sample directory '$d'" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrr-third-party.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ -n "$from" ]; then
    # A clone's work tree or a git directory (bare, a mirror, a .git).
    if [ -d "$from/.git" ]; then gitdir=$from/.git; else gitdir=$from; fi
    if ! git --git-dir="$gitdir" rev-parse -q --verify "$rev^{commit}" >/dev/null 2>&1; then
        echo "third-party-prepare: $from does not hold commit $rev" >&2
        exit 1
    fi
    source_desc="$from"
else
    # A shallow, blob-less fetch of the one commit: git archive below then
    # fetches only the blobs it reads (the remote is a promisor).
    gitdir=$tmp/git
    git init -q --bare "$gitdir"
    git --git-dir="$gitdir" remote add origin "$URL"
    if ! git --git-dir="$gitdir" fetch -q --depth 1 --filter=blob:none origin "$rev"; then
        echo "third-party-prepare: could not fetch $rev from $URL (no network? use --from GITDIR)" >&2
        exit 1
    fi
    source_desc="$URL"
fi

# The files: the samples' (not their doc/ and .vscode/), Common/'s top-level
# headers (not its GL, NPP, data or Windows libraries), the licence. Listed
# from the trees alone; git archive is not used because it reads blobs
# outside its pathspecs, which a blob-less fetch then downloads one by one.
listing=$tmp/files
git --git-dir="$gitdir" ls-tree -r --full-tree "$rev" -- LICENSE Common "${dirs[@]/#/Samples/}" |
    awk -F'\t' '$1 ~ / blob / && ($2 == "LICENSE" || $2 ~ /^Common\/[^\/]*\.h$/ ||
        ($2 ~ /^Samples\// && $2 !~ /\/(doc|\.vscode)\//)) { print }' >"$listing"
if [ ! -s "$listing" ]; then
    echo "third-party-prepare: no files listed at $rev" >&2
    exit 1
fi
if [ -z "$from" ]; then
    # One fetch for all the blobs, as git itself fetches from a promisor.
    if ! awk '{ print $3 }' "$listing" | git --git-dir="$gitdir" -c fetch.negotiationAlgorithm=noop \
        fetch -q origin --no-tags --no-write-fetch-head --recurse-submodules=no --filter=blob:none --stdin; then
        echo "third-party-prepare: could not fetch the files' contents from $URL" >&2
        exit 1
    fi
fi
mkdir -p "$tmp/out"
while IFS=$'\t' read -r meta path; do
    read -r mode _ oid <<<"$meta"
    mkdir -p "$tmp/out/$(dirname "$path")"
    if ! git --git-dir="$gitdir" cat-file blob "$oid" >"$tmp/out/$path"; then
        echo "third-party-prepare: cannot read $path ($oid) at $rev" >&2
        exit 1
    fi
    [ "$mode" != 100755 ] || chmod +x "$tmp/out/$path"
done <"$listing"
missing=()
for d in "${dirs[@]}"; do
    [ -d "$tmp/out/Samples/$d" ] || missing+=("$d")
done
if [ "${#missing[@]}" != 0 ]; then
    echo "third-party-prepare: $rev has no Samples/ directory for: ${missing[*]}" >&2
    exit 1
fi

{
    echo "NVIDIA/cuda-samples $(git --git-dir="$gitdir" rev-parse "$rev^{commit}")" \
        "($(git --git-dir="$gitdir" describe --tags "$rev" 2>/dev/null ||
            { [ "$rev" = "$PIN" ] && echo "$PIN_DESC"; } || echo 'no tag'))"
    echo "licence: BSD-3-Clause (LICENSE)"
    echo "from: $source_desc"
    echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "samples: ${#dirs[@]} directories (scripts/cuda-samples.list)"
} >"$tmp/out/REVISION"

rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$tmp/out" "$DEST"
echo "third-party-prepare: $DEST: $(du -sh "$DEST" | cut -f1), $(find "$DEST" -type f | wc -l) files, ${#dirs[@]} sample directories at ${rev:0:12}"
