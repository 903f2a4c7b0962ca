/* Communicators made by ncclCommSplit and ncclCommInitAll (hrr's stand-in
 * libhrr_nccl_cpu.so on the CPU runtime). Modes:
 *
 *   job     four ranks as processes (RANK, WORLD_SIZE set; rank 0 hands
 *           its unique id to the others through a file). The world is
 *           split by color rank % 2 with key -rank (pairs {2,0} and {3,1},
 *           in that order), then split again with rank 3 passing
 *           NCCL_SPLIT_NOCOLOR (ranks 0, 1, 2); each rank runs an
 *           all-reduce and a broadcast on its pair and an all-reduce on the
 *           three, every result checked against what the members' data
 *           must give.
 *   all     ncclCommInitAll over devices 0 and 1 of this process
 *           (HRR_CPU_DEVICES=2), then an all-reduce in a group, one call
 *           per device: each device's result is the sum of both.
 *   window  one rank: a communicator and a split of it, then
 *           hipProfilerStart, all-reduces on both, hipProfilerStop (a
 *           window opened after their creation).
 *
 * Prints "nccl_split: MODE: OK". */
#include "hrr_workload.h"
#include "hrr_nccl.h"

#include <sys/wait.h>
#include <unistd.h>

#define N 256
#define RANKS 4

/* ROCm's headers mark the profiler range deprecated (rocTX instead); it
 * is the window trigger hrr-cap --window profiler listens for. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void profiler_range(int start) { CHECK(start ? hipProfilerStart() : hipProfilerStop()); }
#pragma GCC diagnostic pop

/* Rank r's value at i: a result missing a rank's data is wrong. */
static float val(int r, int i) { return (float)(i % 31) + 100.0f * (float)(r + 1); }

static void id_exchange(int rank, ncclUniqueId *id) {
    const char *path = "nccl-split-id.bin", *tmp = "nccl-split-id.bin.tmp";
    if (rank == 0) {
        NCCHECK(ncclGetUniqueId(id));
        FILE *f = fopen(tmp, "wb");
        EXPECT(f && fwrite(id, sizeof *id, 1, f) == 1 && fclose(f) == 0, "writing %s", tmp);
        EXPECT(rename(tmp, path) == 0, "rename");
        return;
    }
    for (int tries = 0; tries < 60000; tries++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (got == 1) return;
        }
        usleep(1000);
    }
    EXPECT(0, "rank %d: no unique id in %s", rank, path);
}

/* All-reduces rank `me`'s data on `comm` and checks the sum over `members`. */
static void all_reduce_check(ncclComm_t comm, int me, const int *members, int n,
                             float *dx, float *dout, hipStream_t s, const char *what) {
    static float out[N];
    NCCHECK(ncclAllReduce(dx, dout, N, ncclFloat32, ncclSum, comm, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float want = 0;
        for (int m = 0; m < n; m++) want += val(members[m], i);
        EXPECT(out[i] == want, "rank %d: %s[%d] = %g, want %g", me, what, i, out[i], want);
    }
}

static int rank_main(int rank, int nranks) {
    static float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = val(rank, i);
    CHECK(hipSetDevice(0));
    ncclUniqueId id;
    id_exchange(rank, &id);
    ncclComm_t world, pair, three;
    NCCHECK(ncclCommInitRank(&world, nranks, id, rank));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *dx, *dout;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dout, sizeof out));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));

    /* Pairs by parity, ordered by key -rank: the higher rank first. */
    NCCHECK(ncclCommSplit(world, rank % 2, -rank, &pair, NULL));
    EXPECT(pair != NULL, "rank %d: no pair", rank);
    int count = 0, me = -1;
    NCCHECK(ncclCommCount(pair, &count));
    NCCHECK(ncclCommUserRank(pair, &me));
    int other = rank < 2 ? rank + 2 : rank - 2;
    EXPECT(count == 2 && me == (rank >= 2 ? 0 : 1), "rank %d: rank %d of %d in its pair", rank,
           me, count);
    int members[3] = {rank, other, 0};
    all_reduce_check(pair, rank, members, 2, dx, dout, s, "pair sum");
    /* Broadcast from the pair's rank 0 (the higher world rank). */
    NCCHECK(ncclBroadcast(dx, dout, N, ncclFloat32, 0, pair, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    int root = rank >= 2 ? rank : other;
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == val(root, i), "rank %d: broadcast[%d] = %g", rank, i, out[i]);

    /* Rank 3 takes part and gets none. */
    NCCHECK(ncclCommSplit(world, rank == 3 ? NCCL_SPLIT_NOCOLOR : 7, rank, &three, NULL));
    if (rank == 3) {
        EXPECT(three == NULL, "rank 3 got a communicator with NCCL_SPLIT_NOCOLOR");
    } else {
        int m3[3] = {0, 1, 2};
        all_reduce_check(three, rank, m3, 3, dx, dout, s, "three sum");
        NCCHECK(ncclCommDestroy(three));
    }
    NCCHECK(ncclCommDestroy(pair));
    NCCHECK(ncclCommDestroy(world));
    CHECK(hipFree(dx));
    CHECK(hipFree(dout));
    CHECK(hipStreamDestroy(s));
    return 0;
}

static int job(char *argv0) {
    unlink("nccl-split-id.bin");
    fflush(stdout);
    pid_t pids[RANKS];
    for (int rank = 0; rank < RANKS; rank++) {
        pid_t pid = fork();
        EXPECT(pid >= 0, "fork failed");
        if (pid == 0) {
            char rs[16], ws[16];
            snprintf(rs, sizeof rs, "%d", rank);
            snprintf(ws, sizeof ws, "%d", RANKS);
            setenv("RANK", rs, 1);
            setenv("LOCAL_RANK", rs, 1);
            setenv("WORLD_SIZE", ws, 1);
            execl("/proc/self/exe", argv0, "worker", (char *)NULL);
            perror("exec");
            _exit(127);
        }
        pids[rank] = pid;
    }
    int failed = 0;
    for (int rank = 0; rank < RANKS; rank++) {
        int st = 0;
        EXPECT(waitpid(pids[rank], &st, 0) == pids[rank], "waitpid");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "nccl_split: rank %d failed (status %d)\n", rank, st);
            failed = 1;
        }
    }
    return failed;
}

static int init_all(void) {
    int devs[2] = {0, 1}, n = 0;
    CHECK(hipGetDeviceCount(&n));
    EXPECT(n >= 2, "%d devices: run with HRR_CPU_DEVICES=2", n);
    ncclComm_t comms[2];
    NCCHECK(ncclCommInitAll(comms, 2, devs));
    static float x[2][N], out[N];
    float *dx[2], *dout[2];
    hipStream_t s[2];
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < N; i++) x[d][i] = val(d, i);
        CHECK(hipSetDevice(d));
        CHECK(hipStreamCreate(&s[d]));
        CHECK(hipMalloc((void **)&dx[d], sizeof x[d]));
        CHECK(hipMalloc((void **)&dout[d], sizeof out));
        CHECK(hipMemcpy(dx[d], x[d], sizeof x[d], hipMemcpyHostToDevice));
    }
    NCCHECK(ncclGroupStart());
    for (int d = 0; d < 2; d++)
        NCCHECK(ncclAllReduce(dx[d], dout[d], N, ncclFloat32, ncclSum, comms[d], s[d]));
    NCCHECK(ncclGroupEnd());
    for (int d = 0; d < 2; d++) {
        CHECK(hipSetDevice(d));
        CHECK(hipStreamSynchronize(s[d]));
        CHECK(hipMemcpy(out, dout[d], sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(out[i] == val(0, i) + val(1, i), "device %d: sum[%d] = %g", d, i, out[i]);
    }
    for (int d = 0; d < 2; d++) NCCHECK(ncclCommDestroy(comms[d]));
    return 0;
}

static int window(void) {
    static float x[N];
    for (int i = 0; i < N; i++) x[i] = val(0, i);
    CHECK(hipSetDevice(0));
    ncclUniqueId id;
    NCCHECK(ncclGetUniqueId(&id));
    ncclComm_t world, part;
    NCCHECK(ncclCommInitRank(&world, 1, id, 0));
    NCCHECK(ncclCommSplit(world, 0, 0, &part, NULL));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *dx, *dout;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dout, sizeof x));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    profiler_range(1);
    int me[1] = {0};
    all_reduce_check(part, 0, me, 1, dx, dout, s, "split sum");
    all_reduce_check(world, 0, me, 1, dout, dx, s, "world sum");
    profiler_range(0);
    NCCHECK(ncclCommDestroy(part));
    NCCHECK(ncclCommDestroy(world));
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "worker") == 0) {
        const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
        EXPECT(r && w && atoi(w) == RANKS, "RANK and WORLD_SIZE=%d must be set", RANKS);
        return rank_main(atoi(r), atoi(w));
    }
    const char *mode = argc > 1 ? argv[1] : "job";
    int rc;
    if (strcmp(mode, "job") == 0)
        rc = job(argv[0]);
    else if (strcmp(mode, "all") == 0)
        rc = init_all();
    else if (strcmp(mode, "window") == 0)
        rc = window();
    else
        EXPECT(0, "unknown mode %s", mode);
    if (rc) return rc;
    printf("nccl_split: %s: OK\n", mode);
    return 0;
}
