"""SGLang's DeepEP-normal MoE scatter (the `_fwd_kernel_ep_scatter_1` and
`_fwd_kernel_ep_scatter_2` launches of `ep_scatter`, the DeepGEMM MoE runner's input
layout after DeepEP's normal dispatch): inputs, reference, torch baseline.

The rank has received `tokens` tokens from DeepEP's normal dispatch with fp8 communication,
as on Hopper: recv_x [tokens, hidden] float8_e4m3fn, recv_x_scale [tokens, hidden / 128] fp32
(one scale per 128-column group, row-major: DeepGEMM's UE8M0 scales are SM100's), recv_topk
[tokens, topk] int64 holding the local expert of each slot routed to one of the rank's
`local_experts` experts and -1 for a slot routed elsewhere, and num_recv_tokens_per_expert
[local_experts] int32, each expert's received slots rounded up to 128 (DeepEP's
expert_alignment under DeepGEMM).  The outputs, in the layout DeepGEMM's contiguous grouped
GEMM reads (each expert's rows together, experts in order, each segment padded to its
rounded count):

- output_tensor [rows, hidden] e4m3 and output_tensor_scale [rows, hidden / 128] fp32, rows
  the sum of the rounded counts: each local slot's copy of its token's row and scales at
  the row it was given; the padding rows are left as they were (zero here);
- m_indices [rows] int32: each row's expert, padding included;
- output_index [tokens, topk] int64: the row each local slot was given (`sglang_ep_gather`'s
  input_index), -1 where the slot is remote (left as it was);
- expert_start_loc [local_experts] int32 after the launches: each expert's first row plus its
  received slots (the end of its real rows), the counter the slots' atomic adds leave.

Within an expert the kernel hands out rows in whatever order the slots' atomic adds land
(programs walk the tokens grid-stride, all at once).  The reference gives them in flat
(token, slot) order; `make_check_inputs` routes at most one slot to each expert, so that
every order is the same one (see there).  The timed inputs route like
`sglang_ep_gather`'s, so that this kernel's outputs are that one's inputs."""

from __future__ import annotations

import torch

ALIGN = 128  # DeepEP's expert_alignment under DeepGEMM: each expert's rows rounded up to it
GROUP = 128  # the fp8 quantization group: one fp32 scale per 128 columns
LOCAL_PATTERN = (1, 2, 1, 3, 1, 2, 1, 1)  # local slots per received token, 1.5 on average
FP8 = torch.float8_e4m3fn


def _generator(seed: int | None) -> torch.Generator:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return gen


def _routing(tokens: int, topk: int, local_experts: int) -> torch.Tensor:
    """`sglang_ep_gather`'s: each received token routes LOCAL_PATTERN[t % 8] (at most topk)
    of its slots to distinct local experts, spread over the slots and the experts; the rest
    are -1."""
    ids = torch.full((tokens, topk), -1, dtype=torch.int64)
    for t in range(tokens):
        n = min(LOCAL_PATTERN[t % len(LOCAL_PATTERN)], topk, local_experts)
        for j in range(n):
            slot = (t * 3 + j * 5) % topk if topk % 5 else (t + j) % topk
            ids[t, slot] = (t * 13 + j) % local_experts
    return ids


def _rows_and_scales(
    tokens: int, hidden: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """e4m3 activations (normal values, no NaN) and positive fp32 group scales."""
    if hidden % GROUP:
        raise ValueError(f"hidden must be a multiple of {GROUP} (one scale per group)")
    x = (torch.randn(tokens, hidden, generator=gen) * 64).to(FP8)
    scale = torch.rand(tokens, hidden // GROUP, generator=gen) * 1e-2 + 1e-4
    return x, scale


def _counts(ids: torch.Tensor, local_experts: int) -> torch.Tensor:
    """Each expert's received slots rounded up to ALIGN, int32 (DeepEP's
    num_recv_tokens_per_expert, which SGLang copies to the GPU)."""
    counts = torch.bincount(ids[ids >= 0], minlength=local_experts)
    return ((counts + ALIGN - 1) // ALIGN * ALIGN).to(torch.int32)


def make_inputs(
    tokens: int, hidden: int, topk: int, local_experts: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The received rows, scales and routing (`sglang_ep_gather`'s pattern: 1 to 3 local
    slots a token, 1.5 on average; half the experts get twice the others' slots) and the
    rounded counts.  fp8 rows and fp32 scales whatever the spec's dtype."""
    del dtype  # e4m3 rows and fp32 scales, as DeepEP's fp8 dispatch delivers them
    gen = _generator(seed)
    x, scale = _rows_and_scales(tokens, hidden, gen)
    ids = _routing(tokens, topk, local_experts)
    counts = _counts(ids, local_experts)
    return x.to(device), scale.to(device), ids.to(device), counts.to(device)


def make_check_inputs(
    tokens: int, hidden: int, topk: int, local_experts: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Inputs whose outputs do not depend on the order of the atomics: at most one slot
    routed to each expert.  Three quarters of the experts (at least one) each get one slot,
    in random order; the slots go 1 to 3 at a time (LOCAL_PATTERN, at random slot positions)
    to tokens spread evenly over the batch, first and last included, so that programs walk
    more than one token where the grid is smaller than the batch; the other tokens are
    all -1 (their rows are read and not copied), the other experts get no rows (a rounded
    count of 0).  Each routed expert's segment is one slot and 127 padding rows."""
    del dtype
    gen = _generator(seed)
    x, scale = _rows_and_scales(tokens, hidden, gen)
    used = max(1, local_experts * 3 // 4)
    experts = torch.randperm(local_experts, generator=gen)[:used].tolist()
    groups: list[int] = []  # slots per routed token
    while sum(groups) < used:
        n = min(LOCAL_PATTERN[len(groups) % len(LOCAL_PATTERN)], topk, used - sum(groups))
        groups.append(n)
    if len(groups) > tokens:
        raise ValueError(f"{len(groups)} routed tokens needed, the batch has {tokens}")
    spread = len(groups) - 1
    rows = [round(i * (tokens - 1) / spread) if spread else 0 for i in range(len(groups))]
    ids = torch.full((tokens, topk), -1, dtype=torch.int64)
    for t, n in zip(rows, groups, strict=True):
        slots = torch.randperm(topk, generator=gen)[:n]
        ids[t, slots] = torch.tensor([experts.pop() for _ in range(n)], dtype=torch.int64)
    counts = _counts(ids, local_experts)
    return x.to(device), scale.to(device), ids.to(device), counts.to(device)


def reference(
    recv_x: torch.Tensor, recv_x_scale: torch.Tensor, recv_topk: torch.Tensor,
    num_recv_tokens_per_expert: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """On the CPU, expert by expert: the segments' starts from the rounded counts, each
    row's expert; the local slots given rows from their expert's start in flat (token, slot)
    order, their token's row and scales copied there; padding rows zero, remote slots -1,
    each expert's start plus its slots."""
    dev = recv_x.device
    x = recv_x.cpu().view(torch.uint8)
    s = recv_x_scale.cpu().float()
    ids = recv_topk.cpu().long()
    counts = num_recv_tokens_per_expert.cpu().long()
    experts = counts.numel()
    starts = torch.cumsum(counts, 0) - counts
    rows = int(counts.sum())
    out = torch.zeros(rows, x.shape[1], dtype=torch.uint8)
    out_scale = torch.zeros(rows, s.shape[1], dtype=torch.float32)
    m_indices = torch.repeat_interleave(torch.arange(experts), counts).to(torch.int32)
    index = torch.full_like(ids, -1)
    nxt = starts.clone()
    for t, row in enumerate(ids.tolist()):
        for k, e in enumerate(row):
            if e < 0:
                continue
            r = int(nxt[e])
            if r >= starts[e] + counts[e]:
                raise ValueError(f"expert {e} has more slots than its rounded count {counts[e]}")
            nxt[e] += 1
            out[r] = x[t]
            out_scale[r] = s[t]
            index[t, k] = r
    return (
        out.view(FP8).to(dev),
        out_scale.to(dev),
        m_indices.to(dev),
        index.to(dev),
        nxt.to(torch.int32).to(dev),
    )


def torch_ep_scatter(
    recv_x: torch.Tensor, recv_x_scale: torch.Tensor, recv_topk: torch.Tensor,
    num_recv_tokens_per_expert: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops on the device: the segment starts by cumsum and the row count
    copied to the host (SGLang has it there), m_indices by repeat_interleave; the flat slots
    stably sorted by expert (remote ones last), each local slot's row from its sorted place,
    one index_copy of the rows (as bytes) and of the scales into zero-filled outputs, one
    scatter of the rows into a -1-filled output_index."""
    counts = num_recv_tokens_per_expert.long()
    experts = counts.numel()
    dev = recv_x.device
    ends = torch.cumsum(counts, 0)
    starts = ends - counts
    rows = int(ends[-1])
    m_indices = torch.repeat_interleave(
        torch.arange(experts, device=dev, dtype=torch.int32), counts, output_size=rows
    )
    topk = recv_topk.shape[1]
    flat = recv_topk.reshape(-1)
    ids = torch.where(flat >= 0, flat, experts)
    order = torch.argsort(ids, stable=True)
    by_expert = ids[order]
    per_expert = torch.bincount(ids, minlength=experts + 1)
    first = torch.cumsum(per_expert, 0) - per_expert
    rank = torch.arange(flat.numel(), device=dev) - first[by_expert]
    local = by_expert < experts
    slot = order[local]
    dest = starts[by_expert[local]] + rank[local]
    src = slot // topk
    out = torch.zeros(rows, recv_x.shape[1], dtype=torch.uint8, device=dev)
    out.index_copy_(0, dest, recv_x.view(torch.uint8)[src])
    out_scale = torch.zeros(rows, recv_x_scale.shape[1], dtype=torch.float32, device=dev)
    out_scale.index_copy_(0, dest, recv_x_scale[src])
    index = torch.full((flat.numel(),), -1, dtype=recv_topk.dtype, device=dev)
    index[slot] = dest.to(recv_topk.dtype)
    end = (starts + per_expert[:experts]).to(torch.int32)
    return out.view(recv_x.dtype), out_scale, m_indices, index.view_as(recv_topk), end
