"""SGLang's lightning attention, the inter-block launches (after `_fwd_diag_kernel` in
SGLang's lightning-attention forward, as its hybrid linear-attention backend calls it for a
Bailing linear model's prompt): inputs, fp64 reference, torch baseline.

Everything is fp32 whatever the spec's dtype: SGLang's Bailing linear layer casts its qkv to
fp32 before the backend (and the state launch's tl.dot of the fp32-decayed keys with the
values takes fp32 values only).  q and k are [batch, heads, seqlen, d], v [batch, heads,
seqlen, e], s
[heads] the fp32 decay rate of each head, kv_history [batch, heads, d, e] fp32 the
request's state before the prompt (from the cache), o [batch, heads, seqlen, e] the
intra-block part the diagonal launch wrote.  With 256-token blocks, block
i of L_i tokens has the state S_i = sum over its tokens (position p in the block) of
exp(-s (L_i - 1 - p)) k^T v; the state before block i is P_0 = kv_history,
P_{i+1} = exp(-s L_i) P_i + S_i.  Query p of block i adds exp(-s p) q P_i to its row of o
(as the kernel writes it: the decay counted from the block's first token).  The outputs:
o and the history after the prompt, P_last (both updated in place by the kernels)."""

from __future__ import annotations

import torch

BLOCK = 256  # SGLang's lightning-attention block


def slopes(heads: int, total_heads: int) -> torch.Tensor:
    """ALiBi-style decay rates over the model's heads (as MiniMax and Bailing build them),
    for the first `heads` of them."""
    return 2.0 ** (-8.0 * (torch.arange(heads, dtype=torch.float64) + 1) / total_heads)


def make_inputs(
    batch: int, heads: int, seqlen: int, d: int, e: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-normal q (scaled by d^-1/2), k, v and intra-block output, a history at the
    scale of a few blocks' states (normal times sqrt(256)), drawn on the device, all fp32
    (`dtype` unused: the layer runs this attention in fp32); decay rates from the ALiBi
    slopes over 64 heads."""
    del dtype
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def draw(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device) * scale

    q = draw(batch, heads, seqlen, d, scale=d**-0.5)
    k = draw(batch, heads, seqlen, d)
    v = draw(batch, heads, seqlen, e)
    s = slopes(heads, 64).float().to(device)
    history = draw(batch, heads, d, e, scale=16.0).contiguous()
    o = draw(batch, heads, seqlen, e)
    return q, k, v, s, history, o


def _inter(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, s: torch.Tensor,
    kv_history: torch.Tensor, o: torch.Tensor, acc: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    _, h, n, _ = q.shape
    rate = s.to(acc).view(1, h, 1, 1)
    state = kv_history.to(acc)
    out = o.to(acc)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        length = stop - start
        p = torch.arange(length, device=q.device, dtype=acc).view(1, 1, -1, 1)
        kb = k[:, :, start:stop].to(acc) * torch.exp(-rate * (length - 1 - p))
        block_state = kb.transpose(-1, -2) @ v[:, :, start:stop].to(acc)
        qb = q[:, :, start:stop].to(acc)
        out[:, :, start:stop] += (qb @ state) * torch.exp(-rate * p)
        state = torch.exp(-rate * length) * state + block_state
    return out, state


def reference(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Block by block in fp64, both outputs rounded to fp32."""
    out, state = _inter(*inputs, torch.float64)
    return out.to(inputs[5].dtype), state.float()


def torch_lightning_inter(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same by torch in fp32, block by block (a loop over the blocks, batched over
    batch and heads), written into o and the history in place as SGLang's kernels do."""
    o, history = inputs[5], inputs[4]
    out, state = _inter(*inputs, torch.float32)
    return o.copy_(out), history.copy_(state)
