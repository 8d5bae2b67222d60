"""vLLM's Kimi K3 block attention residuals (`attn_res`, as `KimiK3DecoderLayer` calls it
ahead of each attention block on the Triton path, every GPU but SM100): inputs, reference,
torch baseline.

prefix is the running sum of the current block's sublayer outputs [tokens, hidden], delta
the last sublayer's output [tokens, hidden], both in the model's dtype; blocks is the
layer's [tokens, slots, hidden] table of completed block representations (vLLM's
`residual`), of which the first `sources` are valid.  norm_weight and qk_weight are the
layer's attention-residual RMSNorm weight and its [hidden] pseudo-query projection,
output_norm_weight the next sublayer's input RMSNorm weight, all [hidden] in the dtype.
The step: prefix += delta (rounded to the dtype and stored back); at a block-write layer
(`layer_kind` 2) the new prefix is also stored as block `sources`; then the softmax over the
`sources` blocks and the new prefix of their RMS-normed dot with norm_weight * qk_weight
weights their sum, which is RMS-normed with output_norm_weight into the output.  Outputs:
the output [tokens, hidden], the updated prefix and the block table (written in place)."""

from __future__ import annotations

import torch

EPS = 1e-5  # Kimi's rms_norm_eps (KimiLinearConfig's default), both norms


def make_inputs(
    tokens: int, hidden: int, slots: int, sources: int, layer_kind: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-normal prefix and blocks (sums of sublayer outputs), a smaller delta (about
    0.5), norm weights about 1 and a pseudo-query of about 4 / sqrt(hidden) scale (logits
    of order one, so the softmax is neither flat nor one-hot).  Blocks past `sources` hold
    values ten times larger: a kernel reading them would be far off (the written slot is
    overwritten).  Drawn on the device."""
    if layer_kind not in (1, 2) or not 0 <= sources <= slots - (layer_kind == 2):
        raise ValueError("sources <= slots; a block-write layer (2) writes block sources < slots")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32)

    prefix = randn(tokens, hidden)
    delta = randn(tokens, hidden) * 0.5
    blocks = randn(tokens, slots, hidden)
    blocks[:, sources:] *= 10
    norm_w = 1 + 0.1 * randn(hidden)
    qk_w = randn(hidden) * (4.0 / hidden**0.5)
    out_w = 1 + 0.1 * randn(hidden)
    tensors = (prefix, delta, blocks, norm_w, qk_w, out_w)
    return (*(x.to(dtype) for x in tensors), sources, layer_kind)


def _step(
    prefix: torch.Tensor, delta: torch.Tensor, blocks: torch.Tensor, norm_w: torch.Tensor,
    qk_w: torch.Tensor, out_w: torch.Tensor, sources: int, layer_kind: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    f = torch.float32
    new_prefix = (prefix.to(f) + delta.to(f)).to(prefix.dtype)
    new_blocks = blocks.clone()
    if layer_kind == 2:
        new_blocks[:, sources] = new_prefix
    if sources == 0:
        mixed = new_prefix.to(f)
    else:
        values = torch.cat((new_blocks[:, :sources].to(f), new_prefix.to(f)[:, None]), dim=1)
        rstd = torch.rsqrt(values.pow(2).mean(-1) + EPS)  # [tokens, sources + 1]
        logits = (values * (norm_w.to(f) * qk_w.to(f))).sum(-1) * rstd
        mixed = (torch.softmax(logits, dim=1)[..., None] * values).sum(1)
    out = mixed * torch.rsqrt(mixed.pow(2).mean(-1, keepdim=True) + EPS) * out_w.to(f)
    return out.to(prefix.dtype), new_prefix, new_blocks


def reference(*inputs: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """In fp32 from the dtype's values, the prefix rounded once to the dtype (as the kernel
    stores and reuses it), the output rounded once."""
    return _step(*inputs)  # type: ignore[arg-type]


def torch_attn_res(*inputs: object) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same step by torch ops (fp32 intermediates, a [tokens, sources + 1, hidden]
    stacked copy of the sources, several launches), the prefix and the written block stored
    back in place as the kernel does."""
    out, new_prefix, new_blocks = _step(*inputs)  # type: ignore[arg-type]
    prefix, blocks = inputs[0], inputs[2]
    prefix.copy_(new_prefix)  # type: ignore[union-attr]
    blocks.copy_(new_blocks)  # type: ignore[union-attr]
    return out, prefix, blocks  # type: ignore[return-value]
