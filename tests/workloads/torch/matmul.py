"""A PyTorch matmul (cuBLAS through the driver API), fixed seed, result
copied to the host and checked against a float64 reference on the CPU."""

from common import Checksum, finish, setup

import torch

dev = setup()
c = Checksum()
a = torch.randn(1024, 768, device=dev)
b = torch.randn(768, 512, device=dev)
out = a @ b
host = c.add(out)
ref = a.double().cpu() @ b.double().cpu()
err = (host.double() - ref).abs().max().item()
finish("torch_matmul", err < 1e-3, f"matmul max err {err:.2e}", c)
