"""More device allocations than luck can place: PyTorch tensors from 4 bytes
to hundreds of MiB (odd sizes), freed in between, `torch.cuda.empty_cache()`
in the middle (the caching allocator really frees its segments and allocates
new ones), elementwise ops on views at odd offsets, `torch.cumsum`, sums, and
a table of the tensors' device addresses copied to the device and read two
ways: a gather by indexing (the addresses as offsets into one arena) and,
where Triton is there, a kernel that loads through the addresses (right only
when every allocation is at its recorded address).

Deterministic by construction: seeded, no TF32, and the values are small
multiples of 1/2 whose sums and prefix sums are exact in float32, so any
order of summation (CUB's scan included) gives the same bits; the checks
against the CPU are exact where the arithmetic is. Run with the default
allocator and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.
"""

import os

from trust_common import Digest, finish, no_gpu

import torch

NAME = "torch_many_allocs"
if not torch.cuda.is_available():
    no_gpu(NAME, "torch.cuda is not available")
dev = torch.device("cuda")
torch.manual_seed(1234)
torch.cuda.manual_seed_all(1234)
torch.backends.cuda.matmul.allow_tf32 = False
gen = torch.Generator(device=dev)
gen.manual_seed(7)
d = Digest()
problems = []
MiB = 1 << 20


def halves(nbytes: int) -> torch.Tensor:
    """A float32 tensor of ceil(nbytes / 4) values in {-8, -7.5, ..., 8}
    (an int32 temporary makes one more allocation of the same size)."""
    n = max(1, (nbytes + 3) // 4)
    t = torch.randint(-16, 17, (n,), device=dev, generator=gen, dtype=torch.int32)
    return t.to(torch.float32) * 0.5


def exact(label: str, got: torch.Tensor, ref: torch.Tensor) -> None:
    ref = ref.cpu()
    if got.shape != ref.shape:
        problems.append(f"{label}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}")
    elif not torch.equal(got.double(), ref.double()):
        diff = (got.double() - ref.double()).abs().max().item()
        problems.append(f"{label}: differs from the reference (max abs diff {diff})")


def close(label: str, got: torch.Tensor, ref: torch.Tensor, tol: float) -> None:
    err = (got.double() - ref.cpu().double()).abs().max().item()
    if not err <= tol:
        problems.append(f"{label}: max abs err {err:.3e} > {tol}")


# --- phase A: many sizes, interleaved frees -------------------------------
sizes_a = [4, 12, 100, 1000, 4097 * 4, 65537 * 4, 3 * MiB + 12, 11 * MiB + 4,
           17 * MiB + 8, 33 * MiB + 4, 129 * MiB + 36, 300 * MiB + 4]
live = {}
for i, nb in enumerate(sizes_a):
    live[f"a{i}"] = halves(nb)
    # A short-lived temporary between the keepers.
    tmp = halves(nb // 3 + 40)
    d.add_torch(tmp[:3])
    del tmp
    if i % 3 == 2:
        del live[f"a{i - 1}"]

# Sums of the survivors before the caches are emptied; the references in
# float64 on the device (exact: the float32 sums are exact too).
for k in sorted(live):
    t = live[k]
    host = d.add_torch(t.sum())
    exact(f"sum {k}", host, t.double().sum())

# --- phase B: free more, empty the cache, allocate other sizes ------------
for k in ("a3", "a6", "a9"):
    live.pop(k, None)
torch.cuda.synchronize()
stats_before = torch.cuda.memory_stats()
torch.cuda.empty_cache()
sizes_b = [8, 52, 777 * 4, 2 * MiB + 4, 7 * MiB + 20, 23 * MiB + 4, 61 * MiB + 12, 201 * MiB + 8]
for i, nb in enumerate(sizes_b):
    live[f"b{i}"] = halves(nb)

# --- elementwise ops on views at odd offsets, cumsum, reductions ----------
x = live["b6"]  # 61 MiB
y = live["a11"]  # 300 MiB
n = 1_000_003  # not a multiple of 128
xa, yb = x[1 : n + 1], y[3 : n + 3]  # 4 and 12 bytes past the allocation: not 16-byte aligned
e = xa * 0.5 + yb  # exact: multiples of 1/4, |e| <= 12, symmetric about 0
e2 = torch.where(e.abs() > 4, e * 0.5, e)  # multiples of 1/8, still symmetric
c = torch.cumsum(e2, 0)  # 1-D: CUB's scan; exact (|prefix| << 2**21) whatever its order
host_c = d.add_torch(c)
xs, ys = xa.cpu().double(), yb.cpu().double()
es = xs * 0.5 + ys
exact("cumsum of views", host_c, torch.cumsum(torch.where(es.abs() > 4, es * 0.5, es), 0))
rows = x[3 : 3 + 999 * 1001].view(999, 1001)
rc = torch.cumsum(rows, 1)  # along the innermost dimension, rows at odd offsets
host_rc = d.add_torch(rc[::97])
exact("row cumsum", host_rc, torch.cumsum(rows.double(), 1)[::97])
# Inexact elementwise math (deterministic: one kernel, the same inputs).
f = torch.sigmoid(xa[5:]) * torch.sqrt(yb[:-5].abs() + 1.0) / (1.0 + xa[:-5] * xa[:-5])
host_f = d.add_torch(f[::7])
close("sigmoid/sqrt/div", host_f,
      (torch.sigmoid(xs[5:]) * torch.sqrt(ys[:-5].abs() + 1.0) / (1.0 + xs[:-5] * xs[:-5]))[::7], 1e-5)
big = live["b7"]  # 201 MiB
host_s = d.add_torch(torch.stack([big.sum(), big.abs().max(), big[5:].sum(), big[::3].sum()]))
bd = big.double()
exact("big reductions", host_s, torch.stack([bd.sum(), bd.abs().max(), bd[5:].sum(), bd[::3].sum()]))
del bd
sq = d.add_torch((big * big).sum())  # not exact in float32: deterministic all the same
close("sum of squares", sq, (big.double() * big.double()).sum(), 1e-5 * float(sq.abs()) + 1.0)
src_i = live["a8"][: 4_000_037]  # 33 MiB tensor, an odd-length prefix
ic = torch.cumsum(src_i.to(torch.int32), 0)  # int32 scan
host_ic = d.add_torch(ic[-1000:])
exact("int cumsum", host_ic, torch.cumsum(src_i.to(torch.int64), 0)[-1000:])

# --- device addresses in device memory -------------------------------------
# (1) A gather by indexing: views into one arena at odd offsets; their
# addresses, copied to the device, become element offsets into the arena.
arena = halves(5 * MiB + 4)
offsets = [1, 3, 1000, 4099, 65541, 700001, 1300003]
parts = [arena[o : o + 64] for o in offsets]
table = torch.tensor([p.data_ptr() for p in parts], dtype=torch.int64, device=dev)
idx = (table - arena.data_ptr()) // 4
gathered = arena[idx.unsqueeze(1) + torch.arange(64, device=dev)]
host_g = d.add_torch(gathered)
exact("gather by device-held addresses", host_g, torch.stack([p.cpu() for p in parts]))
# (2) A kernel that loads through the addresses: the tensors of both phases,
# each at an odd element offset.
keys = sorted(k for k in live if live[k].numel() >= 64 + 3)
srcs = [live[k][(j % 4) : (j % 4) + 64] for j, k in enumerate(keys)]
ptr_table = torch.tensor([s.data_ptr() for s in srcs], dtype=torch.int64, device=dev)
try:
    import triton
    import triton.language as tl
except ImportError as err:  # the pass's machine has Triton; say so when not
    print(f"{NAME}: triton not importable ({err}); the pointer-chasing kernel is skipped", flush=True)
    triton = None
if triton is not None:

    @triton.jit
    def chase(table_ptr, out_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        src = tl.load(table_ptr + pid).to(tl.pointer_type(tl.float32))
        offs = tl.arange(0, BLOCK)
        v = tl.load(src + offs)
        tl.store(out_ptr + pid * BLOCK + offs, v * 2.0 + 1.0)

    out = torch.empty(len(srcs), 64, device=dev)
    chase[(len(srcs),)](ptr_table, out, BLOCK=64)
    host_o = d.add_torch(out)
    exact("loads through device-held addresses", host_o, torch.stack([s.cpu() for s in srcs]) * 2.0 + 1.0)
d.add_torch(ptr_table)  # the addresses themselves, as the device holds them

torch.cuda.synchronize()
stats = torch.cuda.memory_stats()
print(f"{NAME}: allocator {os.environ.get('PYTORCH_CUDA_ALLOC_CONF', 'default')}: "
      f"segments allocated {stats.get('segment.all.allocated', '?')} "
      f"(before empty_cache {stats_before.get('segment.all.allocated', '?')}), "
      f"freed {stats.get('segment.all.freed', '?')}; live tensors {len(live)}; "
      f"pointer table {len(srcs)} entries", flush=True)
finish(NAME, problems, f"{d.results} results checked", d)
