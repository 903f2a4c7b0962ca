"""Shared by the PyTorch workloads: determinism set-up and the result line.

Each workload prints `NAME: checksum <hex>` (a hash of the bytes of every
result it copied to the host), then `NAME: <what>: OK` or `WRONG`; gpu-pass
runs it twice without capture and compares the checksums to tell a
deterministic workload (replayed byte for byte) from one that is not.
"""

import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def setup(seed: int = 1234) -> torch.device:
    if not torch.cuda.is_available():
        print("WRONG: torch.cuda is not available", flush=True)
        sys.exit(2)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch.device("cuda")


def mlp(dev: torch.device) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """The training workloads' model (Linear 64→128, ReLU, Linear 128→10)
    and its optimizer (SGD with momentum)."""
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).to(dev)
    return model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


class Checksum:
    """A position-weighted sum of the bytes of every host copy of a result,
    in order (torch only: the wheel does not bring numpy)."""

    def __init__(self) -> None:
        self.acc = 0

    def add(self, t: torch.Tensor) -> torch.Tensor:
        host = t.detach().to("cpu")  # the D2H the archive checks
        b = host.reshape(-1).contiguous().view(torch.uint8).to(torch.int64)
        w = torch.arange(1, b.numel() + 1, dtype=torch.int64) % 1000003
        self.acc = (self.acc * 1000033 + int((b * w).sum())) % (1 << 61)
        return host

    def hex(self) -> str:
        return f"{self.acc:016x}"


def finish(name: str, ok: bool, what: str, checksum: Checksum) -> None:
    print(f"{name}: checksum {checksum.hex()}", flush=True)
    print(f"{name}: {what}: {'OK' if ok else 'WRONG'}", flush=True)
    sys.exit(0 if ok else 1)
