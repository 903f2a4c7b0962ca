#!/usr/bin/env bash
# Runs prebuilt libFuzzer binaries of the fuzz targets on a machine without
# Rust (the GPU machine has 16 cores), several processes per target sharing
# one corpus, and sums executions and crashes per target.
#
#   scripts/fuzz-farm.sh BIN_DIR SEED_DIR OUT_DIR SECONDS TARGET:PROCS...
#
# BIN_DIR holds the binaries `cargo +nightly fuzz build` left in
# lib/*/fuzz/target/x86_64-unknown-linux-gnu/release/ (named by target);
# SEED_DIR/<target>/ their seeds and corpora, or, where SEED_DIR has no
# such folder, the repository's lib/*/fuzz/seeds/<target>/ (so that a
# checkout plus the binaries is all a machine without Rust needs), or none
# (the codeobj targets have no checked-in seeds: their corpus alone). Each
# process runs SECONDS at nice 19 with the limits of scripts/fuzz.sh.
# Results go to OUT_DIR: corpus/<target>/ (what the fuzzer kept),
# artifacts/<target>/ (crashes), logs/<target>.<i>.log, and one line per
# target on stdout:
#   fuzz <target>: <executions> executions by <procs> processes in <SECONDS> s, <n> crash file(s)
# The logs leave out the replay engine's per-event error lines (`hrr-play:
# error:`, printed for inputs replayed with continue-on-error): about two
# per `archive` execution, gigabytes over ten million of them.
set -uo pipefail
if [[ $# -lt 5 ]]; then
    echo "usage: fuzz-farm.sh BIN_DIR SEED_DIR OUT_DIR SECONDS TARGET:PROCS..." >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$1 seeds=$2 out=$3 secs=$4
shift 4
# Everything is checked before the first process starts.
declare -A seed
for spec in "$@"; do
    t=${spec%%:*}
    if [[ ! -x $bin/$t ]]; then
        echo "fuzz-farm.sh: no binary $bin/$t" >&2
        exit 2
    fi
    seed[$t]=$seeds/$t
    [[ -d ${seed[$t]} ]] || seed[$t]=$(ls -d "$repo"/lib/*/fuzz/seeds/"$t" 2>/dev/null | head -1)
    [[ -n ${seed[$t]} ]] || echo "fuzz-farm.sh: no seeds for $t: starting from its corpus alone" >&2
done
mkdir -p "$out/logs"
pids=()
for spec in "$@"; do
    t=${spec%%:*} n=${spec##*:}
    dirs=("$out/corpus/$t")
    [[ -n ${seed[$t]} ]] && dirs+=("${seed[$t]}")
    mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
    max_len=16384
    [[ $t == archive ]] && max_len=262144
    for ((i = 0; i < n; i++)); do
        nice -n 19 "$bin/$t" "${dirs[@]}" -max_total_time="$secs" -timeout=20 \
            -max_len=$max_len -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
            -seed=$((1000 + i)) -artifact_prefix="$out/artifacts/$t/" 2>&1 |
            grep -v '^hrr-play: error: ' >"$out/logs/$t.$i.log" &
        pids+=($!)
    done
done
wait "${pids[@]}"
status=0
for spec in "$@"; do
    t=${spec%%:*} n=${spec##*:}
    execs=$(cat "$out/logs/$t".*.log | sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s += $1} END {print s + 0}')
    crashes=$(find "$out/artifacts/$t" -type f | wc -l)
    [[ $crashes == 0 ]] || status=1
    echo "fuzz $t: $execs executions by $n processes in $secs s, $crashes crash file(s)"
done
exit $status
