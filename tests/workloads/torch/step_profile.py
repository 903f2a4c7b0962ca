"""Where a training step's host time goes: train.py's model and loop, with
each phase of a step (zero_grad, forward, backward, optimizer step, the
loss's copy to the host) timed on the host, then the CPU time per operator
from torch.profiler over the same steps. Run it plain and under hrr-cap
(scripts/gpu-speed.sh, part `profile`) and compare: the phase or operator whose time
grows under capture is where the recorder's cost lands.

Not a correctness workload: it prints timings only."""

import os
import statistics
import time

from common import mlp, setup

import torch

dev = setup()
model, opt = mlp(dev)
x = torch.randn(256, 64, device=dev)
y = torch.randn(256, 10, device=dev)
steps = int(os.environ.get("HRR_TRAIN_STEPS", "200"))
phases = {k: [] for k in ("zero_grad", "forward", "backward", "step", "item", "total")}


def step(times):
    t = [time.perf_counter()]
    opt.zero_grad(set_to_none=True)
    t.append(time.perf_counter())
    loss = torch.nn.functional.mse_loss(model(x), y)
    t.append(time.perf_counter())
    loss.backward()
    t.append(time.perf_counter())
    opt.step()
    t.append(time.perf_counter())
    loss.to("cpu")
    t.append(time.perf_counter())
    if times is not None:
        for i, k in enumerate(("zero_grad", "forward", "backward", "step", "item")):
            times[k].append((t[i + 1] - t[i]) * 1e6)
        times["total"].append((t[-1] - t[0]) * 1e6)


for _ in range(20):
    step(None)
torch.cuda.synchronize()
for _ in range(steps):
    step(phases)
print(
    "phase_us "
    + " ".join(f"{k}={statistics.median(v):.1f}" for k, v in phases.items()),
    flush=True,
)

from torch.profiler import ProfilerActivity, profile  # noqa: E402

with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(50):
        step(None)
rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:20]
for e in rows:
    print(
        f"op_us {e.key} calls={e.count} self_per_call={e.self_cpu_time_total / max(e.count, 1):.1f}",
        flush=True,
    )
