/* Shared helpers for the hrr end-to-end workloads (host side).
 *
 * Plain C against Debian's HIP/HSA headers: compile with
 *   gcc -D__HIP_PLATFORM_AMD__ -I tests/workloads app.c -lhrr_hip_cpu
 * Every workload prints what it checked and exits non-zero on a wrong result. */
#ifndef HRR_WORKLOAD_H
#define HRR_WORKLOAD_H

#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        hipError_t e_ = (call);                                                  \
        if (e_ != hipSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,   \
                    #call, hipGetErrorString(e_), (int)e_);                      \
            exit(3);                                                             \
        }                                                                        \
    } while (0)

#define EXPECT(cond, ...)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,     \
                    #cond);                                                      \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* Path of a kernel code object: the directory comes from the build
 * (-DHRR_KERNEL_DIR="…") or the environment (HRR_KERNEL_DIR). */
static inline const char *hrr_kernel_path(const char *name, char *buf, size_t n) {
    const char *dir = getenv("HRR_KERNEL_DIR");
#ifdef HRR_KERNEL_DIR
    if (!dir) dir = HRR_KERNEL_DIR;
#endif
    if (!dir) dir = ".";
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

/* Reads a whole file (a code object for hipModuleLoadData). */
static inline void *hrr_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(3); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(3); }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static inline hipModule_t hrr_load_module_data(const char *so) {
    char path[4096];
    size_t len;
    void *img = hrr_read_file(hrr_kernel_path(so, path, sizeof path), &len);
    hipModule_t m;
    CHECK(hipModuleLoadData(&m, img));
    free(img); /* HIP copies the image; keep the workload honest about that */
    return m;
}

static inline hipModule_t hrr_load_module_file(const char *so) {
    char path[4096];
    hipModule_t m;
    CHECK(hipModuleLoad(&m, hrr_kernel_path(so, path, sizeof path)));
    return m;
}

#endif
