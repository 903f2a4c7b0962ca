/* BLAKE3 of device memory, for the capture library's D2H copies
 * (`cuda::device_hash`): the archive names a blob by the BLAKE3 of its bytes
 * (docs/FORMAT.md), and hashing the copy's source on the device takes the
 * hash off the host's path.
 *
 * The same source is compiled three ways: by NVRTC at run time (the capture
 * library embeds it: `__CUDACC_RTC__`), by nvcc (`__CUDACC__`), and as plain
 * C, where each kernel is a function of one block (its threads' work done in
 * turn): the CPU test (`tests/c/device_hash_cpu.c`) runs the launches block
 * by block against the `blake3` crate, and the stand-in driver of the
 * capture tests (`tests/c/fake_cuda/libcuda.c`) runs the capture library's
 * launches with them. So it includes no header and names its integer types
 * itself (NVRTC has no libc headers).
 *
 * The tree: one chaining value per 1 KiB chunk, then parents merged pairwise
 * level by level, the odd last node of a level promoted unchanged: that is
 * BLAKE3's left-balanced tree. A kernel block merges HRR_B3_GROUP aligned
 * neighbours down to one node (pairing is aligned, so per-group merging
 * equals the global level-by-level merge), and the next launch merges the
 * groups' nodes the same way until one is left. The final compression (the
 * last parent, or the only chunk's last block) carries ROOT; its chaining
 * value is the 32-byte hash. */

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define HRR_B3_DEVICE 1
#define HRR_B3_FN __device__ static __forceinline__
#else
#define HRR_B3_FN static inline
#endif

typedef unsigned char hrr_u8;
typedef unsigned int hrr_u32;
typedef unsigned long long hrr_u64;

#define HRR_B3_CHUNK 1024u
#define HRR_B3_BLOCK 64u
/* Nodes one kernel block merges to one (its threads): a power of two, so
 * that a group is an aligned subtree. */
#define HRR_B3_GROUP 256u

#define HRR_B3_CHUNK_START 1u
#define HRR_B3_CHUNK_END 2u
#define HRR_B3_PARENT 4u
#define HRR_B3_ROOT 8u

#ifdef HRR_B3_DEVICE
__constant__
#else
static const
#endif
hrr_u32 HRR_B3_IV[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                        0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

HRR_B3_FN hrr_u32 hrr_b3_rotr(hrr_u32 x, int n) { return (x >> n) | (x << (32 - n)); }

#define HRR_B3_G(a, b, c, d, x, y)         \
    do {                                   \
        s[a] = s[a] + s[b] + (x);          \
        s[d] = hrr_b3_rotr(s[d] ^ s[a], 16); \
        s[c] = s[c] + s[d];                \
        s[b] = hrr_b3_rotr(s[b] ^ s[c], 12); \
        s[a] = s[a] + s[b] + (y);          \
        s[d] = hrr_b3_rotr(s[d] ^ s[a], 8);  \
        s[c] = s[c] + s[d];                \
        s[b] = hrr_b3_rotr(s[b] ^ s[c], 7);  \
    } while (0)

/* The compression function; `cv` becomes the output chaining value. */
HRR_B3_FN void hrr_b3_compress(hrr_u32 cv[8], const hrr_u32 m_in[16], hrr_u64 counter, hrr_u32 block_len,
                               hrr_u32 flags) {
    hrr_u32 s[16], m[16], t[16];
    int i, r;
    for (i = 0; i < 8; ++i) s[i] = cv[i];
    for (i = 0; i < 4; ++i) s[8 + i] = HRR_B3_IV[i];
    s[12] = (hrr_u32)counter;
    s[13] = (hrr_u32)(counter >> 32);
    s[14] = block_len;
    s[15] = flags;
    for (i = 0; i < 16; ++i) m[i] = m_in[i];
    for (r = 0; r < 7; ++r) {
        HRR_B3_G(0, 4, 8, 12, m[0], m[1]);
        HRR_B3_G(1, 5, 9, 13, m[2], m[3]);
        HRR_B3_G(2, 6, 10, 14, m[4], m[5]);
        HRR_B3_G(3, 7, 11, 15, m[6], m[7]);
        HRR_B3_G(0, 5, 10, 15, m[8], m[9]);
        HRR_B3_G(1, 6, 11, 12, m[10], m[11]);
        HRR_B3_G(2, 7, 8, 13, m[12], m[13]);
        HRR_B3_G(3, 4, 9, 14, m[14], m[15]);
        /* The message permutation between rounds. */
        t[0] = m[2]; t[1] = m[6]; t[2] = m[3]; t[3] = m[10];
        t[4] = m[7]; t[5] = m[0]; t[6] = m[4]; t[7] = m[13];
        t[8] = m[1]; t[9] = m[11]; t[10] = m[12]; t[11] = m[5];
        t[12] = m[9]; t[13] = m[14]; t[14] = m[15]; t[15] = m[8];
        for (i = 0; i < 16; ++i) m[i] = t[i];
    }
    for (i = 0; i < 8; ++i) cv[i] = s[i] ^ s[8 + i];
}

/* `n` (at most 64) bytes at `p` as a little-endian block, zero-padded. */
HRR_B3_FN void hrr_b3_load(const hrr_u8* p, hrr_u32 n, hrr_u32 m[16]) {
    hrr_u32 i;
#ifdef HRR_B3_DEVICE
    if (n == HRR_B3_BLOCK && ((hrr_u64)p & 15u) == 0) {
        /* Aligned: four 16-byte loads (the device is little-endian). */
        const uint4* q = (const uint4*)p;
        for (i = 0; i < 4; ++i) {
            uint4 v = q[i];
            m[4 * i] = v.x;
            m[4 * i + 1] = v.y;
            m[4 * i + 2] = v.z;
            m[4 * i + 3] = v.w;
        }
        return;
    }
#endif
    for (i = 0; i < 16; ++i) m[i] = 0;
    for (i = 0; i < n; ++i) m[i / 4] |= (hrr_u32)p[i] << (8 * (i % 4));
}

/* The chaining value of chunk `index`: its `len` bytes at `p` (at most a
 * chunk; 0 only for the empty input); `root` when it is the whole input. */
HRR_B3_FN void hrr_b3_chunk(const hrr_u8* p, hrr_u32 len, hrr_u64 index, int root, hrr_u32 cv[8]) {
    hrr_u32 m[16], i, off = 0;
    hrr_u32 blocks = len == 0 ? 1 : (len + HRR_B3_BLOCK - 1) / HRR_B3_BLOCK;
    for (i = 0; i < 8; ++i) cv[i] = HRR_B3_IV[i];
    for (i = 0; i < blocks; ++i, off += HRR_B3_BLOCK) {
        hrr_u32 n = len - off < HRR_B3_BLOCK ? len - off : HRR_B3_BLOCK;
        hrr_u32 flags = 0;
        if (i == 0) flags |= HRR_B3_CHUNK_START;
        if (i + 1 == blocks) flags |= HRR_B3_CHUNK_END | (root ? HRR_B3_ROOT : 0u);
        hrr_b3_load(p + off, n, m);
        hrr_b3_compress(cv, m, index, n, flags);
    }
}

/* The parent of `left` and `right` into `out` (which may be either). */
HRR_B3_FN void hrr_b3_parent(const hrr_u32 left[8], const hrr_u32 right[8], int root, hrr_u32 out[8]) {
    hrr_u32 m[16], i;
    for (i = 0; i < 8; ++i) {
        m[i] = left[i];
        m[8 + i] = right[i];
    }
    for (i = 0; i < 8; ++i) out[i] = HRR_B3_IV[i];
    hrr_b3_compress(out, m, 0, HRR_B3_BLOCK, HRR_B3_PARENT | (root ? HRR_B3_ROOT : 0u));
}

/* The chunks of `len` bytes. */
HRR_B3_FN hrr_u64 hrr_b3_chunks_of(hrr_u64 len) { return len == 0 ? 1 : (len + HRR_B3_CHUNK - 1) / HRR_B3_CHUNK; }

#ifdef HRR_B3_DEVICE

/* Merges the `count` nodes of this block's group (`cv`, in shared memory) to
 * one, in cv[0]; `whole`: the group is the whole tree, so its last merge is
 * the root. Every thread of the block calls it. */
__device__ static void hrr_b3_merge_group(hrr_u32 (*cv)[8], hrr_u32 count, int whole) {
    hrr_u32 t = threadIdx.x, i;
    while (count > 1) {
        hrr_u32 pairs = count / 2, merged[8];
        int root = whole && count == 2;
        if (t < pairs) hrr_b3_parent(cv[2 * t], cv[2 * t + 1], root, merged);
        else if (t == pairs && (count & 1))
            for (i = 0; i < 8; ++i) merged[i] = cv[count - 1][i];
        __syncthreads();
        if (t < pairs || (t == pairs && (count & 1)))
            for (i = 0; i < 8; ++i) cv[t][i] = merged[i];
        __syncthreads();
        count = (count + 1) / 2;
    }
}

/* Level 1: a thread per chunk of the `len` bytes at `in`, each group of
 * HRR_B3_GROUP chunks merged to one node in out[blockIdx.x] (the hash when
 * the grid is one block). blockDim.x == HRR_B3_GROUP. */
extern "C" __global__ void __launch_bounds__(HRR_B3_GROUP)
    hrr_blake3_chunks(const hrr_u8* in, hrr_u64 len, hrr_u32* out) {
    __shared__ hrr_u32 cv[HRR_B3_GROUP][8];
    hrr_u64 chunks = hrr_b3_chunks_of(len);
    hrr_u64 first = (hrr_u64)blockIdx.x * HRR_B3_GROUP;
    hrr_u64 c = first + threadIdx.x;
    hrr_u32 count = chunks - first < HRR_B3_GROUP ? (hrr_u32)(chunks - first) : HRR_B3_GROUP;
    if (c < chunks) {
        hrr_u64 off = c * HRR_B3_CHUNK;
        hrr_u32 n = len - off < HRR_B3_CHUNK ? (hrr_u32)(len - off) : HRR_B3_CHUNK;
        hrr_b3_chunk(in + off, n, c, chunks == 1, cv[threadIdx.x]);
    }
    __syncthreads();
    hrr_b3_merge_group(cv, count, gridDim.x == 1);
    if (threadIdx.x < 8) out[8 * blockIdx.x + threadIdx.x] = cv[0][threadIdx.x];
}

/* The next levels: the `n` (≥ 2) nodes at `in`, each group of HRR_B3_GROUP
 * merged to one in out[blockIdx.x] (the hash when the grid is one block). */
extern "C" __global__ void __launch_bounds__(HRR_B3_GROUP)
    hrr_blake3_parents(const hrr_u32* in, hrr_u64 n, hrr_u32* out) {
    __shared__ hrr_u32 cv[HRR_B3_GROUP][8];
    hrr_u64 first = (hrr_u64)blockIdx.x * HRR_B3_GROUP;
    hrr_u64 c = first + threadIdx.x;
    hrr_u32 count = n - first < HRR_B3_GROUP ? (hrr_u32)(n - first) : HRR_B3_GROUP, i;
    if (c < n)
        for (i = 0; i < 8; ++i) cv[threadIdx.x][i] = in[8 * c + i];
    __syncthreads();
    hrr_b3_merge_group(cv, count, gridDim.x == 1);
    if (threadIdx.x < 8) out[8 * blockIdx.x + threadIdx.x] = cv[0][threadIdx.x];
}

#else

/* The host's form of the kernels, for the CPU test (tests/c/device_hash_cpu.c)
 * and the stand-in driver's launches (tests/c/fake_cuda/libcuda.c): one
 * kernel block at a time, its threads' work done in turn. */

/* hrr_b3_merge_group, serially: the `count` nodes of a group merged pairwise
 * in place, level by level, the odd last node promoted, down to cv[0]. */
static void hrr_b3_merge_group_serial(hrr_u32 (*cv)[8], hrr_u32 count, int whole) {
    hrr_u32 i, t;
    while (count > 1) {
        hrr_u32 pairs = count / 2;
        int root = whole && count == 2;
        /* Pair t's parent lands at t, below both of its inputs. */
        for (t = 0; t < pairs; ++t) hrr_b3_parent(cv[2 * t], cv[2 * t + 1], root, cv[t]);
        if (count & 1)
            for (i = 0; i < 8; ++i) cv[pairs][i] = cv[count - 1][i];
        count = (count + 1) / 2;
    }
}

/* Block `block` of `grid` of hrr_blake3_chunks(in, len, out). */
static void hrr_blake3_chunks_block(const hrr_u8* in, hrr_u64 len, hrr_u32* out, hrr_u32 block, hrr_u32 grid) {
    hrr_u32 cv[HRR_B3_GROUP][8];
    hrr_u64 chunks = hrr_b3_chunks_of(len);
    hrr_u64 first = (hrr_u64)block * HRR_B3_GROUP;
    hrr_u32 count = chunks - first < HRR_B3_GROUP ? (hrr_u32)(chunks - first) : HRR_B3_GROUP, t, i;
    for (t = 0; t < count; ++t) {
        hrr_u64 c = first + t, off = c * HRR_B3_CHUNK;
        hrr_u32 n = len - off < HRR_B3_CHUNK ? (hrr_u32)(len - off) : HRR_B3_CHUNK;
        hrr_b3_chunk(in + off, n, c, chunks == 1, cv[t]);
    }
    hrr_b3_merge_group_serial(cv, count, grid == 1);
    for (i = 0; i < 8; ++i) out[8 * block + i] = cv[0][i];
}

/* Block `block` of `grid` of hrr_blake3_parents(in, n, out). */
static void hrr_blake3_parents_block(const hrr_u32* in, hrr_u64 n, hrr_u32* out, hrr_u32 block, hrr_u32 grid) {
    hrr_u32 cv[HRR_B3_GROUP][8];
    hrr_u64 first = (hrr_u64)block * HRR_B3_GROUP;
    hrr_u32 count = n - first < HRR_B3_GROUP ? (hrr_u32)(n - first) : HRR_B3_GROUP, t, i;
    for (t = 0; t < count; ++t)
        for (i = 0; i < 8; ++i) cv[t][i] = in[8 * (first + t) + i];
    hrr_b3_merge_group_serial(cv, count, grid == 1);
    for (i = 0; i < 8; ++i) out[8 * block + i] = cv[0][i];
}

/* The launches the capture library makes (`plan::launches`), block by
 * block: the chunks' groups into `nodes` (room for a node per group), then
 * the groups' nodes merged in place until one is left. Writes the 32-byte
 * hash (the little-endian words the device's result page holds). */
static void hrr_blake3_serial(const hrr_u8* in, hrr_u64 len, hrr_u32 (*nodes)[8], hrr_u8 out[32]) {
    hrr_u64 n = (hrr_b3_chunks_of(len) + HRR_B3_GROUP - 1) / HRR_B3_GROUP, i;
    hrr_u32 b;
    for (b = 0; b < n; ++b) hrr_blake3_chunks_block(in, len, nodes[0], b, (hrr_u32)n);
    while (n > 1) {
        hrr_u64 groups = (n + HRR_B3_GROUP - 1) / HRR_B3_GROUP;
        /* Block b reads nodes b·GROUP… and writes node b: never a node a
         * later block still reads. */
        for (b = 0; b < groups; ++b) hrr_blake3_parents_block(nodes[0], n, nodes[0], b, (hrr_u32)groups);
        n = groups;
    }
    for (i = 0; i < 32; ++i) out[i] = (hrr_u8)(nodes[0][i / 4] >> (8 * (i % 4)));
}

#endif
