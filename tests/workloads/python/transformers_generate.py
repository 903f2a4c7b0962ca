"""transformers' greedy generation on CUDA with a tiny GPT-2 made from its
config alone (no download, no tokenizer): GPT2LMHeadModel(GPT2Config(
n_layer=2, n_embd=128, n_head=4, vocab_size=1000)) initialised under
torch.manual_seed(0), eval, model.generate(input_ids, max_new_tokens=20,
do_sample=False); prints the tokens.

Deterministic by construction: seeded initialisation on the CPU, fixed
prompts, greedy decoding. The check: every generated token is the argmax (to
within 1e-3 of the top logit) of a full forward pass over the sequence.
Known: two captures agree, replay differs in two one-byte host reads at
cudaStreamSynchronize (the pass case trust_generate reproduces it).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from trust_common import Digest, finish, no_gpu  # noqa: E402

import torch  # noqa: E402

NAME = "transformers_generate"
if not torch.cuda.is_available():
    no_gpu(NAME, "torch.cuda is not available")

import transformers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000)
model = GPT2LMHeadModel(config).to("cuda").eval()
prompts = torch.randint(0, 1000, (2, 8), generator=torch.Generator().manual_seed(0))
input_ids = prompts.to("cuda")
d = Digest()
problems = []
with torch.no_grad():
    out = model.generate(input_ids, max_new_tokens=20, do_sample=False)
    tokens = d.add_torch(out)
    print(f"{NAME}: transformers {transformers.__version__}, torch {torch.__version__}", flush=True)
    for row in tokens.tolist():
        print(f"{NAME}: tokens {' '.join(map(str, row))}", flush=True)
    if tuple(tokens.shape) != (2, 8 + 20):
        problems.append(f"shape {tuple(tokens.shape)}, expected (2, 28)")
    elif not torch.equal(tokens[:, :8], prompts):
        problems.append("the prompts are not the sequences' start")
    else:
        logits = model(out).logits.float()  # full forward, no cache
        top = logits[:, 7:-1].max(dim=-1).values
        chosen = logits[:, 7:-1].gather(-1, out[:, 8:].unsqueeze(-1)).squeeze(-1)
        gap = d.add_torch(top - chosen)
        if not bool((gap <= 1e-3).all()):
            problems.append(f"a generated token is not the argmax (largest gap {gap.max().item():.3e})")
finish(NAME, problems, "greedy generation of 2 x 20 tokens", d)
