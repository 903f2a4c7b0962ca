"""Shared by the trust workloads (scripts/gpu-pass.sh, cases trust_*): the
result lines, framework-agnostic (no torch, JAX or CuPy import here).

Each workload prints `NAME: checksum <hex>` (a SHA-256 prefix of the bytes of
every result it copied to the host, in order), other short `NAME: ...` lines,
then last `NAME: <what>: OK` or `WRONG` (gpu-pass fails a capture whose
output says WRONG), and exits 0 on OK, 1 on WRONG, 2 when the framework has
no GPU. The pass captures each workload twice: the same checksum twice is one
of its signs of a deterministic program.
"""

import hashlib
import sys


class Digest:
    """The bytes of every host copy of a result, in order."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.bytes = 0
        self.results = 0

    def add_bytes(self, data: bytes) -> None:
        self.h.update(data)
        self.bytes += len(data)
        self.results += 1

    def add_numpy(self, a) -> None:
        """A numpy array (already on the host): its bytes in C order."""
        self.add_bytes(a.tobytes())

    def add_torch(self, t):
        """Copies a torch tensor to the host (the D2H the archive checks),
        adds its bytes, and returns the host copy."""
        import torch

        host = t.detach().cpu().contiguous()
        flat = host.reshape(-1).view(torch.uint8)
        try:
            data = flat.numpy().tobytes()
        except (RuntimeError, TypeError, ImportError):  # no numpy
            data = bytes(flat.tolist())
        self.add_bytes(data)
        return host

    def hex(self) -> str:
        return self.h.hexdigest()[:16]


def no_gpu(name: str, why: str) -> None:
    print(f"{name}: WRONG: no GPU: {why}", flush=True)
    sys.exit(2)


def finish(name: str, problems: list, what: str, digest: Digest) -> None:
    """The last lines: the checksum, then OK or WRONG (with the first
    problems found); exits 0 or 1."""
    print(f"{name}: checksum {digest.hex()} ({digest.results} results, {digest.bytes} bytes)", flush=True)
    if problems:
        print(f"{name}: {what}: WRONG: {'; '.join(problems[:5])}", flush=True)
        sys.exit(1)
    print(f"{name}: {what}: OK", flush=True)
    sys.exit(0)
