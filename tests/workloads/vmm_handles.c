/* Handles of HIP's virtual memory as NCCL and interprocess code use them:
 * a piece of physical memory mapped into a reservation, its handle
 * retained from an address and released (NCCL's frees retain the handle
 * of the pointer they free, release it, unmap, release again), its
 * properties and address range asked for, and the handle exported as a
 * file descriptor and imported again in the same process: the imported
 * handle is the same memory, mapped a second time. What is written through
 * one mapping is read back through the other; the reads are what replay
 * checks.
 *
 *   reservation R, granule g:
 *     R          piece, handle h (written)
 *     R + 4g     the same piece, imported handle (read back) */
#include "hrr_workload.h"

#include <unistd.h>

#define RESERVED (64ull << 20)

static void set_access(void *at, size_t len) {
    hipMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = hipMemLocationTypeDevice;
    desc.location.id = 0;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(at, len, &desc, 1));
}

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
    size_t g = 0;
    CHECK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    size_t piece = 4 * g;

    void *base;
    CHECK(hipMemAddressReserve(&base, RESERVED, 0, NULL, 0));
    char *r = (char *)base;
    hipMemGenericAllocationHandle_t h;
    CHECK(hipMemCreate(&h, piece, &prop, 0));
    CHECK(hipMemMap(r, piece, 0, h, 0));
    set_access(r, piece);

    enum { N = 2048 };
    static unsigned in[N], got[N];
    for (int i = 0; i < N; i++) in[i] = 0x9e3779b9u * (unsigned)(i + 1);
    CHECK(hipMemcpy(r + 256, in, sizeof in, hipMemcpyHostToDevice));

    /* Retained from an address inside the mapping, then released. */
    hipMemGenericAllocationHandle_t again;
    CHECK(hipMemRetainAllocationHandle(&again, r + 1000));
    EXPECT(again == h, "retained %p, created %p", (void *)again, (void *)h);
    CHECK(hipMemRelease(again));
    hipMemAllocationProp asked;
    memset(&asked, 0, sizeof asked);
    CHECK(hipMemGetAllocationPropertiesFromHandle(&asked, h));
    EXPECT(asked.location.id == 0, "device %d", asked.location.id);
    hipDeviceptr_t rb = NULL;
    size_t rs = 0;
    CHECK(hipMemGetAddressRange(&rb, &rs, r + 1000));
    EXPECT((char *)rb <= r + 1000 && r + 1000 < (char *)rb + rs, "range %p+%zu", rb, rs);

    /* Exported and imported in this process: the same memory. */
    int fd = -1;
    CHECK(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0));
    hipMemGenericAllocationHandle_t imported;
    CHECK(hipMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd,
                                          hipMemHandleTypePosixFileDescriptor));
    close(fd);
    CHECK(hipMemMap(r + piece, piece, 0, imported, 0));
    set_access(r + piece, piece);
    CHECK(hipMemcpy(got, r + piece + 256, sizeof got, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(got[i] == in[i], "got[%d] = %u", i, got[i]);
    printf("vmm_handles: imported mapping reads the exported memory\n");

    /* A second write, read back after the retained handle was released. */
    CHECK(hipMemset(r + piece, 0x3c, 512));
    CHECK(hipMemcpy(got, r, 1024, hipMemcpyDeviceToHost));

    /* NCCL's free, for both mappings: retain, release, unmap, release. */
    char *at[] = {r, r + piece};
    for (int k = 0; k < 2; k++) {
        hipMemGenericAllocationHandle_t mine;
        CHECK(hipMemRetainAllocationHandle(&mine, at[k]));
        CHECK(hipMemRelease(mine));
        CHECK(hipMemUnmap(at[k], piece));
        CHECK(hipMemRelease(mine));
    }
    CHECK(hipMemAddressFree(base, RESERVED));
    printf("vmm_handles: OK\n");
    return 0;
}
