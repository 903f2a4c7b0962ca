"""A small MLP trained for a few SGD steps, deterministic: forward,
backward (cuBLAS, elementwise and reduction kernels), optimizer step; the
loss of every step and the final weights are copied to the host.

`HRR_TRAIN_STEPS` sets the number of steps (default 5; gpu-speed.sh times
200); the loop's wall time, GPU work included, is printed as
`train_loop_ms=`, and that of the steps after the first ten (kernels and
libraries loaded, first-launch costs paid) as `train_steady_ms=`."""

import os
import time

from common import Checksum, finish, mlp, setup

import torch

dev = setup()
c = Checksum()
model, opt = mlp(dev)
x = torch.randn(256, 64, device=dev)
y = torch.randn(256, 10, device=dev)
steps = int(os.environ.get("HRR_TRAIN_STEPS", "5"))
losses = []
torch.cuda.synchronize()
t0 = time.perf_counter()
for step in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(c.add(loss).item())  # waits for the step
    if step == 9:
        t10 = time.perf_counter()
torch.cuda.synchronize()
t1 = time.perf_counter()
loop_ms = (t1 - t0) * 1e3
steady = f" train_steady_ms={(t1 - t10) * 1e3:.1f}" if steps > 10 else ""
for p in model.parameters():
    c.add(p)
print(f"train_loop_ms={loop_ms:.1f}{steady} steps={steps}", flush=True)
print("losses " + " ".join(f"{v:.6f}" for v in losses), flush=True)
finish("torch_train", losses[-1] < losses[0], f"loss decreases over {steps} steps", c)
