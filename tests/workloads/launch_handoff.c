/* One thread's repeated launches, read back by another thread: a worker
 * launches `add` on one buffer again and again (repeats the recorder
 * defers, lib/capture/recorder/src/sink/repeat_run.rs), then hands over; the main
 * thread copies the buffer back and checks it. In the archive the copy must
 * follow every launch before the hand-over, or its replay reads the buffer
 * too early and the D2H check fails. Some rounds hand over at once (the
 * copy writes the worker's pending launches), some after a pause (the
 * capture's writer thread has written them). */
#include "hrr_workload.h"

#include <pthread.h>
#include <time.h>

#define N 32
#define ROUNDS 6
#define LAUNCHES 3000

static hipFunction_t add;
static unsigned *d;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int launched = -1, checked = -1;

static void *worker(void *arg) {
    (void)arg;
    unsigned one = 1;
    void *params[] = {&d, &one};
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < LAUNCHES; i++)
            CHECK(hipModuleLaunchKernel(add, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
        if (r % 2) {
            struct timespec pause = {0, 20 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&mu);
        launched = r;
        pthread_cond_broadcast(&cv);
        while (checked < r) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("repeat.so");
    CHECK(hipModuleGetFunction(&add, mod, "add"));
    CHECK(hipMalloc((void **)&d, N * sizeof(unsigned)));
    CHECK(hipMemset(d, 0, N * sizeof(unsigned)));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        while (launched < r) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        unsigned got[N];
        CHECK(hipMemcpy(got, d, sizeof got, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(got[i] == (unsigned)((r + 1) * LAUNCHES), "round %d: [%d] = %u, want %u", r, i,
                   got[i], (unsigned)((r + 1) * LAUNCHES));
        pthread_mutex_lock(&mu);
        checked = r;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    pthread_join(t, NULL);
    CHECK(hipFree(d));
    printf("launch_handoff: %d rounds of %d launches: OK\n", ROUNDS, LAUNCHES);
    return 0;
}
