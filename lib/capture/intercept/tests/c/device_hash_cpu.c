/* The device hash's source compiled as C: its serial tree, for
 * tests/device_hash_cpu.rs (built by the crate's build.rs). */
#include <stdlib.h>

#include "../../src/cuda/device_hash.cu"

/* The 32-byte hash of the `len` bytes at `in` into `out`; -1 when out of
 * memory. */
int hrr_test_device_hash_serial(const unsigned char* in, unsigned long long len, unsigned char* out);

int hrr_test_device_hash_serial(const unsigned char* in, unsigned long long len, unsigned char* out) {
    hrr_u32(*nodes)[8] = malloc(hrr_b3_chunks_of(len) * sizeof *nodes);
    if (!nodes) return -1;
    hrr_blake3_serial(in, len, nodes, out);
    free(nodes);
    return 0;
}
