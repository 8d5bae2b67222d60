"""A decode step's causal depthwise conv1d with its rolling state (SGLang's Triton
`causal_conv1d_update` as the hybrid linear-attention backend calls it for Qwen3-Next's
gated-delta-rule layers: one new token per sequence, the conv state pool indexed by the
sequences' slots, no bias, SiLU): inputs, fp32 reference, torch baseline.

x is [batch, dim] (the token's projected q, k and v channels); state is the layer's pool
[slots, width - 1, dim] in the dtype (SGLang stores it so and passes the [slots, dim,
width - 1] transpose), updated in place; weight is [dim, width]; slot_ids [batch] int32
are distinct pool slots.  Per sequence b in slot s, with the window
W = [state[s, 0], ..., state[s, width - 2], x[b]] ([width, dim]):

    out[b] = silu(sum_j W[j] * weight[:, j]),   state[s] <- W[1:].

Outputs: out [batch, dim] in the dtype and the pool after the step (slots not in slot_ids
unchanged)."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, dim: int, width: int, slots: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(x, state, weight, slot_ids): x and the pool at unit scale (the pool drawn on the
    device), the weights at 1 / sqrt(width) (a depthwise conv's init), the sequences'
    slots a random choice of distinct pool slots."""
    if slots < batch:
        raise ValueError("the pool needs a slot per sequence")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    x = torch.randn(batch, dim, generator=gen)
    weight = torch.randn(dim, width, generator=gen) * width**-0.5
    slot_ids = torch.randperm(slots, generator=gen)[:batch].to(torch.int32)
    state = torch.randn(slots, width - 1, dim, generator=dev, device=device, dtype=dtype)
    return (
        x.to(dtype=dtype, device=device),
        state,
        weight.to(dtype=dtype, device=device),
        slot_ids.to(device),
    )


def _step(
    x: torch.Tensor, state: torch.Tensor, weight: torch.Tensor, slot_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    f = torch.float32
    rows = slot_ids.long()
    window = torch.cat((state[rows].to(f), x.to(f).unsqueeze(1)), dim=1)  # [batch, width, dim]
    acc = (window * weight.to(f).T.unsqueeze(0)).sum(1)
    out = torch.nn.functional.silu(acc)
    new = state.clone()
    new[rows] = window[:, 1:].to(state.dtype)
    return out.to(x.dtype), new


def reference(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _step(*inputs)


def torch_conv1d_update(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same step by torch's element-wise kernels (fp32), the pool's rows written back in
    place."""
    out, new = _step(*inputs)
    state, rows = inputs[1], inputs[3].long()
    state[rows] = new[rows]
    return out, state
