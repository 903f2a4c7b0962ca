"""A small CuPy program: arrays of varied sizes (4 bytes to 130 MiB) from the
host and made on the device, some freed and the memory pool emptied in the
middle (cudaFree, then new cudaMallocs), a cupy.ElementwiseKernel, two
cupy.RawKernel compiled with NVRTC (a gather by index, and one that loads
through a table of the arrays' device addresses held in device memory:
right only when every allocation is at its recorded address), reductions,
cupy.cumsum, results fetched with .get() and checked against numpy.

Deterministic by construction: seeded numpy inputs, values that are small
multiples of 1/2 wherever a sum or a scan's order could matter (exact in
float32, whatever order CUB's scan adds in), a fixed-order tree reduction in
the raw kernel; inexact math only elementwise. CUPY_CACHE_IN_MEMORY=1: no
kernel cache on disk, so every run compiles its kernels with NVRTC alike.
"""

import os

os.environ.setdefault("CUPY_CACHE_IN_MEMORY", "1")

from trust_common import Digest, finish, no_gpu  # noqa: E402

import numpy as np  # noqa: E402

import cupy as cp  # noqa: E402

NAME = "cupy_program"
try:
    ndev = cp.cuda.runtime.getDeviceCount()
except cp.cuda.runtime.CUDARuntimeError as err:
    no_gpu(NAME, str(err))
if ndev < 1:
    no_gpu(NAME, "no CUDA device")
print(f"{NAME}: cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
      f"CUPY_ACCELERATORS={os.environ.get('CUPY_ACCELERATORS', '(default)')}", flush=True)
rng = np.random.default_rng(2024)
d = Digest()
problems = []
MiB = 1 << 20


def halves(n: int) -> np.ndarray:
    """n float32 values in {-8, -7.5, ..., 8}."""
    return (rng.integers(-16, 17, size=n).astype(np.float32) * np.float32(0.5))


def exact(label: str, got: np.ndarray, ref: np.ndarray) -> None:
    got64, ref64 = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got64.shape != ref64.shape:
        problems.append(f"{label}: shape {got64.shape}, expected {ref64.shape}")
    elif not np.array_equal(got64, ref64):
        problems.append(f"{label}: differs (max abs diff {np.max(np.abs(got64 - ref64))})")


def close(label: str, got: np.ndarray, ref: np.ndarray, tol: float) -> None:
    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - ref)))
    if not err <= tol:
        problems.append(f"{label}: max abs err {err:.3e} > {tol}")


def fetch(a):
    """The D2H (.get()), added to the checksum."""
    h = a.get()
    d.add_numpy(h)
    return h


pool = cp.get_default_memory_pool()

# --- arrays of varied sizes, some freed, the pool emptied -------------------
host = {}
dev = {}
sizes_a = [1, 3, 25, 1000, 4099, 65537, 1 * MiB + 3, 3 * MiB + 1, 9 * MiB + 5, 33 * MiB + 7]  # elements
for i, n in enumerate(sizes_a):
    if i % 2 == 0:  # from the host (H2D)
        host[f"a{i}"] = halves(n)
        dev[f"a{i}"] = cp.asarray(host[f"a{i}"])
    else:  # made on the device: a multiplicative hash of the index, mod 2**32
        k = cp.arange(n, dtype=cp.uint32) * cp.uint32(2654435761)
        dev[f"a{i}"] = ((k >> 11) % 33).astype(cp.float32) * cp.float32(0.5) - cp.float32(8.0)
        kh = np.arange(n, dtype=np.uint32) * np.uint32(2654435761)
        host[f"a{i}"] = ((kh >> 11) % 33).astype(np.float32) * np.float32(0.5) - np.float32(8.0)
        del k, kh
    if i % 3 == 2:
        del dev[f"a{i - 1}"], host[f"a{i - 1}"]
for k in sorted(dev):
    exact(f"sum {k}", fetch(dev[k].sum()), host[k].astype(np.float64).sum())
for k in ("a2", "a6"):
    del dev[k], host[k]
used_before = pool.used_bytes()
total_before = pool.total_bytes()
pool.free_all_blocks()  # cudaFree of every unused block
sizes_b = [2, 777, 2 * MiB + 1, 7 * MiB + 3, 17 * MiB + 11]
for i, n in enumerate(sizes_b):
    host[f"b{i}"] = halves(n)
    dev[f"b{i}"] = cp.asarray(host[f"b{i}"])

# --- an ElementwiseKernel on views at odd offsets ----------------------------
axpy2 = cp.ElementwiseKernel(
    "float32 x, float32 y, float32 a", "float32 z", "z = a * x + y * y", "trust_axpy2")
n = 1_000_003
x, y = dev["a9"][1 : n + 1], dev["b4"][3 : n + 3]  # 4 and 12 bytes past their allocations
xh, yh = host["a9"][1 : n + 1], host["b4"][3 : n + 3]
z = axpy2(x, y, cp.float32(0.25))
zh = fetch(z)
exact("ElementwiseKernel", zh, 0.25 * xh.astype(np.float64) + yh.astype(np.float64) ** 2)  # exact: multiples of 1/8

# --- RawKernels compiled with NVRTC ------------------------------------------
src = r"""
extern "C" __global__ void trust_gather(const float* __restrict__ src, const int* __restrict__ idx,
                                        float* __restrict__ out, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = src[idx[i]] * s;
}

// One block per table entry: reads through the device address held in the
// table (a pointer stored in device memory), sums in a fixed-order tree.
extern "C" __global__ void trust_through_table(const unsigned long long* __restrict__ table,
                                               const int* __restrict__ lens, float* __restrict__ out) {
    __shared__ float acc[256];
    const float* p = reinterpret_cast<const float*>(table[blockIdx.x]);
    int n = lens[blockIdx.x];
    float a = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) a += p[i] * (float)((i % 7) + 1);
    acc[threadIdx.x] = a;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = acc[0];
}
"""
gather = cp.RawKernel(src, "trust_gather")
through = cp.RawKernel(src, "trust_through_table")
m = 100_003
idx_h = rng.integers(0, dev["b3"].size, size=m).astype(np.int32)
idx = cp.asarray(idx_h)
out = cp.empty(m, dtype=cp.float32)
gather(((m + 255) // 256,), (256,), (dev["b3"], idx, out, cp.int32(m), cp.float32(-2.0)))
exact("RawKernel gather", fetch(out), host["b3"][idx_h].astype(np.float64) * -2.0)

keys = sorted(k for k in dev if dev[k].size >= 8)
views = [dev[k][j % 4 :] for j, k in enumerate(keys)]  # odd offsets too
hviews = [host[k][j % 4 :] for j, k in enumerate(keys)]
lens_h = np.array([min(v.size, 65536) for v in views], dtype=np.int32)
table = cp.asarray(np.array([v.data.ptr for v in views], dtype=np.uint64))
lens = cp.asarray(lens_h)
sums = cp.empty(len(views), dtype=cp.float32)
through((len(views),), (256,), (table, lens, sums))
ref = [float((hv[:ln].astype(np.float64) * ((np.arange(ln) % 7) + 1)).sum()) for hv, ln in zip(hviews, lens_h)]
exact("RawKernel through a table of device addresses", fetch(sums), np.array(ref))  # |partial sums| << 2**21
fetch(table)

# --- reductions, cumsum -------------------------------------------------------
big = dev["a9"]
bh = host["a9"].astype(np.float64)
exact("sum, max, min", fetch(cp.stack([big.sum(), big.max(), big.min(), big[5:].sum()])),
      np.array([bh.sum(), bh.max(), bh.min(), bh[5:].sum()]))
cs = cp.cumsum(x)  # float32 scan of a view 4 bytes past its allocation; exact values
exact("cumsum", fetch(cs), np.cumsum(xh.astype(np.float64)))
ci = cp.cumsum(dev["b2"].astype(cp.int32))
exact("int cumsum", fetch(ci[-1000:]), np.cumsum(host["b2"].astype(np.int64))[-1000:])
w = cp.sqrt(cp.abs(y) + 1.0) * cp.sin(x)  # inexact, elementwise
close("sqrt*sin", fetch(w[::13]), (np.sqrt(np.abs(yh.astype(np.float64)) + 1.0) * np.sin(xh.astype(np.float64)))[::13], 1e-5)

cp.cuda.Device().synchronize()
print(f"{NAME}: pool before emptying: {used_before} used, {total_before} held; now {pool.used_bytes()} used, "
      f"{pool.total_bytes()} held; live arrays {len(dev)}; table {len(views)} entries", flush=True)
finish(NAME, problems, f"{d.results} results checked", d)
