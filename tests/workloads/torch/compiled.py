"""A torch.compile'd function: Inductor generates Triton kernels, Triton
loads their cubins with cuModuleLoadData and launches them with
cuLaunchKernel(Ex) through the driver API."""

import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

from common import Checksum, finish, setup  # noqa: E402

import torch  # noqa: E402

dev = setup()
c = Checksum()


def f(x, y):
    return torch.sin(x) * torch.cos(y) + (x * y).relu().sum(dim=1, keepdim=True)


cf = torch.compile(f)
x = torch.randn(4096, 256, device=dev)
y = torch.randn(4096, 256, device=dev)
got = c.add(cf(x, y))
got2 = c.add(cf(x + 1, y))
want = f(x, y).cpu()
err = (got - want).abs().max().item()
finish("torch_compile", err < 1e-3 and got2.shape == got.shape, f"compiled vs eager max err {err:.2e}", c)
