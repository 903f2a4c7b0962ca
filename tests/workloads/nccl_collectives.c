/* Collectives through the NCCL API (hrr's stand-in libhrr_nccl_cpu.so on
 * the CPU runtime): one rank by default; `nccl_collectives job` launches
 * two ranks as processes (RANK and WORLD_SIZE set, as job_launcher.c
 * does), rank 0 handing its unique id to rank 1 through a file. Each rank
 * runs an all-reduce, a group of broadcast, reduce, all-gather,
 * reduce-scatter and a send/receive ring, and an all-reduce into memory
 * from ncclMemAlloc; every result is read back and checked against what
 * every rank's data must give. */
#include "hrr_workload.h"
#include "hrr_nccl.h"

#include <sys/wait.h>
#include <unistd.h>

#define N 1024

/* Rank r's value at i: depends on the rank, so a result that misses a
 * rank's data is wrong. */
static float val(int r, int i) { return (float)(i % 97) + 1000.0f * (float)(r + 1); }

static void id_exchange(int rank, ncclUniqueId *id) {
    const char *path = "nccl-id.bin", *tmp = "nccl-id.bin.tmp";
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

static int ranks_main(int rank, int nranks) {
    static float x[N], out[N], all[2 * N];
    static int ix[2 * N], iout[N];
    for (int i = 0; i < N; i++) x[i] = val(rank, i);
    for (int i = 0; i < nranks * N / 2; i++) ix[i] = i * (rank + 2);
    CHECK(hipSetDevice(0));
    ncclUniqueId id;
    if (nranks == 1)
        NCCHECK(ncclGetUniqueId(&id));
    else
        id_exchange(rank, &id);
    ncclComm_t comm;
    NCCHECK(ncclCommInitRank(&comm, nranks, id, rank));
    int count = 0, me = -1;
    NCCHECK(ncclCommCount(comm, &count));
    NCCHECK(ncclCommUserRank(comm, &me));
    EXPECT(count == nranks && me == rank, "comm says rank %d of %d", me, count);

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *dx, *dsum, *dbc, *dred, *dgather, *dring;
    int *dix, *dscat;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dsum, sizeof out));
    CHECK(hipMalloc((void **)&dbc, sizeof out));
    CHECK(hipMalloc((void **)&dred, sizeof out));
    CHECK(hipMalloc((void **)&dgather, sizeof(float) * N * nranks));
    CHECK(hipMalloc((void **)&dring, sizeof out));
    CHECK(hipMalloc((void **)&dix, sizeof(int) * N / 2 * nranks));
    CHECK(hipMalloc((void **)&dscat, sizeof(int) * N / 2));
    CHECK(hipMemcpyAsync(dx, x, sizeof x, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(dix, ix, sizeof(int) * N / 2 * nranks, hipMemcpyHostToDevice, s));

    /* Outside a group. */
    NCCHECK(ncclAllReduce(dx, dsum, N, ncclFloat32, ncclSum, comm, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, dsum, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float want = 0;
        for (int r = 0; r < nranks; r++) want += val(r, i);
        EXPECT(out[i] == want, "all_reduce[%d] = %g, want %g", i, out[i], want);
    }

    /* A group: broadcast from the last rank, max to rank 0, all-gather,
     * reduce-scatter of ints, and a ring of send/receive. */
    int root = nranks - 1, next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    NCCHECK(ncclGroupStart());
    NCCHECK(ncclBroadcast(dx, dbc, N, ncclFloat32, root, comm, s));
    NCCHECK(ncclReduce(dx, dred, N, ncclFloat32, ncclMax, 0, comm, s));
    NCCHECK(ncclAllGather(dx, dgather, N, ncclFloat32, comm, s));
    NCCHECK(ncclReduceScatter(dix, dscat, N / 2, ncclInt32, ncclSum, comm, s));
    NCCHECK(ncclSend(dx, N, ncclFloat32, next, comm, s));
    NCCHECK(ncclRecv(dring, N, ncclFloat32, prev, comm, s));
    NCCHECK(ncclGroupEnd());
    CHECK(hipStreamSynchronize(s));

    CHECK(hipMemcpy(out, dbc, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(out[i] == val(root, i), "broadcast[%d] = %g", i, out[i]);
    if (rank == 0) {
        CHECK(hipMemcpy(out, dred, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(out[i] == val(nranks - 1, i), "reduce max[%d] = %g", i, out[i]);
    }
    CHECK(hipMemcpy(all, dgather, sizeof(float) * N * nranks, hipMemcpyDeviceToHost));
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < N; i++)
            EXPECT(all[r * N + i] == val(r, i), "all_gather[%d][%d] = %g", r, i, all[r * N + i]);
    CHECK(hipMemcpy(iout, dscat, sizeof(int) * N / 2, hipMemcpyDeviceToHost));
    for (int i = 0; i < N / 2; i++) {
        int want = 0, k = rank * N / 2 + i;
        for (int r = 0; r < nranks; r++) want += k * (r + 2);
        EXPECT(iout[i] == want, "reduce_scatter[%d] = %d, want %d", i, iout[i], want);
    }
    CHECK(hipMemcpy(out, dring, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(out[i] == val(prev, i), "recv[%d] = %g", i, out[i]);

    /* Memory from the library, reduced into. */
    float *dmem;
    NCCHECK(ncclMemAlloc((void **)&dmem, sizeof out));
    NCCHECK(ncclAllReduce(dx, dmem, N, ncclFloat32, ncclMin, comm, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, dmem, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(out[i] == val(0, i), "min[%d] = %g", i, out[i]);
    NCCHECK(ncclMemFree(dmem));

    NCCHECK(ncclCommFinalize(comm));
    NCCHECK(ncclCommDestroy(comm));
    CHECK(hipStreamDestroy(s));
    float *bufs[] = {dx, dsum, dbc, dred, dgather, dring};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) CHECK(hipFree(bufs[i]));
    CHECK(hipFree(dix));
    CHECK(hipFree(dscat));
    printf("nccl_collectives: rank %d of %d: OK\n", rank, nranks);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "worker") == 0) {
        const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
        EXPECT(r && w, "RANK and WORLD_SIZE must be set");
        return ranks_main(atoi(r), atoi(w));
    }
    if (argc < 2 || strcmp(argv[1], "job") != 0) return ranks_main(0, 1);
    unlink("nccl-id.bin");
    fflush(stdout);
    pid_t pids[2];
    for (int rank = 0; rank < 2; rank++) {
        pid_t pid = fork();
        EXPECT(pid >= 0, "fork failed");
        if (pid == 0) {
            char rs[16];
            snprintf(rs, sizeof rs, "%d", rank);
            setenv("RANK", rs, 1);
            setenv("LOCAL_RANK", rs, 1);
            setenv("WORLD_SIZE", "2", 1);
            execl("/proc/self/exe", argv[0], "worker", (char *)NULL);
            perror("exec");
            _exit(127);
        }
        pids[rank] = pid;
    }
    int failed = 0;
    for (int rank = 0; rank < 2; rank++) {
        int st = 0;
        EXPECT(waitpid(pids[rank], &st, 0) == pids[rank], "waitpid");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "nccl_collectives: rank %d failed (status %d)\n", rank, st);
            failed = 1;
        }
    }
    if (failed) return 1;
    printf("nccl_collectives: job: OK\n");
    return 0;
}
