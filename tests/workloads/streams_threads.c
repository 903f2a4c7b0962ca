/* Several host threads, each with two streams: async H2D on one stream, a
 * kernel on it, an event recorded after the kernel, the second stream waits on
 * that event (hipStreamWaitEvent) and copies the result back asynchronously
 * into pinned memory; hipEventElapsedTime over the whole chain. */
#include "hrr_workload.h"

#include <pthread.h>

#define THREADS 4
#define ROUNDS 3
#define N (1 << 14)

static hipFunction_t g_scale_add;

struct job {
    int id;
    int failed;
    float ms_total;
};

static void *worker(void *arg) {
    struct job *job = arg;
    CHECK(hipSetDevice(0));
    hipStream_t s_compute, s_copy;
    CHECK(hipStreamCreate(&s_compute));
    CHECK(hipStreamCreateWithFlags(&s_copy, hipStreamNonBlocking));
    hipEvent_t start, done, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreateWithFlags(&done, hipEventDisableTiming));
    CHECK(hipEventCreate(&stop));

    float *h_in, *h_out;
    CHECK(hipHostMalloc((void **)&h_in, N * sizeof(float), hipHostMallocDefault));
    CHECK(hipHostMalloc((void **)&h_out, N * sizeof(float), hipHostMallocDefault));
    float *d_in, *d_out;
    CHECK(hipMalloc((void **)&d_in, N * sizeof(float)));
    CHECK(hipMalloc((void **)&d_out, N * sizeof(float)));

    for (int r = 0; r < ROUNDS; r++) {
        float k = (float)(job->id + 1);
        float add = (float)r;
        for (int i = 0; i < N; i++) h_in[i] = (float)(i % 1000) + (float)job->id * 0.25f;
        memset(h_out, 0, N * sizeof(float));
        CHECK(hipEventRecord(start, s_compute));
        CHECK(hipMemcpyAsync(d_in, h_in, N * sizeof(float), hipMemcpyHostToDevice, s_compute));
        int n = N;
        void *params[] = {&d_out, &d_in, &k, &add, &n};
        CHECK(hipModuleLaunchKernel(g_scale_add, N / 256, 1, 1, 256, 1, 1, 0, s_compute, params,
                                    NULL));
        CHECK(hipEventRecord(done, s_compute));
        CHECK(hipStreamWaitEvent(s_copy, done, 0));
        CHECK(hipMemcpyAsync(h_out, d_out, N * sizeof(float), hipMemcpyDeviceToHost, s_copy));
        CHECK(hipEventRecord(stop, s_copy));
        CHECK(hipStreamSynchronize(s_copy));
        CHECK(hipEventSynchronize(stop));
        float ms = -1.0f;
        CHECK(hipEventElapsedTime(&ms, start, stop));
        if (!(ms >= 0.0f)) {
            fprintf(stderr, "thread %d round %d: elapsed %g ms\n", job->id, r, ms);
            job->failed = 1;
        }
        job->ms_total += ms;
        for (int i = 0; i < N; i++) {
            float want = h_in[i] * k + add;
            if (h_out[i] != want) {
                fprintf(stderr, "thread %d round %d: out[%d] = %g, want %g\n", job->id, r, i,
                        h_out[i], want);
                job->failed = 1;
                break;
            }
        }
    }
    CHECK(hipStreamSynchronize(s_compute));
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_out));
    CHECK(hipHostFree(h_in));
    CHECK(hipHostFree(h_out));
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(done));
    CHECK(hipEventDestroy(stop));
    CHECK(hipStreamDestroy(s_compute));
    CHECK(hipStreamDestroy(s_copy));
    return NULL;
}

int main(void) {
    CHECK(hipInit(0));
    hipModule_t mod = hrr_load_module_file("streams.so");
    CHECK(hipModuleGetFunction(&g_scale_add, mod, "scale_add"));

    pthread_t th[THREADS];
    struct job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (struct job){t, 0, 0.0f};
        if (pthread_create(&th[t], NULL, worker, &jobs[t]) != 0) {
            perror("pthread_create");
            return 3;
        }
    }
    int failed = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        failed |= jobs[t].failed;
        printf("thread %d: %d rounds of H2D -> kernel -> event -> wait -> D2H %s (%.3f ms)\n", t,
               ROUNDS, jobs[t].failed ? "FAILED" : "ok", jobs[t].ms_total);
    }
    CHECK(hipDeviceSynchronize());
    CHECK(hipModuleUnload(mod));
    if (failed) {
        fprintf(stderr, "streams_threads: FAILED\n");
        return 1;
    }
    printf("streams_threads: OK\n");
    return 0;
}
