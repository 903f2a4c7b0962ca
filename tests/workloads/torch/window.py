"""A training loop whose steps 50 to 53 are marked as the profiler range
(torch.cuda.profiler.start() before step 50, stop() after step 53): what
`hrr-cap --window profiler` records. The small MLP of train.py, SGD with
momentum; every step's loss is copied to the host, so the window holds the
D2H of its four steps, which its replay must reproduce byte for byte
against the same D2H of a whole-run capture.

`HRR_WINDOW_STEPS` sets the number of steps (default 60)."""

import os

from common import Checksum, finish, mlp, setup

import torch

START, STOP = 50, 53

dev = setup()
c = Checksum()
model, opt = mlp(dev)
x = torch.randn(256, 64, device=dev)
y = torch.randn(256, 10, device=dev)
steps = int(os.environ.get("HRR_WINDOW_STEPS", "60"))
losses = []
for step in range(steps):
    if step == START:
        torch.cuda.profiler.start()
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(c.add(loss).item())  # the D2H; waits for the step
    if step == STOP:
        torch.cuda.profiler.stop()
for p in model.parameters():
    c.add(p)
print("losses " + " ".join(f"{v:.6f}" for v in losses[START : STOP + 1]), flush=True)
finish("torch_window", losses[-1] < losses[0], f"loss decreases over {steps} steps", c)
