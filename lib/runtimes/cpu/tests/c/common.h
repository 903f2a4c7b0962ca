/* Shared helpers of the C integration tests of libhrr_hip_cpu.so. */
#ifndef HRR_TEST_COMMON_H
#define HRR_TEST_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

static int g_checks, g_failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        g_checks++;                                                              \
        if (!(cond)) {                                                           \
            g_failures++;                                                        \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                        \
    } while (0)

/* Checks a hipError_t result against an expected value. */
#define EXPECT(call, want)                                                       \
    do {                                                                         \
        hipError_t e_ = (call);                                                  \
        g_checks++;                                                              \
        if (e_ != (want)) {                                                      \
            g_failures++;                                                        \
            printf("FAIL %s:%d: %s returned %d (%s), want %s\n", __FILE__,       \
                   __LINE__, #call, (int)e_, hipGetErrorName(e_), #want);        \
        }                                                                        \
    } while (0)

#define OK(call) EXPECT(call, hipSuccess)

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int finish(const char *name) {
    printf("%s: %d checks, %d failures\n", name, g_checks, g_failures);
    return g_failures ? 1 : 0;
}
#endif
