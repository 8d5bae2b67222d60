"""Transformer Engine's fused grouped bias gradient (`compute_grouped_dbias_dscales`, as the
backward of TE's grouped linear op with `scale_bias` calls it for the FC2 of a MoE's routed
experts): inputs, reference, torch baseline.

dy [rows, hidden] holds the routed tokens' FC2 output gradients sorted by expert, group g
(one expert) being rows offsets[g] to offsets[g + 1] (int64, offsets[0] = 0, offsets[-1] =
rows); scales [rows] are the tokens' fp32 routing probabilities and bias [groups, hidden]
the experts' FC2 biases, in the spec's dtype.  Outputs, both fp32: dbias[g, j] = sum over
group g's rows of dy[i, j] scales[i] ([groups, hidden]) and dscales[i] = sum over j of
dy[i, j] bias[g(i), j] ([rows])."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, groups: int, hidden: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Output gradients at 1e-2, routing probabilities uniform in 0.05 to 0.65 (a top-4
    router's), biases at 0.02, and an uneven routing: group sizes drawn from a multinomial
    over weights 0.5 to 1.5, so experts receive different counts and a group may be
    empty."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dy = torch.randn(rows, hidden, generator=gen) * 1e-2
    scales = 0.05 + 0.6 * torch.rand(rows, generator=gen)
    bias = torch.randn(groups, hidden, generator=gen) * 0.02
    weights = 0.5 + torch.rand(groups, generator=gen, dtype=torch.float64)
    picks = torch.multinomial(weights, rows, replacement=True, generator=gen)
    sizes = torch.bincount(picks, minlength=groups)
    offsets = torch.zeros(groups + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(sizes, 0)
    return (
        dy.to(dtype=dtype, device=device),
        scales.to(device),
        bias.to(dtype=dtype, device=device),
        offsets.to(device),
    )


def reference(
    dy: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    groups = bias.shape[0]
    sizes = torch.diff(offsets)
    ids = torch.repeat_interleave(torch.arange(groups, device=dy.device), sizes)
    dyf = dy.float()
    dbias = torch.zeros(groups, dy.shape[1], dtype=torch.float32, device=dy.device)
    dbias.index_add_(0, ids, dyf * scales.float()[:, None])
    dscales = (dyf * bias.float()[ids]).sum(dim=1)
    return dbias, dscales


def torch_grouped_dbias(
    dy: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same gradients in torch's kernels: the scaled rows summed per group by an
    index_add, each row's expert bias gathered and the row products summed, all in fp32."""
    return reference(dy, scales, bias, offsets)
