/* A program on the shared CUDA runtime (the stand-in, tests/c/fake_cuda)
 * making runtime calls of every kind the capture library records: pinned
 * and stream-ordered allocations, a per-thread-stream memset and async
 * D2H copy, streams, events, synchronisation, device selection, frees.
 * It checks what the capture library must leave alone: the thread's last
 * error (the recorder's own pointer queries fail here and must not show)
 * and, for a function its runtime lacks, cudaErrorNotSupported. Prints the
 * stream the recorder synchronised before reading the D2H result. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *cudaStream_t;
typedef void *cudaEvent_t;
enum { cudaMemcpyDefault = 4 };

int cudaMallocHost(void **, size_t);
int cudaFreeHost(void *);
int cudaMallocAsync(void **, size_t, cudaStream_t);
int cudaFreeAsync(void *, cudaStream_t);
int cudaMemsetAsync_ptsz(void *, int, size_t, cudaStream_t);
int cudaMemcpyAsync_ptsz(void *, const void *, size_t, int, cudaStream_t);
int cudaMemcpy_ptds(void *, const void *, size_t, int);
int cudaStreamCreate(cudaStream_t *);
int cudaStreamDestroy(cudaStream_t);
int cudaStreamSynchronize_ptsz(cudaStream_t);
int cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned);
int cudaEventCreateWithFlags(cudaEvent_t *, unsigned);
int cudaEventDestroy(cudaEvent_t);
int cudaEventRecord(cudaEvent_t, cudaStream_t);
int cudaEventSynchronize(cudaEvent_t);
int cudaDeviceSynchronize(void);
int cudaSetDevice(int);
int cudaGetLastError(void);
void *fake_last_sync(void);

#define CHECK(x)                                              \
    do {                                                      \
        int e_ = (x);                                         \
        if (e_) {                                             \
            printf("WRONG: %s returned %d\n", #x, e_);        \
            return 1;                                         \
        }                                                     \
    } while (0)

int main(void) {
    void *h = NULL, *d = NULL;
    cudaStream_t s;
    cudaEvent_t ev;
    unsigned char down[64], up[64], copy[64];
    memset(up, 7, sizeof up);
    CHECK(cudaMallocHost(&h, 64));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreateWithFlags(&ev, 0));
    CHECK(cudaMallocAsync(&d, 64, s));
    CHECK(cudaMemsetAsync_ptsz(d, 0x5a, 64, s));
    /* The per-thread default stream (0 under _ptsz): the recorder waits for
     * it before reading the result. */
    CHECK(cudaMemcpyAsync_ptsz(down, d, 64, cudaMemcpyDefault, 0));
    printf("synced=%p\n", fake_last_sync());
    CHECK(cudaEventRecord(ev, s));
    CHECK(cudaStreamWaitEvent(s, ev, 0));
    CHECK(cudaEventSynchronize(ev));
    CHECK(cudaStreamSynchronize_ptsz(s));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(0));
    /* Host to host by cudaMemcpyDefault: the recorder asks the runtime
     * about both pointers, which fails here; no error may remain. */
    CHECK(cudaMemcpy_ptds(copy, up, sizeof up, cudaMemcpyDefault));
    CHECK(cudaGetLastError());
    /* With an error of the application's pending, the recorder clears
     * nothing: the application still finds an error (CUDA keeps the last
     * one: here the failed query's). */
    if (cudaSetDevice(7) != 101) {
        printf("WRONG: cudaSetDevice(7)\n");
        return 1;
    }
    CHECK(cudaMemcpy_ptds(copy, up, sizeof up, cudaMemcpyDefault));
    int pending = cudaGetLastError();
    if (pending == 0) {
        printf("WRONG: the application's pending error was cleared\n");
        return 1;
    }
    printf("pending=%d\n", pending);
    /* A runtime function the stand-in lacks, through the interposer's export. */
    int (*managed)(void **, size_t, unsigned) =
        (int (*)(void **, size_t, unsigned))dlsym(RTLD_DEFAULT, "cudaMallocManaged");
    void *m = NULL;
    printf("managed=%d\n", managed ? managed(&m, 64, 1) : -1);
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h));
    for (int i = 0; i < 64; i++) {
        if (down[i] != 0x5a || copy[i] != 7) {
            printf("WRONG: data\n");
            return 1;
        }
    }
    printf("runtime_calls: OK\n");
    return 0;
}
