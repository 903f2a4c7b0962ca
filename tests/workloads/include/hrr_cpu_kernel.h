/*
 * hrr_cpu_kernel.h — writing kernels for hrr's CPU HIP runtime (libhrr_hip_cpu.so).
 *
 * A CPU code object is an ELF shared object (gcc -shared -fPIC) whose kernels are
 * C functions
 *
 *     void NAME(const hrr_cpu_launch *l, const void *kernarg);
 *
 * plus a section ".hrr.kernels" holding JSON metadata in the shape of AMDGPU
 * code-object metadata:
 *
 *     {"kernels":[{"name":"saxpy","symbol":"saxpy","kernarg_segment_size":24,
 *       "args":[{"offset":0,"size":8,"value_kind":"global_buffer"},
 *               {"offset":8,"size":4,"value_kind":"by_value"}]}]}
 *
 * ("symbol" defaults to "name"; "kernarg_segment_size" defaults to the end of the
 * last argument; pointers are "global_buffer", everything else "by_value").
 * Several HRR_KERNEL_METADATA blocks (e.g. one per translation unit) may coexist:
 * the runtime parses every NUL-separated JSON document in the section.
 *
 * The runtime calls a kernel once per block, blocks spread over a thread pool.
 * `l->shared` points at `sharedMemBytes` of zeroed per-block scratch (NULL when 0).
 * The kernel loops over the threads of its block itself (HRR_FOR_EACH_THREAD);
 * there is no __syncthreads: write a block as consecutive thread loops instead.
 * `kernarg` is the packed argument segment, laid out by the metadata's offsets:
 * read it with HRR_ARG or cast it to a struct with the same layout.
 *
 *     #include "hrr_cpu_kernel.h"
 *     struct saxpy_args { float *y; const float *x; float a; uint32_t n; };
 *     HRR_KERNEL(saxpy) {
 *         const struct saxpy_args *a = (const struct saxpy_args *)kernarg;
 *         HRR_FOR_EACH_THREAD(tx, ty, tz) {
 *             uint64_t i = hrr_global_id_x(l, tx);
 *             if (i < a->n) a->y[i] = a->a * a->x[i] + a->y[i];
 *         }
 *     }
 *     HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"saxpy\",\"args\":["
 *         "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
 *         "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
 *         "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
 *         "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
 *
 * Build: gcc -O2 -shared -fPIC -I tests/workloads/include k.c -o k.so
 * Load:  hipModuleLoad / hipModuleLoadData (ELF, or a clang offload bundle with
 *        entry "hipv4-x86_64-unknown-linux-gnu-cpu"), or a HIPF wrapper around
 *        such a bundle through __hipRegisterFatBinary.
 */
#ifndef HRR_CPU_KERNEL_H
#define HRR_CPU_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define HRR_EXTERN_C extern "C"
#else
#define HRR_EXTERN_C
#endif

typedef struct { uint32_t x, y, z; } hrr_dim3;

typedef struct hrr_cpu_launch {
    hrr_dim3 grid_dim;  /* blocks in the grid */
    hrr_dim3 block_dim; /* threads in a block */
    hrr_dim3 block_idx; /* this block */
    void *shared;       /* per-block zeroed scratch of sharedMemBytes, or NULL */
} hrr_cpu_launch;

/* Defines a kernel entry point; its parameters are `l` (the launch) and `kernarg`. */
#define HRR_KERNEL(name)                                                         \
    HRR_EXTERN_C __attribute__((visibility("default"), used)) void name(        \
        const hrr_cpu_launch *l, const void *kernarg)

/* Emits the .hrr.kernels metadata (a JSON string literal). */
#define HRR_KERNEL_METADATA(json)                                                \
    __attribute__((section(".hrr.kernels"), used)) static const char             \
        hrr_kernel_metadata[] = json

/* Loops over every thread (tx, ty, tz) of the current block; needs `l` in scope. */
#define HRR_FOR_EACH_THREAD(tx, ty, tz)                                          \
    for (uint32_t tz = 0; tz < l->block_dim.z; ++tz)                             \
        for (uint32_t ty = 0; ty < l->block_dim.y; ++ty)                         \
            for (uint32_t tx = 0; tx < l->block_dim.x; ++tx)

/* The argument of type T at byte offset OFF of the kernarg segment. */
#define HRR_ARG(T, OFF) (*(T const *)((const char *)kernarg + (OFF)))

static inline uint64_t hrr_global_id_x(const hrr_cpu_launch *l, uint32_t tx) {
    return (uint64_t)l->block_idx.x * l->block_dim.x + tx;
}
static inline uint64_t hrr_global_id_y(const hrr_cpu_launch *l, uint32_t ty) {
    return (uint64_t)l->block_idx.y * l->block_dim.y + ty;
}
static inline uint64_t hrr_global_id_z(const hrr_cpu_launch *l, uint32_t tz) {
    return (uint64_t)l->block_idx.z * l->block_dim.z + tz;
}
/* Threads in the grid along each axis. */
static inline uint64_t hrr_global_size_x(const hrr_cpu_launch *l) {
    return (uint64_t)l->grid_dim.x * l->block_dim.x;
}
static inline uint64_t hrr_global_size_y(const hrr_cpu_launch *l) {
    return (uint64_t)l->grid_dim.y * l->block_dim.y;
}
static inline uint64_t hrr_global_size_z(const hrr_cpu_launch *l) {
    return (uint64_t)l->grid_dim.z * l->block_dim.z;
}
/* Linear index of the block in the grid (x fastest). */
static inline uint64_t hrr_block_linear(const hrr_cpu_launch *l) {
    return ((uint64_t)l->block_idx.z * l->grid_dim.y + l->block_idx.y) * l->grid_dim.x + l->block_idx.x;
}

#endif /* HRR_CPU_KERNEL_H */
