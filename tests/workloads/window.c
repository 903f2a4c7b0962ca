/* A long-running loop whose middle is captured as a window (hrr-cap
 * --window). State made before any window: a device pointer table
 * (build_table stores pointers to b and c in device memory), c written once
 * and only read afterwards (through the table), a stream and an event.
 * Each of STEPS steps uploads a, runs twice(b, a) and gather(out, table) on
 * the stream, waits on the event and downloads out = 2a + 10c, checked here.
 *
 * argv[1], the mode, says where the program marks windows itself:
 *   plain      none (for --window launches:A..B)
 *   profiler   hipProfilerStart before step 2, hipProfilerStop after step 3
 *   profiler2  two windows: steps 1..2 and 4..5
 *   open       hipProfilerStart before step 3, never stopped
 *   signal     raise(SIGUSR2) before step 2 and after step 3
 *   usr1       the same with SIGUSR1
 *   graph      profiler marks as "profiler"; each step runs twice+gather as
 *              one graph captured and instantiated before the loop
 *   pool       profiler marks as "profiler"; each step also takes a block
 *              from a pool made before the loop (the same block every step,
 *              freed at its end), adds a to it (saxpy) and downloads it: its
 *              bytes carry over from the step before
 *   pinned     profiler marks as "profiler"; twice reads a pinned host
 *              buffer the host wrote once before the loop (no H2D)
 *   ipc        profiler marks as "profiler"; c is virtual memory (a
 *              reservation, a physical handle mapped with access set),
 *              and the handle is exported as a file descriptor and
 *              imported again (not mapped): an IPC handle no replay can
 *              rebuild, live when the window opens
 *   array      profiler marks as "profiler"; a 2D float array made and
 *              filled from the host before the loop (never written again)
 *              is copied into device memory (hipMemcpy2DFromArray) and
 *              downloaded each step, after out: its contents exist only in
 *              the state before the window
 *   mipmap     profiler marks as "profiler"; a mipmapped array of 32 x 8
 *              floats in 3 levels, levels 0 and 1 looked up and filled from
 *              the host before the loop (never written again), both read
 *              back to the host each step, after out */
#include <signal.h>
#include <unistd.h>

#include "hrr_workload.h"

#define N 256
#define STEPS 6

struct saxpy_args {
    float a;
    uint32_t pad;
    const float *x;
    float *y;
    int n;
    uint32_t pad2;
};

static void launch(hipFunction_t f, void **params, hipStream_t s) {
    CHECK(hipModuleLaunchKernel(f, (N + 63) / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
}

static void saxpy(hipFunction_t f, hipStream_t s, float a, const float *x, float *y) {
    struct saxpy_args ka = {a, 0, x, y, N, 0};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, s, NULL, extra));
}

/* ROCm's headers mark the profiler range deprecated (rocTX instead); it is
 * what frameworks still call, and the window trigger under test. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void profiler_range(int start) { CHECK(start ? hipProfilerStart() : hipProfilerStop()); }
#pragma GCC diagnostic pop

static int is(const char *mode, const char *m) { return strcmp(mode, m) == 0; }

/* Before step `step`: a window opens here? */
static void before(const char *mode, int step) {
    int profiler = is(mode, "profiler") || is(mode, "graph") || is(mode, "pool") ||
                   is(mode, "pinned") || is(mode, "ipc") || is(mode, "array") ||
                   is(mode, "mipmap");
    if ((profiler && step == 2) || (is(mode, "profiler2") && (step == 1 || step == 4)) ||
        (is(mode, "open") && step == 3))
        profiler_range(1);
    if (is(mode, "signal") && step == 2) raise(SIGUSR2);
    if (is(mode, "usr1") && step == 2) raise(SIGUSR1);
}

/* After step `step`: a window closes here? */
static void after(const char *mode, int step) {
    int profiler = is(mode, "profiler") || is(mode, "graph") || is(mode, "pool") ||
                   is(mode, "pinned") || is(mode, "ipc") || is(mode, "array") ||
                   is(mode, "mipmap");
    if ((profiler && step == 3) || (is(mode, "profiler2") && (step == 2 || step == 5)))
        profiler_range(0);
    if (is(mode, "signal") && step == 3) raise(SIGUSR2);
    if (is(mode, "usr1") && step == 3) raise(SIGUSR1);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "plain";
    /* Run alone, the window signals do nothing; under hrr-cap the capture
     * library's handler replaces these at the first HIP call. */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);

    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("ptr_table.so");
    hipModule_t smod = hrr_load_module_data("saxpy.so");
    hipFunction_t twice, build, gather, fsaxpy;
    CHECK(hipModuleGetFunction(&twice, mod, "twice"));
    CHECK(hipModuleGetFunction(&build, mod, "build_table"));
    CHECK(hipModuleGetFunction(&gather, mod, "gather"));
    CHECK(hipModuleGetFunction(&fsaxpy, smod, "saxpy"));

    float *a, *b, *c, *out, **table;
    CHECK(hipMalloc((void **)&a, N * sizeof(float)));
    CHECK(hipMalloc((void **)&b, N * sizeof(float)));
    int ipc = is(mode, "ipc");
    void *reserved = NULL;
    size_t piece = 0;
    hipMemGenericAllocationHandle_t ph, imported;
    if (ipc) {
        hipMemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = hipMemAllocationTypePinned;
        prop.location.type = hipMemLocationTypeDevice;
        prop.location.id = 0;
        prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
        CHECK(hipMemGetAllocationGranularity(&piece, &prop, hipMemAllocationGranularityMinimum));
        CHECK(hipMemAddressReserve(&reserved, 4 * piece, 0, NULL, 0));
        CHECK(hipMemCreate(&ph, piece, &prop, 0));
        CHECK(hipMemMap(reserved, piece, 0, ph, 0));
        hipMemAccessDesc desc;
        memset(&desc, 0, sizeof desc);
        desc.location.type = hipMemLocationTypeDevice;
        desc.location.id = 0;
        desc.flags = hipMemAccessFlagsProtReadWrite;
        CHECK(hipMemSetAccess(reserved, piece, &desc, 1));
        int fd = -1;
        CHECK(hipMemExportToShareableHandle(&fd, ph, hipMemHandleTypePosixFileDescriptor, 0));
        CHECK(hipMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd,
                                              hipMemHandleTypePosixFileDescriptor));
        close(fd);
        c = (float *)reserved;
    } else {
        CHECK(hipMalloc((void **)&c, N * sizeof(float)));
    }
    CHECK(hipMalloc((void **)&out, N * sizeof(float)));
    CHECK(hipMalloc((void **)&table, 8 * sizeof(float *)));
    static float ha[N], hc[N], got[N];
    for (int i = 0; i < N; i++) hc[i] = (float)(i % 7);
    CHECK(hipMemcpy(c, hc, sizeof hc, hipMemcpyHostToDevice));
    void *bp[] = {&table, &b, &c};
    CHECK(hipModuleLaunchKernel(build, 1, 1, 1, 1, 1, 1, 0, NULL, bp, NULL));

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    int n = N;
    int pinned = is(mode, "pinned");
    float *hp = NULL;
    if (pinned) {
        CHECK(hipHostMalloc((void **)&hp, N * sizeof(float), 0));
        for (int i = 0; i < N; i++) hp[i] = (float)(3 * i + 1);
    }
    void *tp[] = {&b, pinned ? (void *)&hp : (void *)&a, &n};
    void *gp[] = {&out, &table, &n};

    /* array: AW x AH floats, filled once from ar. */
    enum { AW = 32, AH = N / AW };
    static float ar[N];
    hipArray_t arr = NULL;
    float *ad = NULL;
    if (is(mode, "array")) {
        for (int i = 0; i < N; i++) ar[i] = 0.5f * (float)i + 3.0f;
        hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
        CHECK(hipMallocArray(&arr, &fd, AW, AH, 0));
        CHECK(hipMemcpy2DToArray(arr, 0, 0, ar, AW * sizeof(float), AW * sizeof(float), AH,
                                 hipMemcpyHostToDevice));
        CHECK(hipMalloc((void **)&ad, N * sizeof(float)));
    }

    /* mipmap: levels 0 (AW x AH) and 1 (AW/2 x AH/2), filled once. */
    static float m0[N], m1[N / 4], mgot[N];
    hipArray_t lv0 = NULL, lv1 = NULL;
    if (is(mode, "mipmap")) {
        for (int i = 0; i < N; i++) m0[i] = 0.25f * (float)i - 7.0f;
        for (int i = 0; i < N / 4; i++) m1[i] = -3.0f * (float)i + 0.5f;
        hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
        hipMipmappedArray_t mip;
        CHECK(hipMallocMipmappedArray(&mip, &fd, make_hipExtent(AW, AH, 0), 3, 0));
        CHECK(hipGetMipmappedArrayLevel(&lv0, mip, 0));
        CHECK(hipGetMipmappedArrayLevel(&lv1, mip, 1));
        CHECK(hipMemcpy2DToArray(lv0, 0, 0, m0, AW * sizeof(float), AW * sizeof(float), AH,
                                 hipMemcpyHostToDevice));
        CHECK(hipMemcpy2DToArray(lv1, 0, 0, m1, (AW / 2) * sizeof(float),
                                 (AW / 2) * sizeof(float), AH / 2, hipMemcpyHostToDevice));
    }

    hipGraphExec_t ge = NULL;
    if (is(mode, "graph")) {
        hipGraph_t g;
        CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
        launch(twice, tp, s);
        launch(gather, gp, s);
        CHECK(hipStreamEndCapture(s, &g));
        CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
        CHECK(hipGraphDestroy(g));
    }
    hipMemPool_t pool = NULL;
    if (is(mode, "pool")) {
        hipMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = hipMemAllocationTypePinned;
        props.location.type = hipMemLocationTypeDevice;
        props.location.id = 0;
        CHECK(hipMemPoolCreate(&pool, &props));
        uint64_t threshold = UINT64_MAX;
        CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));
    }

    float *first = NULL;
    for (int step = 0; step < STEPS; step++) {
        before(mode, step);
        if (pinned) {
            memcpy(ha, hp, sizeof ha);
        } else {
            for (int i = 0; i < N; i++) ha[i] = (float)(i + 100 * step);
            CHECK(hipMemcpy(a, ha, sizeof ha, hipMemcpyHostToDevice));
        }
        if (ge) {
            CHECK(hipGraphLaunch(ge, s));
        } else {
            launch(twice, tp, NULL);
            launch(gather, gp, s);
        }
        CHECK(hipEventRecord(ev, s));
        CHECK(hipEventSynchronize(ev));
        CHECK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            float want = 2.0f * ha[i] + 10.0f * hc[i];
            EXPECT(got[i] == want, "step %d: out[%d] = %g, want %g", step, i, got[i], want);
        }
        if (arr) {
            CHECK(hipMemset(ad, 0, N * sizeof(float)));
            CHECK(hipMemcpy2DFromArray(ad, AW * sizeof(float), arr, 0, 0, AW * sizeof(float), AH,
                                       hipMemcpyDeviceToDevice));
            CHECK(hipMemcpy(got, ad, sizeof got, hipMemcpyDeviceToHost));
            for (int i = 0; i < N; i++)
                EXPECT(got[i] == ar[i], "step %d: array[%d] = %g, want %g", step, i, got[i], ar[i]);
        }
        if (lv0) {
            CHECK(hipMemcpy2DFromArray(mgot, AW * sizeof(float), lv0, 0, 0, AW * sizeof(float),
                                       AH, hipMemcpyDeviceToHost));
            for (int i = 0; i < N; i++)
                EXPECT(mgot[i] == m0[i], "step %d: level 0 [%d] = %g", step, i, mgot[i]);
            CHECK(hipMemcpy2DFromArray(mgot, (AW / 2) * sizeof(float), lv1, 0, 0,
                                       (AW / 2) * sizeof(float), AH / 2, hipMemcpyDeviceToHost));
            for (int i = 0; i < N / 4; i++)
                EXPECT(mgot[i] == m1[i], "step %d: level 1 [%d] = %g", step, i, mgot[i]);
        }
        if (pool) {
            float *y;
            CHECK(hipMallocFromPoolAsync((void **)&y, N * sizeof(float), pool, s));
            if (step == 0) {
                CHECK(hipMemsetAsync(y, 0, N * sizeof(float), s));
                first = y;
            }
            EXPECT(y == first, "the pool hands out the same block (%p, then %p)", (void *)first,
                   (void *)y);
            saxpy(fsaxpy, s, 1.0f, c, y);
            CHECK(hipMemcpyAsync(got, y, sizeof got, hipMemcpyDeviceToHost, s));
            CHECK(hipStreamSynchronize(s));
            for (int i = 0; i < N; i++)
                EXPECT(got[i] == (float)(step + 1) * hc[i], "step %d: y[%d] = %g", step, i,
                       got[i]);
            CHECK(hipFreeAsync(y, s));
            CHECK(hipStreamSynchronize(s));
        }
        printf("window: step %d ok (out[1] = %g)\n", step, got[1]);
        after(mode, step);
    }

    if (arr) {
        CHECK(hipFreeArray(arr));
        CHECK(hipFree(ad));
    }
    if (hp) CHECK(hipHostFree(hp));
    if (ge) CHECK(hipGraphExecDestroy(ge));
    if (pool) CHECK(hipMemPoolDestroy(pool));
    CHECK(hipEventDestroy(ev));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    if (ipc) {
        CHECK(hipMemRelease(imported));
        CHECK(hipMemUnmap(reserved, piece));
        CHECK(hipMemRelease(ph));
        CHECK(hipMemAddressFree(reserved, 4 * piece));
    } else {
        CHECK(hipFree(c));
    }
    CHECK(hipFree(out));
    CHECK(hipFree(table));
    CHECK(hipModuleUnload(mod));
    CHECK(hipModuleUnload(smod));
    printf("window: OK\n");
    return 0;
}
