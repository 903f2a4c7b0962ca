/* The compiler path with the bundle on the heap, as a program that
 * generates or decompresses its device code at run time does: a HIPF
 * wrapper pointing at a malloc'd copy of an offload bundle is registered,
 * its kernels launched, then the fat binary is unregistered and its memory
 * scribbled over and freed. The recorder writes a registered bundle's blob
 * from where it lies, after the launch that first needed it; the archive
 * must still hold the bundle as launched, so unregistering has to wait for
 * that write.
 *
 * `fatbin_heap rewrite` rewrites the bundle while it is still registered,
 * right after its first launch, as a JIT reusing its buffer would: the
 * recorder hashed the bundle at that launch, and its blob file is written
 * later from where it lies, so the bytes written are no longer the bytes
 * named. So that the rewrite comes before that write every time, the
 * capture library's writer thread (`hrr-writer`) is first put on this
 * thread's CPU at SCHED_IDLE: it runs only when this thread blocks, and
 * nothing between the launch and the rewrite blocks. The capture must say
 * that the bundle's blob could not be written; the program's own results
 * are unaffected (the runtime loaded the code at the launch).
 *
 * `fatbin_heap exit=N` ends with exit status N after an ordinary run.
 *
 * Build with -DHRR_BUNDLE_PATH="\"/path/to/kernels.bundle\"" (read at run
 * time: host-x86_64-unknown-linux-gnu empty entry, then
 * hipv4-x86_64-unknown-linux-gnu-cpu holding the kernel .so). */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <time.h>

#include "hip_compiler_abi.h"
#include "hrr_workload.h"

#ifndef HRR_BUNDLE_PATH
#error "define HRR_BUNDLE_PATH to the offload bundle to load"
#endif



/* Host stub: its address is the kernel's key. */
static void vadd(const float *a, const float *b, float *c, int n) {
    void *args[] = {&a, &b, &c, &n};
    hip_stub_launch((const void *)vadd, args);
}

#define N 2048

/* Puts the capture library's writer thread on this thread's CPU at
 * SCHED_IDLE (see the top); returns whether there is one. */
static int hold_back(const cpu_set_t *one) {
    DIR *d = opendir("/proc/self/task");
    EXPECT(d != NULL, "opendir /proc/self/task");
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int ok = fgets(comm, sizeof comm, f) != NULL;
        fclose(f);
        if (!ok || strcmp(comm, "hrr-writer\n") != 0) continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        struct sched_param idle = {0};
        EXPECT(sched_setaffinity(tid, sizeof *one, one) == 0, "pinning the writer thread");
        EXPECT(sched_setscheduler(tid, SCHED_IDLE, &idle) == 0, "SCHED_IDLE for the writer thread");
        found = 1;
    }
    closedir(d);
    return found;
}

/* hold_back() once the writer thread is there: under hrr-cap (HRR_OUT set)
 * it is started at the first recorded call and names itself when it first
 * runs, which a loaded machine may delay; waits up to 10 s for it. Without
 * the capture library there is none. */
static int hold_back_writer(void) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    EXPECT(sched_setaffinity(0, sizeof one, &one) == 0, "pinning this thread");
    const char *out = getenv("HRR_OUT");
    int captured = out != NULL && out[0] != '\0';
    for (int i = 0; i < 1000; i++) {
        if (hold_back(&one)) return 1;
        if (!captured) return 0;
        struct timespec ms = {0, 10 * 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    EXPECT(0, "recorded, but no hrr-writer thread after 10 s");
    return 0;
}

int main(int argc, char **argv) {
    int rewrite = 0, status = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "rewrite") == 0)
            rewrite = 1;
        else if (strncmp(argv[i], "exit=", 5) == 0)
            status = atoi(argv[i] + 5);
        else
            EXPECT(0, "unknown argument %s", argv[i]);
    }
    FILE *f = fopen(HRR_BUNDLE_PATH, "rb");
    EXPECT(f != NULL, "cannot open %s", HRR_BUNDLE_PATH);
    EXPECT(fseek(f, 0, SEEK_END) == 0, "seek");
    long len = ftell(f);
    EXPECT(len > 0, "empty bundle");
    rewind(f);
    unsigned char *bundle = malloc((size_t)len);
    EXPECT(bundle != NULL, "malloc");
    EXPECT(fread(bundle, 1, (size_t)len, f) == (size_t)len, "short read");
    fclose(f);

    struct hip_fatbin_wrapper *wrapper = malloc(sizeof *wrapper);
    EXPECT(wrapper != NULL, "malloc");
    *wrapper = (struct hip_fatbin_wrapper){HIP_FATBIN_MAGIC, 1u, bundle, NULL};
    void **handle = __hipRegisterFatBinary(wrapper);
    __hipRegisterFunction(handle, (const void *)vadd, "vadd", "vadd", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);

    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(3 * i);
    }
    float *da, *db, *dc;
    CHECK(hipMalloc((void **)&da, sizeof a));
    CHECK(hipMalloc((void **)&db, sizeof b));
    CHECK(hipMalloc((void **)&dc, sizeof c));
    CHECK(hipMemcpy(da, a, sizeof a, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice));
    dim3 block = {256, 1, 1};
    dim3 grid = {N / 256, 1, 1};
    int held = rewrite && hold_back_writer();
    if (__hipPushCallConfiguration(grid, block, 0, NULL) == hipSuccess) vadd(da, db, dc, N);
    if (rewrite) {
        /* Still registered: nothing tells the recorder. */
        memset(bundle, 0x5a, (size_t)len);
        printf("fatbin_heap: bundle rewritten after its first launch (writer thread %s)\n",
               held ? "held back" : "absent");
    }
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(c, dc, sizeof c, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == a[i] + b[i], "c[%d] = %g, want %g", i, c[i], a[i] + b[i]);

    /* At once, as a program freeing its generated code would: the recorder
     * may not have written the bundle's blob yet. */
    __hipUnregisterFatBinary(handle);
    memset(bundle, 0xa5, (size_t)len);
    free(bundle);
    free(wrapper);

    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    printf("fatbin_heap: vadd over %d elements from a heap bundle (%ld bytes) ok\n", N, len);
    printf("fatbin_heap: OK\n");
    return status;
}
