// A launcher of two GPU workers sharing the one GPU (no NCCL), as torchrun
// starts a job: the launcher makes no CUDA call; it forks and execs itself
// twice as `job_launcher worker` with RANK, WORLD_SIZE and LOCAL_RANK set.
// Each worker runs saxpy with a = rank + 2 over inputs of its rank and
// checks what it reads back; the launcher fails when a worker does.
#include <cmath>
#include <cstring>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

static int worker() {
    const char* r = std::getenv("RANK");
    if (!r || !std::getenv("WORLD_SIZE")) {
        std::fprintf(stderr, "RANK and WORLD_SIZE must be set\n");
        return 2;
    }
    const int rank = std::atoi(r), n = 1 << 20;
    const float a = (float)(rank + 2);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = (float)(i % 1000);
        y[i] = (float)(100 * rank);
    }
    float *dx = nullptr, *dy = nullptr;
    CK(cudaMalloc(&dx, n * sizeof(float)));
    CK(cudaMalloc(&dy, n * sizeof(float)));
    CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    CK_LAUNCH();
    std::vector<float> out(n);
    CK(cudaMemcpy(out.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < n; ++i) ok &= out[i] == a * x[i] + y[i];
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    char name[32];
    std::snprintf(name, sizeof name, "job_launcher rank %d", rank);
    return report(name, ok, "saxpy");
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "worker") == 0) return worker();
    std::fflush(stdout);
    pid_t pids[2];
    for (int rank = 0; rank < 2; ++rank) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            char r[16];
            std::snprintf(r, sizeof r, "%d", rank);
            setenv("RANK", r, 1);
            setenv("LOCAL_RANK", r, 1);
            setenv("WORLD_SIZE", "2", 1);
            execl("/proc/self/exe", argv[0], "worker", (char*)nullptr);
            _exit(127);
        }
        pids[rank] = pid;
    }
    int failed = 0;
    for (int rank = 0; rank < 2; ++rank) {
        int st = 0;
        if (waitpid(pids[rank], &st, 0) != pids[rank] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            std::fprintf(stderr, "job_launcher: rank %d failed (status %d)\n", rank, st);
            failed = 1;
        }
    }
    return report("job_launcher", !failed, "two workers");
}
