// Host costs of what a recorded call does besides its own work, in ns per
// call warm and in cycles after evicting EVICT_KIB of cache (docs/PERFORMANCE.md,
// "Where a repeated launch's recording cost is"): the clocks, a mutex, an atomic
// pair, gettid. Build and run: gcc -O2 -o host_costs host_costs.c && ./host_costs [EVICT_KIB]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <x86intrin.h>
static uint64_t ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;
static char *junk; static size_t junk_n;
static void evict(void) { for (size_t i = 0; i < junk_n; i += 64) junk[i]++; }
#define N 2000000
#define M 20000
#define BENCH(name, body) do { \
  uint64_t t0 = ns(); for (int i = 0; i < N; i++) { body; } uint64_t t1 = ns(); \
  uint64_t c = 0; for (int i = 0; i < M; i++) { evict(); uint64_t a = __rdtsc(); body; uint64_t b = __rdtsc(); c += b - a; } \
  for (int i = 0; i < M; i++) { uint64_t a = __rdtsc(); uint64_t b = __rdtsc(); c -= b - a; } \
  printf("%-28s warm %6.1f ns   after evicting %zu KiB: %7.1f cycles\n", name, (double)(t1 - t0) / N, junk_n >> 10, (double)c / M); } while (0)
int main(int argc, char **argv) {
  junk_n = (argc > 1 ? atol(argv[1]) : 256) << 10; junk = calloc(1, junk_n);
  uint64_t t0 = ns(), c0 = __rdtsc(); usleep(200000); uint64_t t1 = ns(), c1 = __rdtsc();
  printf("tsc %.3f GHz\n", (double)(c1 - c0) / (t1 - t0));
  struct timespec ts;
  BENCH("clock_gettime MONOTONIC", clock_gettime(CLOCK_MONOTONIC, &ts); sink = ts.tv_nsec);
  BENCH("clock_gettime MONO_COARSE", clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); sink = ts.tv_nsec);
  BENCH("rdtsc", sink = __rdtsc());
  BENCH("rdtscp", unsigned x; sink = __rdtscp(&x));
  BENCH("mutex lock+unlock", pthread_mutex_lock(&m); pthread_mutex_unlock(&m));
  BENCH("atomic xchg pair", __atomic_exchange_n(&sink, 1, __ATOMIC_ACQUIRE); __atomic_store_n(&sink, 0, __ATOMIC_RELEASE));
  BENCH("syscall gettid", sink = syscall(SYS_gettid));
  BENCH("pthread_self", sink = (uint64_t)pthread_self());
  return 0;
}
