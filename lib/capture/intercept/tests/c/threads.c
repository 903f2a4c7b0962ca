/* THREADS threads x OPS recorded calls each, all at once.
 * Each iteration: hipMalloc, hipMemset, hipMemcpy D2H, hipFree (4 calls). */
#include "common.h"

#include <pthread.h>

#define THREADS 8
#define OPS 1000

static pthread_barrier_t start;

static void *worker(void *arg) {
    uint32_t id = (uint32_t)(uintptr_t)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < OPS / 4; i++) {
        uint32_t *p, back = 0;
        CHECK(hipMalloc((void **)&p, 64 + 16 * id));
        CHECK(hipMemset(p, (int)(id + 1), 64));
        CHECK(hipMemcpy(&back, p, sizeof back, hipMemcpyDeviceToHost));
        EXPECT(back == (id + 1) * 0x01010101u);
        CHECK(hipFree(p));
    }
    return NULL;
}

int main(void) {
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    printf("threads: %d x %d calls OK\n", THREADS, OPS);
    return 0;
}
