/* Runtime-layer work issued to a stream the driver is capturing (the
 * stand-in driver's cuStreamBeginCapture_v2): a memset, an event record and
 * a wait join the capture and are not recorded as run; the same calls after
 * cuStreamEndCapture are. */
#include <stdio.h>

#include "stand_in_cuda.h"

int cudaMallocAsync(void **, size_t, void *);
int cudaMemsetAsync_ptsz(void *, int, size_t, void *);
int cudaEventCreateWithFlags(void **, unsigned);
int cudaEventRecord(void *, void *);
int cudaStreamWaitEvent(void *, void *, unsigned);

int main(void) {
    void *d, *e, *g, *s = (void *)0x6000;
    CHECK(cudaMallocAsync(&d, 64, NULL));
    CHECK(cudaEventCreateWithFlags(&e, 0));
    CHECK(cuStreamBeginCapture_v2(s, 0));
    CHECK(cudaMemsetAsync_ptsz(d, 1, 64, s));
    CHECK(cudaEventRecord(e, s));
    CHECK(cudaStreamWaitEvent(s, e, 0));
    CHECK(cuStreamEndCapture(s, &g));
    CHECK(cudaMemsetAsync_ptsz(d, 2, 64, s));
    CHECK(cudaEventRecord(e, s));
    CHECK(cudaStreamWaitEvent(s, e, 0));
    printf("runtime_capture: OK\n");
    return 0;
}
