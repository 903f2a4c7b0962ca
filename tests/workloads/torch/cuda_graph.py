"""A training step of a small MLP captured whole with `torch.cuda.graph`
(forward, loss, backward, SGD step into static tensors), as PyTorch's
documentation does it: warm-up iterations on a side stream first, then the
capture, then `g.replay()` three times, each after new inputs (made on the
host) are copied into the static input and target; each replay's loss and
predictions, and the final weights, are copied to the host.

The capture must record the graph (`graph_exec`) and its replays
(`graph_launch`), not the captured kernels as if they ran."""

from common import Checksum, finish, mlp, setup

import torch

dev = setup()
c = Checksum()
model, opt = mlp(dev)
gen = torch.Generator().manual_seed(99)


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(256, 64, generator=gen), torch.randn(256, 10, generator=gen)


static_x = torch.empty(256, 64, device=dev)
static_y = torch.empty(256, 10, device=dev)
x0, y0 = batch()
static_x.copy_(x0)
static_y.copy_(y0)

# Warm-up on a side stream (lazy initialisation, cuBLAS workspaces,
# momentum buffers) before capture, as torch.cuda.graph requires.
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        opt.step()
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    static_pred = model(static_x)
    static_loss = torch.nn.functional.mse_loss(static_pred, static_y)
    static_loss.backward()
    opt.step()

losses = []
for _ in range(3):
    x, y = batch()
    static_x.copy_(x)
    static_y.copy_(y)
    g.replay()
    losses.append(c.add(static_loss).item())
    c.add(static_pred)
torch.cuda.synchronize()
for p in model.parameters():
    c.add(p)
print("losses " + " ".join(f"{v:.6f}" for v in losses), flush=True)
finish(
    "torch_cuda_graph",
    all(v == v and v < 10.0 for v in losses),
    "three replays of a captured training step",
    c,
)
