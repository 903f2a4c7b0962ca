#!/usr/bin/env bash
# Seeds the fuzz corpora from real captures: builds the tools, compiles the
# C workloads of tests/workloads/ against the CPU runtime, captures each one
# (hrr-cap, plus hrr-sidecar from its HRR_SEGMENT lines), and copies the
# archive's files into the corpus directory of each fuzz target:
#
#   lib/hrr-core/fuzz/corpus/event_reader/   events.ndjson files
#   lib/hrr-core/fuzz/corpus/manifest/       manifest.json files
#   lib/hrr-core/fuzz/corpus/sidecar/        regions/*.ndjson
#   lib/hrr-core/fuzz/corpus/hrrr/           .hrrr streams (written from the sidecars)
#   lib/hrr-replay/fuzz/corpus/archive/      whole archives, packed (see hrr_replay::fuzzing)
#   lib/hrr-core/fuzz/corpus/archive_dir/    the same, each with file-kind layouts
#                                            (scripts/fuzz-layouts.py)
#   lib/hrr-codeobj/fuzz/corpus/any_image/   code objects (blobs of module loads; not with --seeds)
#
#   scripts/fuzz-corpus.sh            fill the corpus/ directories (not in git)
#   scripts/fuzz-corpus.sh --seeds    refresh the small checked-in seeds/ instead
#                                     (first 64 lines of each file, small blobs),
#                                     and hrr-codeobj's seeds: the test fixtures
#                                     and CPU kernels of tests/workloads/kernels/,
#                                     wrapped as programs hand them over
#                                     (hrr-codeobj's fuzz_seeds example)
#
# Needs: Rust, gcc, python3 and the Debian packages of scripts/apt-packages.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
kind=corpus
max_lines=0
if [[ "${1:-}" == "--seeds" ]]; then
    kind=seeds
    max_lines=64
fi

cargo build -q -p hrr-cap -p hrr-play -p hrr-sidecar -p hrr-intercept -p hrr-runtime-cpu
bin=$root/target/debug
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

w=$root/tests/workloads
mkdir -p "$work/kernels"
for k in "$w"/kernels/*.c; do
    gcc -shared -fPIC -O2 -I "$w/include" "$k" -o "$work/kernels/$(basename "$k" .c).so"
done

core=$root/lib/hrr-core/fuzz/$kind
replay=$root/lib/hrr-replay/fuzz/$kind
codeobj=$root/lib/hrr-codeobj/fuzz/corpus
# Code objects are seeded from the fixtures there (see its README); in
# --seeds mode the captured ones are not checked in.
[[ $kind == seeds ]] && codeobj=$work/codeobj
mkdir -p "$core"/{event_reader,manifest,sidecar,hrrr} "$replay/archive" "$codeobj/any_image"

# Copies $1 to $2, keeping its first $max_lines lines when trimming seeds.
put() {
    if [[ $max_lines -gt 0 ]]; then
        head -n "$max_lines" "$1" > "$2"
    else
        cp "$1" "$2"
    fi
}

capture() { # name [args...]
    local name=$1; shift
    local tag=$name${1:+-$1}
    gcc -D__HIP_PLATFORM_AMD__ -O1 -pthread \
        -DHRR_KERNEL_DIR="\"$work/kernels\"" -DHRR_BUNDLE_PATH="\"$work/fatbin.bundle\"" \
        -I "$w" -I "$w/include" "$w/$name.c" -o "$work/$name" \
        -L "$bin" -lhrr_hip_cpu -Wl,-rpath,"$bin" 2>/dev/null || { echo "skip $name"; return; }
    local a=$work/$tag.hrr
    (cd "$work" && "$bin/hrr-cap" -o "$a" -- "./$name" "$@" > "$work/$tag.log" 2>/dev/null) || true
    [[ -f $a/manifest.json ]] || { echo "skip $tag (nothing recorded)"; return; }
    if grep -q HRR_SEGMENT "$work/$tag.log"; then
        grep HRR_SEGMENT "$work/$tag.log" | "$bin/hrr-sidecar" --archive "$a" 2>/dev/null || true
    fi
    # Neutral paths: the manifest names the runtime library by its path.
    python3 - "$a/manifest.json" "$root" <<'PY'
import sys
p, root = sys.argv[1], sys.argv[2]
s = open(p).read().replace(root + "/", "/src/hrr/")
open(p, "w").write(s)
PY
    put "$a/events.ndjson" "$core/event_reader/$tag.ndjson"
    cp "$a/manifest.json" "$core/manifest/$tag.json"
    for r in "$a"/regions/*.ndjson; do
        [[ -f $r ]] && cp "$r" "$core/sidecar/$tag-$(basename "$r")"
    done
    python3 "$root/scripts/fuzz-pack.py" "$a" "$replay/archive/$tag.pack" "$max_lines" \
        "$codeobj/any_image" "$core/hrrr"
    echo "captured $tag"
}

capture saxpy_module
capture launch_repeat
capture struct_arg
capture pool_interior
capture streams_threads
capture fatbin_path
capture hidden_segment
capture seed_variants hostdst
capture seed_variants d2d
capture seed_variants kernel
python3 "$root/scripts/fuzz-layouts.py" "$replay/archive" "$core/archive_dir"
if [[ $kind == seeds ]]; then
    # Small CPU code objects (stripped, segments not page-aligned) of the
    # kernels the end-to-end tests load.
    mkdir -p "$work/seed-kernels"
    for k in fill struct_arg globals; do
        gcc -shared -fPIC -O2 -s -Wl,-z,noseparate-code -Wl,--build-id=none \
            -I "$w/include" "$w/kernels/$k.c" -o "$work/seed-kernels/$k.so"
    done
    cargo run -q -p hrr-codeobj --features fuzzing --example fuzz_seeds -- \
        "$root/lib/hrr-codeobj/fuzz/seeds" "$work"/seed-kernels/*.so
fi
echo "fuzz-corpus: $kind directories filled"
