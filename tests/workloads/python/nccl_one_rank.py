"""One-rank NCCL collectives through torch.distributed: init_process_group
("nccl", rank 0 of 1, a file:// rendezvous in a fresh temporary directory),
all_reduce (sum and max), broadcast, all_gather (into a list and into one
tensor), reduce_scatter_tensor, elementwise work between them, results
copied back with .cpu() and checked (one rank: each collective is a copy).

NCCL allocates its own device memory at communicator creation (through
cuMem* by default; cudaMalloc with NCCL_CUMEM_ENABLE=0): the pass runs it
both ways. Deterministic by construction: seeded, and one rank sums nothing.
"""

import os
import shutil
import tempfile

from trust_common import Digest, finish, no_gpu

import torch
import torch.distributed as dist

NAME = "nccl_one_rank"
if not torch.cuda.is_available():
    no_gpu(NAME, "torch.cuda is not available")
if not dist.is_available() or not dist.is_nccl_available():
    no_gpu(NAME, "torch.distributed has no NCCL backend")
torch.manual_seed(5)
torch.cuda.manual_seed_all(5)
dev = torch.device("cuda", 0)
torch.cuda.set_device(dev)
gen = torch.Generator(device=dev)
gen.manual_seed(17)
d = Digest()
problems = []


def same(label: str, got: torch.Tensor, ref: torch.Tensor) -> None:
    ref = ref.cpu()
    if got.shape != ref.shape or not torch.equal(got, ref):
        problems.append(f"{label}: differs from what one rank must give")


tmp = tempfile.mkdtemp(prefix="hrr-nccl1-")
try:
    dist.init_process_group("nccl", init_method=f"file://{tmp}/rendezvous", rank=0, world_size=1,
                            device_id=dev)
    nccl_v = torch.cuda.nccl.version()
    nccl_v = ".".join(map(str, nccl_v)) if isinstance(nccl_v, tuple) else str(nccl_v)
    print(f"{NAME}: torch {torch.__version__}, nccl {nccl_v}, "
          f"NCCL_CUMEM_ENABLE={os.environ.get('NCCL_CUMEM_ENABLE', '(default)')}, "
          f"world {dist.get_world_size()}", flush=True)

    x = torch.randn(1_000_003, device=dev, generator=gen)  # no multiple of 128
    x0 = x.clone()
    dist.all_reduce(x)  # sum over one rank
    same("all_reduce sum", d.add_torch(x), x0)
    x = x * 0.5 + 1.0
    xi = torch.randint(-1000, 1000, (4099,), device=dev, generator=gen, dtype=torch.int32)
    xi0 = xi.clone()
    dist.all_reduce(xi, op=dist.ReduceOp.MAX)
    same("all_reduce max", d.add_torch(xi), xi0)

    y = torch.arange(65537, dtype=torch.float32, device=dev) * 0.25
    y0 = y.clone()
    dist.broadcast(y, src=0)
    same("broadcast", d.add_torch(y), y0)

    z = torch.sin(x[3:3 + 77777])  # a view 12 bytes past its allocation
    parts = [torch.empty_like(z) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, z)
    same("all_gather", d.add_torch(parts[0]), z)
    flat = torch.empty(dist.get_world_size() * z.numel(), device=dev)
    dist.all_gather_into_tensor(flat, z.contiguous())
    same("all_gather_into_tensor", d.add_torch(flat), z)

    r_in = torch.randn(3 * 1021, device=dev, generator=gen)
    r_out = torch.empty(3 * 1021 // dist.get_world_size(), device=dev)
    dist.reduce_scatter_tensor(r_out, r_in)
    same("reduce_scatter_tensor", d.add_torch(r_out), r_in)

    d.add_torch(torch.stack([x.sum(), flat.sum(), y.sum(), r_out.abs().max()]))
    torch.cuda.synchronize()
    dist.destroy_process_group()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish(NAME, problems, f"{d.results} results checked", d)
