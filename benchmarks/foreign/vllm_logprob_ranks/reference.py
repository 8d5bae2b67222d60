"""vLLM's sampled-token ranks (the `_ranks_kernel` launch of `compute_topk_scores`, the v1
GPU worker's logprobs path): inputs, reference, torch baseline.

logits is [rows, vocab] in the spec's dtype (vLLM's default raw logprobs read the model's
logits); token_ids [rows] int64 are the tokens sampled from them.  The output is [rows]
int64: the number of the row's logits at or above the sampled token's logit (1 for the
row's largest; ties count)."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal logits times 3 (16-bit ones tie often); each row's token drawn from its
    softmax, so that most ranks are small and a few are large."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = (torch.randn(rows, vocab, generator=gen) * 3.0).to(dtype)
    probs = torch.softmax(logits.float(), dim=-1)
    token_ids = torch.multinomial(probs, 1, generator=gen).squeeze(1)
    return logits.to(device), token_ids.to(device)


def reference(logits: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
    """Row by row in fp64: the logits at or above the sampled one, counted."""
    out = torch.empty(logits.shape[0], dtype=torch.int64)
    rows = logits.double().cpu()
    ids = token_ids.cpu()
    for r in range(rows.shape[0]):
        out[r] = int((rows[r] >= rows[r, int(ids[r])]).sum())
    return out.to(logits.device)


def torch_ranks(logits: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
    """The same by torch ops over the batch."""
    pivot = logits.gather(1, token_ids.long()[:, None])
    return (logits >= pivot).sum(dim=-1)
