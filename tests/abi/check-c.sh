#!/usr/bin/env bash
# C-side ABI checks against Debian's real ROCm 5.2 (C layouts, workloads, hipcc host IR), run by
# scripts/abi-check.sh:
#
#   1. layouts   tests/abi/c/layouts.c, built against Debian's HIP/HSA headers,
#                prints the by-value struct layouts abi/src/lib.rs registers
#                (abi_struct!); each must match.
#   2. workloads every bundled C workload (tests/workloads/*.c) compiles with
#                -Werror against Debian's headers AND links against the real
#                libamdhip64.so.5 + libhsa-runtime64.so.1 (not only against hrr's
#                CPU runtime, as the e2e tests do): each HIP reference resolves
#                to a versioned ROCm symbol (hipMalloc@hip_4.2, …).
#   3. hipcc     tests/abi/hip/vector_add.hip built by Debian's hipcc for gfx90a
#                (compile + link; cannot run here): the executable embeds a clang
#                offload bundle with a gfx90a AMDGPU code object whose
#                NT_AMDGPU_METADATA names the kernel.
#   4. host-ir   clang-15 HIP host codegen of the same file and of device_vars.hip:
#                the declarations clang emits for the compiler-ABI entry points
#                (__hipRegisterFatBinary/Function/Var/ManagedVar/Surface/Texture,
#                __hipUnregisterFatBinary, __hipPush/PopCallConfiguration,
#                hipLaunchKernel) are those
#                abi/src/reference.rs transcribes.
#
# Usage: tests/abi/check-c.sh WORKDIR     (exit 0: all passed)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:?usage: check-c.sh WORKDIR}"
mkdir -p "$work"
fails=0
pass() { echo "abi-c: PASS $*"; }
fail() { echo "abi-c: FAIL $*"; fails=$((fails + 1)); }

CC="${CC:-gcc}"
HIPFLAGS=(-D__HIP_PLATFORM_AMD__ -Wall -Werror -Wno-deprecated-declarations)

# ---------------------------------------------------------------- 1. layouts
if "$CC" "${HIPFLAGS[@]}" -std=gnu11 "$here/c/layouts.c" -o "$work/layouts" 2>"$work/layouts.err"; then
    "$work/layouts" >"$work/layouts.txt"
    # `path => "c_name" [size, align]` lines of abi/src/lib.rs
    expected=$(sed -n 's/.*=> "\([A-Za-z0-9_]*\)" \[\([0-9]*\), \([0-9]*\)\].*/\1 \2 \3/p' "$root/abi/src/lib.rs" | sort -u)
    [ -n "$expected" ] || fail "layouts: no abi_struct! registrations found in abi/src/lib.rs"
    while read -r name size align; do
        [ -z "$name" ] && continue
        got=$(awk -v n="$name" '$1 == n { print $2, $3 }' "$work/layouts.txt")
        if [ "$got" = "$size $align" ]; then
            pass "layout $name = $size/$align (gcc, Debian headers)"
        else
            fail "layout $name: abi/src/lib.rs says $size/$align, gcc says '${got:-not printed}'"
        fi
    done <<<"$expected"
else
    fail "layouts.c does not compile against Debian's headers: $(cat "$work/layouts.err")"
fi

# ---------------------------------------------------------------- 2. workloads
hsa_lib=(-lhsa-runtime64)
n=0
for src in "$root"/tests/workloads/*.c; do
    name=$(basename "$src" .c)
    exe="$work/wl_$name"
    extra=()
    # fatbin_path.c embeds an offload bundle with .incbin; any file links.
    if grep -q HRR_BUNDLE_PATH "$src"; then
        : >"$work/empty.bundle"
        extra+=(-DHRR_BUNDLE_PATH="\"$work/empty.bundle\"")
    fi
    # The collectives' workload calls RCCL's API, which Debian does not
    # package: its nccl* references stay for the stand-in (or RCCL) to bind.
    if grep -q ncclGetUniqueId "$src"; then
        extra+=(-Wl,--unresolved-symbols=ignore-in-object-files)
    fi
    if "$CC" "${HIPFLAGS[@]}" "${extra[@]}" -I "$root/tests/workloads" -I "$root/tests/workloads/include" \
        "$src" -o "$exe" -lamdhip64 "${hsa_lib[@]}" -lm -lpthread 2>"$exe.err"; then
        unversioned=$(readelf --dyn-syms -W "$exe" | awk '$7 == "UND" && $8 ~ /^(hip|__hip)/ && $8 !~ /@hip_[0-9.]+/ { print $8 }')
        if [ -n "$unversioned" ]; then
            fail "workload $name: HIP references not bound to a ROCm version node: $unversioned"
        else
            n=$((n + 1))
        fi
    else
        fail "workload $name does not build against the real ROCm 5.2: $(head -5 "$exe.err")"
    fi
done
[ "$n" -gt 0 ] && pass "$n workloads compile against Debian's HIP/HSA headers and link against libamdhip64.so.5 (versioned refs)"

# ---------------------------------------------------------------- 3. hipcc
HIPCC="${HIPCC:-hipcc}"
vexe="$work/vector_add"
cmd=("$HIPCC" --offload-arch=gfx90a "$here/hip/vector_add.hip" -o "$vexe")
echo "abi-c: + ${cmd[*]}"
if "${cmd[@]}" >"$work/hipcc.log" 2>&1; then
    bundler=$(command -v clang-offload-bundler-15 || echo /usr/lib/llvm-15/bin/clang-offload-bundler)
    objcopy -O binary --only-section=.hip_fatbin "$vexe" "$work/vector_add.fatbin"
    targets=$("$bundler" --list --type=o --input="$work/vector_add.fatbin" 2>&1)
    if grep -qx 'hipv4-amdgcn-amd-amdhsa--gfx90a' <<<"$targets" &&
        "$bundler" --unbundle --type=o --input="$work/vector_add.fatbin" \
            --targets=hipv4-amdgcn-amd-amdhsa--gfx90a --output="$work/vector_add.gfx90a.co" 2>/dev/null &&
        readelf -h "$work/vector_add.gfx90a.co" | grep -q 'AMD GPU' &&
        readelf -h "$work/vector_add.gfx90a.co" | grep -q 'gfx90a' &&
        readelf -n "$work/vector_add.gfx90a.co" | grep -q NT_AMDGPU_METADATA &&
        strings "$work/vector_add.gfx90a.co" | grep -q '_Z10vector_addPKfS0_Pf5Scale'; then
        pass "hipcc --offload-arch=gfx90a: linked $(basename "$vexe"); bundle entries: $(tr '\n' ' ' <<<"$targets"); gfx90a code object with NT_AMDGPU_METADATA for _Z10vector_addPKfS0_Pf5Scale"
    else
        fail "hipcc output lacks a gfx90a AMDGPU code object (bundle entries: $targets)"
    fi
    refs=$(readelf --dyn-syms -W "$vexe" | awk '$7 == "UND" && $8 ~ /^(hip|__hip)/ { print $8 }' | sort | tr '\n' ' ')
    if grep -q '__hipRegisterFatBinary@hip_4.2' <<<"$refs" && grep -q 'hipLaunchKernel@hip_4.2' <<<"$refs"; then
        pass "vector_add references: $refs"
    else
        fail "vector_add does not reference the versioned compiler-ABI entry points: $refs"
    fi
else
    fail "hipcc failed: $(tail -20 "$work/hipcc.log")"
fi

# ---------------------------------------------------------------- 4. host IR
CLANGXX="${CLANGXX:-clang++-15}"
if "$CLANGXX" -x hip --offload-arch=gfx90a --cuda-host-only --rocm-path=/usr \
    --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode -std=c++17 -O0 -S -emit-llvm \
    -o "$work/vector_add.host.ll" "$here/hip/vector_add.hip" 2>"$work/host-ir.err"; then
    # What abi/src/reference.rs and Debian's header declare, as clang lowers them
    # for x86-64 (dim3 by value = {i64, i32}; size_t = i64). clang declares
    # __hipRegisterFunction with an i32 result that it never reads; ROCm
    # defines it void (hip_platform.cpp): compatible, as the result is unused.
    want=(
        'ptr @__hipRegisterFatBinary(ptr)'
        '@__hipRegisterFunction(ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr)'
        'void @__hipUnregisterFatBinary(ptr)'
        'i32 @__hipPushCallConfiguration(i64, i32, i64, i32, i64 noundef, ptr noundef)'
        'i32 @__hipPopCallConfiguration(ptr, ptr, ptr, ptr)'
        'i32 @hipLaunchKernel(ptr, i64, i32, i64, i32, ptr, i64, ptr)'
    )
    for w in "${want[@]}"; do
        if grep -E '^declare ' "$work/vector_add.host.ll" | grep -qF "$w"; then
            pass "host IR: declare … $w"
        else
            fail "host IR lacks '$w'; clang declared: $(grep -E '^declare .*@_*hip' "$work/vector_add.host.ll" | tr '\n' ';')"
        fi
    done
else
    fail "clang++-15 -x hip host codegen failed: $(head -5 "$work/host-ir.err")"
fi
# Device variables: the registration calls for each kind (reference.rs:
# ptr modules, ptr var, ptr hostVar, ptr deviceVar, int…, size_t size, …).
if "$CLANGXX" -x hip --offload-arch=gfx90a --cuda-host-only --rocm-path=/usr \
    --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode -std=c++17 -O0 -S -emit-llvm \
    -o "$work/device_vars.host.ll" "$here/hip/device_vars.hip" 2>"$work/host-ir-vars.err"; then
    want=(
        'void @__hipRegisterVar(ptr, ptr, ptr, ptr, i32, i64, i32, i32)'
        'void @__hipRegisterManagedVar(ptr, ptr, ptr, ptr, i64, i32)'
        'void @__hipRegisterSurface(ptr, ptr, ptr, ptr, i32, i32)'
        'void @__hipRegisterTexture(ptr, ptr, ptr, ptr, i32, i32, i32)'
    )
    for w in "${want[@]}"; do
        if grep -E '^declare ' "$work/device_vars.host.ll" | grep -qF "$w"; then
            pass "host IR: declare … $w"
        else
            fail "host IR lacks '$w'; clang declared: $(grep -E '^declare .*@_*hip' "$work/device_vars.host.ll" | tr '\n' ';')"
        fi
    done
else
    fail "clang++-15 -x hip host codegen of device_vars.hip failed: $(head -5 "$work/host-ir-vars.err")"
fi

echo "abi-c: $fails failure(s)"
[ "$fails" -eq 0 ]
