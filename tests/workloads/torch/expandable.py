"""The same work as matmul.py and more allocations, with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: PyTorch reserves a large
virtual range and maps physical pieces into it as it grows
(cuMemAddressReserve, cuMemCreate, cuMemMap through the driver API)."""

import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

from common import Checksum, finish, setup  # noqa: E402

import torch  # noqa: E402

dev = setup()
c = Checksum()
# Enough live tensors to grow the segment past one piece, so later tensors
# land across piece boundaries.
keep = [torch.randn(2048 * 1024, device=dev) for _ in range(12)]
a = torch.randn(2048, 1024, device=dev)
b = torch.randn(1024, 1024, device=dev)
out = a @ b + keep[-1][: 2048 * 1024].view(2048, 1024)
host = c.add(out)
for t in keep[::4]:
    c.add(t * 2)
ref = a.double().cpu() @ b.double().cpu() + keep[-1][: 2048 * 1024].view(2048, 1024).double().cpu()
err = (host.double() - ref).abs().max().item()
stats = torch.cuda.memory_stats()
print(f"segments {stats.get('segment.all.current', 0)} reserved {torch.cuda.memory_reserved()}", flush=True)
finish("torch_expandable", err < 1e-2, f"matmul over expandable segments max err {err:.2e}", c)
