"""A small MLP trained for a few SGD steps, deterministic: forward,
backward (cuBLAS, elementwise and reduction kernels), optimizer step; the
loss of every step and the final weights are copied to the host.

`HRR_TRAIN_STEPS` sets the number of steps (default 5; gpu-speed.sh times
200); the loop's wall time, GPU work included, is printed as
`train_loop_ms=`, and that of the steps after the first ten (kernels and
libraries loaded, first-launch costs paid) as `train_steady_ms=`, with the
main thread's CPU time over those steps (`train_steady_cpu_ms=`) and its
voluntary and involuntary context switches (`train_steady_ctxsw=V,N`): a
capture that slows the steps by running more code on the thread shows in
its CPU time; one that takes the CPU away from it, in the rest. The first
ten steps (first launches: libraries and kernels loaded, code recorded)
print as `train_warm_ms=` and `train_warm_cpu_ms=`; `HRR_TRAIN_TRACE=1`
adds each step's wall time (`train_step_ms=`), the main thread's minor page
faults over the steady steps (`train_steady_minflt=`) and, per thread of the
process, its CPU time over its life and the CPU it last ran on
(`train_thread=NAME cpu_ms=T last_cpu=N`, from the kernel's schedstat):
what else ran beside the loop, and where."""

import os
import resource
import time

from common import Checksum, finish, mlp, setup

import torch

dev = setup()
c = Checksum()
model, opt = mlp(dev)
x = torch.randn(256, 64, device=dev)
y = torch.randn(256, 10, device=dev)
steps = int(os.environ.get("HRR_TRAIN_STEPS", "5"))
trace = os.environ.get("HRR_TRAIN_TRACE") == "1"
losses = []
marks = []


def ctxsw():
    """The main thread's (voluntary, involuntary) context switches so far."""
    try:
        with open("/proc/thread-self/status") as f:
            v = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
        return int(v["voluntary_ctxt_switches"]), int(v["nonvoluntary_ctxt_switches"])
    except (OSError, KeyError, ValueError):
        return 0, 0


def minflt():
    """The main thread's minor page faults so far."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def threads():
    """One line per thread of this process: name, CPU time, last CPU."""
    out = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            base = f"/proc/self/task/{tid}"
            with open(f"{base}/comm") as f:
                name = f.read().strip().replace(" ", "_")
            with open(f"{base}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"{base}/stat") as f:
                last = f.read().rsplit(")", 1)[1].split()[36]
        except (OSError, IndexError, ValueError):
            continue
        out.append(f"train_thread={name} tid={tid} cpu_ms={ns / 1e6:.1f} last_cpu={last}")
    return out


torch.cuda.synchronize()
t0, cpu0 = time.perf_counter(), time.thread_time()
for step in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(c.add(loss).item())  # waits for the step
    if trace:
        marks.append(time.perf_counter())
    if step == 9:
        t10, cpu10, sw10, mf10 = time.perf_counter(), time.thread_time(), ctxsw(), minflt()
torch.cuda.synchronize()
t1, cpu1, sw1, mf1 = time.perf_counter(), time.thread_time(), ctxsw(), minflt()
loop_ms = (t1 - t0) * 1e3
steady = (
    f" train_warm_ms={(t10 - t0) * 1e3:.1f}"
    f" train_warm_cpu_ms={(cpu10 - cpu0) * 1e3:.1f}"
    f" train_steady_ms={(t1 - t10) * 1e3:.1f}"
    f" train_steady_cpu_ms={(cpu1 - cpu10) * 1e3:.1f}"
    f" train_steady_ctxsw={sw1[0] - sw10[0]},{sw1[1] - sw10[1]}"
    if steps > 10
    else ""
)
for p in model.parameters():
    c.add(p)
print(f"train_loop_ms={loop_ms:.1f}{steady} steps={steps}", flush=True)
if trace:
    ms = [(b - a) * 1e3 for a, b in zip([t0] + marks, marks)]
    print("train_step_ms=" + " ".join(f"{v:.2f}" for v in ms), flush=True)
    if steps > 10:
        print(f"train_steady_minflt={mf1 - mf10}", flush=True)
    print("\n".join(threads()), flush=True)
print("losses " + " ".join(f"{v:.6f}" for v in losses), flush=True)
finish("torch_train", losses[-1] < losses[0], f"loss decreases over {steps} steps", c)
