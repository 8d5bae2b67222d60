"""vLLM's expert-batched MoE GEMM (`batched_triton_kernel` as `BatchedTritonExperts`
launches it for w1, unquantized): inputs, fp32 reference, torch baseline.

a is [experts, max_tokens, hidden]: each local expert's received tokens in the first
expert_num_tokens[e] rows of its slot (the batched format that DeepEP's low-latency
dispatch leaves; the rows past the count are stale and never read).  w1 is [experts, n,
hidden] (n = 2 x the expert's intermediate size, gate and up stacked), expert_num_tokens
[experts] int32.  The output is [experts, max_tokens, n] in the input dtype, row m of
expert e = a[e, m] @ w1[e]^T for m < expert_num_tokens[e]; the rows past the count are
not written by the kernel, so they are compared as zeros (vLLM's buffer and ours are
zero-filled once before the launches)."""

from __future__ import annotations

import torch


def make_inputs(
    experts: int, max_tokens: int, hidden: int, inter: int, avg_tokens: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Unit activations, weights at 1/sqrt(hidden), and per-expert counts of a balanced
    router: experts * avg_tokens (token, expert) pairs dropped uniformly on the local
    experts (multinomial), each count capped at max_tokens.  The rows past each count hold
    noise, as a reused dispatch buffer does."""
    if avg_tokens > max_tokens:
        raise ValueError("avg_tokens must be at most max_tokens")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(experts, max_tokens, hidden, generator=gen)
    w1 = torch.randn(experts, 2 * inter, hidden, generator=gen) / hidden**0.5
    picks = torch.randint(0, experts, (experts * avg_tokens,), generator=gen)
    counts = torch.bincount(picks, minlength=experts).clamp(max=max_tokens).to(torch.int32)
    return (
        a.to(dtype=dtype, device=device),
        w1.to(dtype=dtype, device=device),
        counts.to(device),
    )


def _batched_gemm(
    a: torch.Tensor, w1: torch.Tensor, counts: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    experts, max_tokens, _ = a.shape
    out = torch.zeros((experts, max_tokens, w1.shape[1]), device=a.device, dtype=acc)
    for e, m in enumerate(counts.tolist()):
        if m:
            out[e, :m] = a[e, :m].to(acc) @ w1[e].to(acc).T
    return out


def reference(a: torch.Tensor, w1: torch.Tensor, expert_num_tokens: torch.Tensor) -> torch.Tensor:
    return _batched_gemm(a, w1, expert_num_tokens, torch.float32)


def torch_batched_gemm(
    a: torch.Tensor, w1: torch.Tensor, expert_num_tokens: torch.Tensor
) -> torch.Tensor:
    """The same products by torch's matmul, one per expert over its valid rows (a host loop
    over the experts, as vLLM's NaiveBatchedExperts does)."""
    return _batched_gemm(a, w1, expert_num_tokens, a.dtype)
