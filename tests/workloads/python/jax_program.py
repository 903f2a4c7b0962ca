"""A small JAX program: a jit-compiled matmul + softmax + reductions, a
`lax.scan` (an XLA while loop: a conditional node of a CUDA graph when XLA's
command buffers are on), a `lax.fori_loop`, results fetched with
`jax.device_get` and checked against float64 numpy.

Deterministic by construction: seeded threefry keys, float32 matmuls at
HIGHEST precision (no TF32), and XLA's GEMM autotuning off
(--xla_gpu_autotune_level=0, appended here to XLA_FLAGS), which otherwise
times candidate kernels and may pick another one from run to run.

The pass runs it with JAX's defaults (75 % of the GPU's memory preallocated,
command buffers on), with XLA_FLAGS=--xla_gpu_enable_command_buffer= (off),
and with XLA_PYTHON_CLIENT_PREALLOCATE=false (allocations on demand).
"""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_autotune_level=0").strip()

from trust_common import Digest, finish, no_gpu  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

NAME = "jax_program"
if jax.default_backend() != "gpu":
    no_gpu(NAME, f"jax's default backend is {jax.default_backend()} (devices {jax.devices()})")
print(f"{NAME}: jax {jax.__version__} on {jax.devices()[0].device_kind}; "
      f"XLA_FLAGS={os.environ['XLA_FLAGS']!r}; "
      f"XLA_PYTHON_CLIENT_PREALLOCATE={os.environ.get('XLA_PYTHON_CLIENT_PREALLOCATE', '(default)')}", flush=True)
HI = lax.Precision.HIGHEST
d = Digest()
problems = []


def close(label: str, got, ref, tol: float) -> None:
    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - ref)))
    if not err <= tol:
        problems.append(f"{label}: max abs err {err:.3e} > {tol}")


@jax.jit
def attention_like(a, b):
    logits = jnp.dot(a, b, precision=HI) * 0.0625
    p = jax.nn.softmax(logits, axis=-1)
    return p, jnp.sum(p * logits, axis=-1), jnp.max(logits), jnp.sum(p, axis=0)


@jax.jit
def scan_layers(x0, ws):
    def body(carry, w):
        carry = jnp.tanh(jnp.dot(carry, w, precision=HI) + 0.1)
        return carry, jnp.sum(carry * carry)

    return lax.scan(body, x0, ws)


@jax.jit
def fori(v):
    return lax.fori_loop(0, 7, lambda i, u: u * 0.5 + jnp.sin(u + i.astype(u.dtype)), v)


key = jax.random.PRNGKey(0)
ka, kb, kx, kw, kv = jax.random.split(key, 5)
a = jax.random.normal(ka, (384, 257), dtype=jnp.float32)
b = jax.random.normal(kb, (257, 200), dtype=jnp.float32)
x0 = jax.random.normal(kx, (33, 64), dtype=jnp.float32)
ws = jax.random.normal(kw, (6, 64, 64), dtype=jnp.float32) * 0.125
v = jax.random.uniform(kv, (4099,), dtype=jnp.float32, minval=-2.0, maxval=2.0)

p, ent, mx, colsum = attention_like(a, b)
final, sq = scan_layers(x0, ws)
fv = fori(v)
# Again with other inputs: the compiled executables run a second time.
p2, _, _, _ = attention_like(a * 0.5, b)

got = jax.device_get((a, b, x0, ws, v, p, ent, mx, colsum, final, sq, fv, p2))
(a_h, b_h, x0_h, ws_h, v_h, p_h, ent_h, mx_h, col_h, final_h, sq_h, fv_h, p2_h) = got
for arr in got:
    d.add_numpy(np.asarray(arr))

# References in float64.
A, B = a_h.astype(np.float64), b_h.astype(np.float64)


def softmax_ref(a64):
    lg = (a64 @ B) * 0.0625
    z = np.exp(lg - lg.max(axis=-1, keepdims=True))
    return lg, z / z.sum(axis=-1, keepdims=True)


lg, pr = softmax_ref(A)
close("softmax", p_h, pr, 1e-5)
close("entropy-like sum", ent_h, (pr * lg).sum(axis=-1), 1e-4)
close("max", mx_h, lg.max(), 1e-4)
close("column sums", col_h, pr.sum(axis=0), 1e-4)
close("softmax again", p2_h, softmax_ref(A * 0.5)[1], 1e-5)
c = x0_h.astype(np.float64)
sqr = []
for w in ws_h.astype(np.float64):
    c = np.tanh(c @ w + 0.1)
    sqr.append((c * c).sum())
close("scan carry", final_h, c, 1e-4)
close("scan outputs", sq_h, np.array(sqr), 1e-3 + 1e-5 * max(abs(t) for t in sqr))
u = v_h.astype(np.float64)
for i in range(7):
    u = u * 0.5 + np.sin(u + i)
close("fori_loop", fv_h, u, 1e-5)
finish(NAME, problems, f"{d.results} results checked", d)
