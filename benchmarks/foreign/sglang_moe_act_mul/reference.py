"""The MoE layer's expert-filtered activation and multiply (SGLang's `act_and_mul_triton`, as
its Triton MoE runner calls it between the two grouped GEMMs under expert parallelism):
inputs, fp32 reference, torch baseline.

gateup is [tokens * topk, 2 * inter] in the spec's dtype: the gate/up GEMM's output, one row
per (token, routing slot) pair in token-major order, the gate half first.  topk_ids is
[tokens, topk] int32, the ids of this rank's local experts, -1 where the slot was routed to
another rank's expert (SGLang's expert-parallel dispatch maps them so; the GEMM skipped
those rows and left them unwritten).  The output is [tokens * topk, inter] in the same
dtype: silu(gate) * up for the live rows, the rows of -1 slots left as they were (zero
here: the launcher allocates a zeroed buffer)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, topk: int, experts: int, ep: int, inter: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit-scale gate/up rows (the last GEMM's output; its gate half spans silu's bend) and
    a routing where exactly rows // ep of the tokens * topk slots, drawn at random, go to
    one of this rank's experts // ep local experts (ids uniform over them), the others -1:
    the share of rows an expert-parallel rank keeps under a balanced router."""
    if experts % ep:
        raise ValueError(f"{experts} experts do not split over {ep} ranks")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = tokens * topk
    gateup = torch.randn(rows, 2 * inter, generator=gen) * 2.0
    ids = torch.full((rows,), -1, dtype=torch.int32)
    live = torch.randperm(rows, generator=gen)[: rows // ep]
    ids[live] = torch.randint(0, experts // ep, (live.numel(),), generator=gen, dtype=torch.int32)
    return gateup.to(dtype=dtype, device=device), ids.view(tokens, topk).to(device)


def reference(gateup: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
    inter = gateup.shape[1] // 2
    x = gateup.float()
    out = torch.nn.functional.silu(x[:, :inter]) * x[:, inter:]
    return out * (topk_ids.reshape(-1, 1) != -1)


def torch_act_mul(gateup: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
    """SGLang's eager fallback (silu of the gate half times the up half, in the dtype) over
    every row, then the -1 rows zeroed by a mask multiply: what torch does without a
    filtering kernel."""
    inter = gateup.shape[1] // 2
    out = torch.nn.functional.silu(gateup[:, :inter]) * gateup[:, inter:]
    return out * (topk_ids.reshape(-1, 1) != -1).to(out.dtype)
