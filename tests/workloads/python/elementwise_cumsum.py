"""The shape of a PyTorch script that replayed PASS on an H200 and FAIL (one
ulp) on an H100: elementwise ops and `torch.cumsum` over float32 of a length
that is no multiple of 128, on views whose data pointers are not 16-byte
aligned (x[1:], x[3:]: PyTorch's elementwise kernels and CUB pick their load
width from the pointers' alignment).

    elementwise_cumsum.py            random normal values (the reported shape)
    elementwise_cumsum.py --exact    small multiples of 1/8 instead, whose
                                     sums are exact in float32: the same
                                     kernels, deterministic by construction

A 1-D float cumsum is CUB's single-pass scan (decoupled look-back): which
predecessor tiles a tile adds up depends on timing, so with inexact values it
can differ in the last bit from run to run (PyTorch flags float cumsum on
CUDA as nondeterministic). The workload repeats that scan in the process and
prints how many of the repeats differ bitwise from the first (`repeat
scans differing: K of R`): nonzero is the scan's nondeterminism seen without
any capture. The default mode is seeded but not deterministic by
construction; --exact is. Row-wise (innermost-dimension) scans are one block
a row and deterministic either way.
"""

import sys

from trust_common import Digest, finish, no_gpu

import torch

EXACT = "--exact" in sys.argv[1:]
NAME = "elementwise_cumsum" + ("_exact" if EXACT else "")
if not torch.cuda.is_available():
    no_gpu(NAME, "torch.cuda is not available")
dev = torch.device("cuda")
torch.manual_seed(4321)
torch.cuda.manual_seed_all(4321)
torch.backends.cuda.matmul.allow_tf32 = False
gen = torch.Generator(device=dev)
gen.manual_seed(99)
d = Digest()
problems = []


def values(n: int) -> torch.Tensor:
    if EXACT:  # {-8, -7.5, ..., 8}: symmetric, so prefix sums stay small
        return torch.randint(-16, 17, (n,), device=dev, generator=gen, dtype=torch.int32).to(torch.float32) * 0.5
    return torch.randn(n, device=dev, generator=gen)


def check(label: str, got: torch.Tensor, ref: torch.Tensor, tol) -> None:
    """got (host, float32) against ref (float64): exactly in --exact mode
    where the arithmetic is exact (tol None), else |got - ref| <= tol."""
    ref = ref.cpu().double()
    g = got.double()
    if g.shape != ref.shape:
        problems.append(f"{label}: shape {tuple(g.shape)}, expected {tuple(ref.shape)}")
        return
    if tol is None:
        if not torch.equal(g, ref):
            problems.append(f"{label}: not exact (max abs diff {(g - ref).abs().max().item()})")
        return
    bad = ((g - ref).abs() > tol).sum().item()
    if bad:
        problems.append(f"{label}: {bad} elements beyond tolerance (max abs diff {(g - ref).abs().max().item():.3e})")


n = 1_000_003  # no multiple of 128
x = values(n + 8)
y = values(n + 8)
xa = x[1 : n + 1]  # 4 bytes past the allocation
yb = y[3 : n + 3]  # 12 bytes past
leak = 0.25 if EXACT else 0.1
e = xa * 1.5 - yb * 0.25 + (0.0 if EXACT else 0.125)
e2 = torch.where(e > 0, e, e * leak) if not EXACT else torch.where(e.abs() > 4, e * 0.5, e)
c1 = torch.cumsum(e2, 0)  # CUB scan over a view 4 bytes past its allocation
c2 = torch.cumsum(x[3 : 3 + 4099], 0)  # a small one, 12 bytes past
rows = y[1 : 1 + 999 * 1001].view(999, 1001)
c3 = torch.cumsum(rows, 1)  # one block a row
c4 = torch.cumsum(rows[:, 3:], 0)  # down the columns (outer dimension), strided
s = torch.stack([e2.sum(), c1[-1], e2.abs().max(), xa[7:].sum()])
h1 = d.add_torch(c1)
h2 = d.add_torch(c2)
h3 = d.add_torch(c3[::31])
h4 = d.add_torch(c4[::37])
h5 = d.add_torch(s)
sn = torch.sin(e2[5:]) * 0.5 + torch.exp(-yb[:-5].abs())  # inexact elementwise math
h6 = d.add_torch(sn[::11])

# The same scan again, in this process: how many repeats differ from c1.
REPEATS = 8
differing = 0
for _ in range(REPEATS):
    again = torch.cumsum(e2, 0)
    differing += int(not torch.equal(again, c1))
d.add_torch(torch.tensor([differing], device=dev))  # a D2H of the count, checked at replay
print(f"{NAME}: repeat scans differing: {differing} of {REPEATS}", flush=True)

# References in float64 on the CPU.
xc, yc = x.cpu().double(), y.cpu().double()
xac, ybc = xc[1 : n + 1], yc[3 : n + 3]
ec = xac * 1.5 - ybc * 0.25 + (0.0 if EXACT else 0.125)
e2c = torch.where(ec > 0, ec, ec * leak) if not EXACT else torch.where(ec.abs() > 4, ec * 0.5, ec)
# Inexact: a float32 scan's error grows with the sum of magnitudes so far.
scale = torch.cumsum(e2c.abs(), 0)
check("cumsum of a view", h1, torch.cumsum(e2c, 0), None if EXACT else 1e-3 + 4e-6 * scale)
check("small cumsum", h2, torch.cumsum(xc[3 : 3 + 4099], 0), None if EXACT else 1e-3 + 4e-6 * torch.cumsum(xc[3 : 3 + 4099].abs(), 0))
rowsc = yc[1 : 1 + 999 * 1001].view(999, 1001)
check("row cumsum", h3, torch.cumsum(rowsc, 1)[::31], None if EXACT else 1e-3 + 4e-6 * torch.cumsum(rowsc.abs(), 1)[::31])
check("column cumsum", h4, torch.cumsum(rowsc[:, 3:], 0)[::37], None if EXACT else 1e-3 + 4e-6 * torch.cumsum(rowsc[:, 3:].abs(), 0)[::37])
sc = torch.stack([e2c.sum(), torch.cumsum(e2c, 0)[-1], e2c.abs().max(), xac[7:].sum()])
check("sums", h5, sc, None if EXACT else 1e-3 + 4e-6 * torch.stack([scale[-1], scale[-1], torch.tensor(0.0, dtype=torch.float64), xac[7:].abs().sum()]))
check("sin/exp", h6, (torch.sin(e2c[5:]) * 0.5 + torch.exp(-ybc[:-5].abs()))[::11], 1e-5)
finish(NAME, problems, f"{d.results} results checked ({'exact values' if EXACT else 'random values'}, n={n})", d)
