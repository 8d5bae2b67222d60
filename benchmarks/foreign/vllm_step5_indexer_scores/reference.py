"""Step5's paged fp8 indexer scores on Hopper (the `_paged_scores_sm90` launch of
`paged_mqa_logits_sm90`, the sparse indexer's region scoring of a prefill chunk, before the
top-k of regions): inputs, reference, torch baseline.

q is [pairs, 2, heads, 256] fp8 e4m3 whatever the spec's dtype: the indexer's per-rank query
heads (16 over an index TP of 4) of consecutive token pairs of one request (vLLM's
`prefill_pair_inputs`: two rows scored as next_n = 2 on their real heads).  kv is the packed
summary pages [pages, 32, 1, 260] uint8: per 32-region page, 32 x 256 fp8 region keys, then
32 fp32 scales.  weights [pairs x 2, heads] fp32 (the head weights with the query scale
folded in).  block_tables [pairs, pages per request] int32 (a pair's request's pages, as
`_pack_summaries` lays them out), seq_lens [pairs] int32 (the closed regions the pair's
second token sees, `pair_lengths`).  regions: the chunk's static region count
(max_seq_len).  The output is [pairs x 2, regions] fp32: for each row and visible region,
sum over heads of weight x relu(q . key) x the region's scale; -inf past the pair's length.
"""

from __future__ import annotations

import torch

PAGE = 32  # regions per packed summary page
DIM = 256  # Step5's proxy dim


def pair_lengths(reqs: int, tokens: int, regions: int) -> list[int]:
    """The chunk is the last `tokens` tokens of each request's context of regions x 8: the
    token at position p has closed (p + 1) // 8 regions; a pair takes its second token's."""
    start = regions * 8 - tokens
    one = [(start + t + 1 + 1) // 8 for t in range(0, tokens, 2)]
    return one * reqs


def make_inputs(
    reqs: int,
    tokens: int,
    regions: int,
    heads: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """fp8 queries and region keys from normals (scaled so that e4m3 keeps them), positive
    fp32 scales, normal head weights; each request's pages its own, pairs of a request
    sharing its table row."""
    del dtype  # fp8 operands and fp32 scores whatever the dtype
    if tokens % 2:
        raise ValueError("tokens are scored in pairs: an even count")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    pages = -(-regions // 128) * 4  # _pack_summaries' pages per request
    pairs = reqs * tokens // 2
    q = (torch.randn(pairs, 2, heads, DIM, generator=gen) * 0.25).to(torch.float8_e4m3fn)
    keys = (torch.randn(reqs * pages, PAGE, DIM, generator=gen) * 0.25).to(torch.float8_e4m3fn)
    scales = torch.rand(reqs * pages, PAGE, generator=gen) + 0.5
    kv = torch.empty(reqs * pages, PAGE * 260, dtype=torch.uint8)
    kv[:, : PAGE * DIM] = keys.view(torch.uint8).reshape(reqs * pages, -1)
    kv[:, PAGE * DIM :] = scales.view(torch.uint8).reshape(reqs * pages, -1)
    weights = torch.randn(pairs * 2, heads, generator=gen)
    req_of_pair = torch.arange(reqs).repeat_interleave(tokens // 2)
    tables = (req_of_pair[:, None] * pages + torch.arange(pages)[None, :]).to(torch.int32)
    lengths = torch.tensor(pair_lengths(reqs, tokens, regions), dtype=torch.int32)
    return (
        q.to(device), kv.view(-1, PAGE, 1, 260).to(device), weights.to(device),
        tables.to(device), lengths.to(device), regions,
    )  # fmt: skip


def _unpack(kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    flat = kv.reshape(kv.shape[0], PAGE * 260)
    keys = flat[:, : PAGE * DIM].contiguous().view(torch.float8_e4m3fn).float()
    scales = flat[:, PAGE * DIM :].contiguous().view(torch.float32)
    return keys.view(-1, PAGE, DIM), scales.view(-1, PAGE)


def reference(
    q: torch.Tensor,
    kv: torch.Tensor,
    weights: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    regions: int,
) -> torch.Tensor:
    """16 pairs at a time on the inputs' device in fp64: each pair's regions gathered
    through its table, the head dot products, relu, the weighted head sum, times the
    region's scale; -inf past the pair's length."""
    keys, scales = _unpack(kv)
    qd = q.float().double()
    w = weights.double()
    tables = block_tables.long()
    pairs = q.shape[0]
    out = torch.full((pairs, 2, regions), float("-inf"), dtype=torch.float64, device=q.device)
    region = torch.arange(regions, device=q.device)
    for p0 in range(0, pairs, 16):
        p1 = min(pairs, p0 + 16)
        page = tables[p0:p1, region // PAGE]  # [c, regions]
        k = keys[page, region % PAGE].double()  # [c, regions, 256]
        s = scales[page, region % PAGE].double()
        dots = torch.relu(torch.einsum("pthd,prd->pthr", qd[p0:p1], k))
        score = (dots * w[2 * p0 : 2 * p1].view(p1 - p0, 2, -1, 1)).sum(2) * s[:, None, :]
        visible = region[None, None, :] < seq_lens[p0:p1].long()[:, None, None]
        out[p0:p1] = torch.where(visible, score, float("-inf"))
    return out.reshape(pairs * 2, regions).float()


def torch_indexer_scores(
    q: torch.Tensor,
    kv: torch.Tensor,
    weights: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    regions: int,
) -> torch.Tensor:
    """The same by torch ops over the batch: the regions gathered through the tables into
    [pairs, regions, 256] fp32 keys (as DeepGEMM's unpaged reference does), one batched
    matmul, relu, the head weights, the scales, -inf past each length."""
    keys, scales = _unpack(kv)
    pairs, _, heads, _ = q.shape
    region = torch.arange(regions, device=q.device)
    page = block_tables.long()[:, region // PAGE]  # [pairs, regions]
    k = keys[page, region % PAGE]  # [pairs, regions, 256]
    s = scales[page, region % PAGE]
    dots = torch.relu(torch.matmul(q.float().reshape(pairs, 2 * heads, -1), k.transpose(1, 2)))
    out = (dots.view(pairs, 2, heads, regions) * weights.view(pairs, 2, heads, 1)).sum(2)
    out = out * s[:, None, :]
    visible = region[None, None, :] < seq_lens.long()[:, None, None]
    return out.masked_fill(~visible, float("-inf")).reshape(pairs * 2, regions)
