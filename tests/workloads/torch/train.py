"""A small MLP trained for a few SGD steps, deterministic: forward,
backward (cuBLAS, elementwise and reduction kernels), optimizer step; the
loss of every step and the final weights are copied to the host."""

from common import Checksum, finish, setup

import torch

dev = setup()
c = Checksum()
model = torch.nn.Sequential(
    torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(256, 64, device=dev)
y = torch.randn(256, 10, device=dev)
losses = []
for step in range(5):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(c.add(loss).item())
for p in model.parameters():
    c.add(p)
print("losses " + " ".join(f"{v:.6f}" for v in losses), flush=True)
finish("torch_train", losses[-1] < losses[0], "loss decreases over 5 steps", c)
