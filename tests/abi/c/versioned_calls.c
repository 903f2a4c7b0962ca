/* Linked against Debian's real libamdhip64.so.5, so every HIP reference in
 * this executable is versioned (hipMalloc@hip_4.2, …). Run with the interposer
 * preloaded (hrr-cap), each call must still reach libhrr_intercept.so and be
 * recorded. Without an AMD GPU the runtime fails them; the program prints
 * each return code and exits 0 either way (the archive is what is checked). */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <string.h>

#define CALL(expr)                                                 \
    do {                                                           \
        hipError_t e_ = (expr);                                    \
        printf("%s = %d\n", #expr, (int)e_);                       \
    } while (0)

int main(void) {
    void *d = NULL;
    static char host[4096];
    memset(host, 0x5a, sizeof host);
    CALL(hipSetDevice(0));
    CALL(hipMalloc(&d, sizeof host));
    CALL(hipMemcpy(d, host, sizeof host, hipMemcpyHostToDevice));
    CALL(hipMemset(d, 0, sizeof host));
    CALL(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
    CALL(hipDeviceSynchronize());
    CALL(hipFree(d));
    printf("versioned_calls: done\n");
    return 0;
}
