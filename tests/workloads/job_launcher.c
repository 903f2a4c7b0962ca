/* A launcher of two GPU workers, as torchrun or mpirun start a job: the
 * launcher makes no HIP call; it forks and execs itself twice as
 * `job_launcher worker [changed]` with RANK, WORLD_SIZE and LOCAL_RANK
 * set, and fails when a worker does. Each worker computes something of
 * its own on the device (saxpy with a = rank + 2 over inputs of its rank)
 * and reads it back. `changed` makes rank 1 use a = rank + 3: a job whose
 * rank 1 differs from the plain one's. */
#include "hrr_workload.h"

#include <sys/wait.h>
#include <unistd.h>

#define N 1024

static int worker(int changed) {
    const char *r = getenv("RANK");
    const char *w = getenv("WORLD_SIZE");
    EXPECT(r && w, "RANK and WORLD_SIZE must be set");
    int rank = atoi(r);
    float a = (float)(rank + 2) + (changed && rank == 1 ? 1.0f : 0.0f);
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = (float)(100 * rank);
    }
    CHECK(hipInit(0));
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dy, sizeof y));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == a * x[i] + y[i], "rank %d: y[%d] = %g", rank, i, out[i]);
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    CHECK(hipModuleUnload(mod));
    printf("job_launcher: rank %d of %s: saxpy a=%g ok\n", rank, w, a);
    return 0;
}

int main(int argc, char **argv) {
    int changed = argc > 2 && strcmp(argv[2], "changed") == 0;
    if (argc > 1 && strcmp(argv[1], "worker") == 0) return worker(changed);
    changed = argc > 1 && strcmp(argv[1], "changed") == 0;
    fflush(stdout);
    pid_t pids[2];
    for (int rank = 0; rank < 2; rank++) {
        pid_t pid = fork();
        EXPECT(pid >= 0, "fork failed");
        if (pid == 0) {
            char r[16];
            snprintf(r, sizeof r, "%d", rank);
            setenv("RANK", r, 1);
            setenv("LOCAL_RANK", r, 1);
            setenv("WORLD_SIZE", "2", 1);
            execl("/proc/self/exe", argv[0], "worker", changed ? "changed" : "plain",
                  (char *)NULL);
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
            fprintf(stderr, "job_launcher: rank %d failed (status %d)\n", rank, st);
            failed = 1;
        }
    }
    if (failed) return 1;
    printf("job_launcher: OK\n");
    return 0;
}
