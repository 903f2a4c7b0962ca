/* A program on a CUDA runtime that reaches the driver through
 * cuGetProcAddress: each runtime call must be one event, under its runtime
 * name, however many driver calls it makes. */
#include <stdio.h>
#include <string.h>

int cudaMalloc(void **, size_t);
int cudaMemcpy(void *, const void *, size_t, int);

int main(void) {
    unsigned char up[256], down[256];
    void *d = NULL;
    for (int i = 0; i < 256; i++) up[i] = (unsigned char)i;
    if (cudaMalloc(&d, sizeof up) || cudaMemcpy(d, up, sizeof up, 1) ||
        cudaMemcpy(down, d, sizeof down, 2) || memcmp(up, down, sizeof up)) {
        printf("WRONG\n");
        return 1;
    }
    printf("runtime_nested: OK\n");
    return 0;
}
