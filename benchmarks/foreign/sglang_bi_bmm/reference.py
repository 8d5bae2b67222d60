"""SGLang's batch-invariant persistent bmm (deterministic inference's torch.bmm, as DeepSeek's
MLA attention calls it on its absorbed weights): inputs, reference, torch baseline.

The decode step's `q_nope_out = torch.bmm(q_nope.transpose(0, 1), self.w_kc)`: q_nope is
[tokens, heads, nope] (the no-position half of each query head, nope = 128), passed
transposed to [heads, tokens, nope] without a copy (so its rows are heads x nope elements
apart); w_kc is [heads, nope, rank], each head's slice of kv_b_proj that maps the query into
the 512-wide compressed KV latent (kv_lora_rank).  The output is [heads, tokens, rank] in the
input dtype."""

from __future__ import annotations

import torch


def make_inputs(
    heads: int,
    tokens: int,
    nope: int,
    rank: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q_nope ~ N(0, 1) as [tokens, heads, nope], returned transposed; w_kc ~ N(0, 1/nope)
    (kv_b_proj's scale), contiguous [heads, nope, rank]."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q_nope = torch.randn(tokens, heads, nope, generator=gen)
    w_kc = torch.randn(heads, nope, rank, generator=gen) / nope**0.5
    q = q_nope.to(device=device, dtype=dtype)
    return q.transpose(0, 1), w_kc.to(device=device, dtype=dtype)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per head, the fp64 product of the inputs, as fp32."""
    return torch.matmul(a.double(), b.double()).float()


def torch_bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.bmm as SGLang calls it without deterministic inference (cuBLAS)."""
    return torch.bmm(a, b)
