"""vLLM's sparse-attention candidate block scores (the `_block_scores_kernel` launch of
`select_candidate_blocks`, DeepSeek V4.1's two-level selection on the decode path, before
the top-k of candidate blocks): inputs, reference, torch baseline.

logits is [reqs x next_n, width] fp32 whatever the dtype (the lightning indexer's decode
logits after vLLM's `as_fp32_logits`; width is the static, CUDA-graph-sized count of
compressed positions, most rows far shorter), the next_n rows of a request (its token and
its MTP drafts) sharing one end in ends [reqs] int32 (the request's visible compressed
length, `seq_lens`; a fixed function of the dims, `visible_lengths`).  Columns at or past a
row's end hold -inf, as the indexer leaves them.  Outputs: scores [rows, ceil(width /
block)] fp32, each block's maximum over the row's visible columns (-inf for blocks past the
end, +inf for the block holding the newest visible column, which is always kept), and
valid_blocks [rows] int32, the row's count of blocks with a visible column."""

from __future__ import annotations

import torch


def visible_lengths(reqs: int, width: int) -> list[int]:
    """Request r sees (r * 7919 % 97 + 1) / 97 of the width, rounded down; every ninth
    request nothing yet (an empty compressed history)."""
    return [0 if r % 9 == 8 else width * ((r * 7919) % 97 + 1) // 97 for r in range(reqs)]


def make_inputs(
    reqs: int,
    next_n: int,
    width: int,
    block: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Normal fp32 logits (the dtype is not used: vLLM scores fp32 logits), -inf past each
    row's end."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ends = torch.tensor(visible_lengths(reqs, width), dtype=torch.int32)
    logits = torch.randn(reqs * next_n, width, generator=gen)
    row_end = ends.repeat_interleave(next_n)
    logits[torch.arange(width)[None, :] >= row_end[:, None]] = float("-inf")
    return logits.to(device), ends.to(device), next_n, block


def reference(
    logits: torch.Tensor, ends: torch.Tensor, next_n: int, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row by row, block by block on the CPU in fp32: the maximum of the visible columns of
    each block (padded with -inf), the newest visible block pinned to +inf."""
    rows, width = logits.shape
    nblocks = -(-width // block)
    x = logits.detach().float().cpu()
    end_list = ends.cpu().tolist()
    scores = torch.full((rows, nblocks), float("-inf"))
    valid = torch.zeros(rows, dtype=torch.int32)
    for row in range(rows):
        end = min(end_list[row // next_n], width)
        nvalid = -(-max(end, 0) // block)
        valid[row] = nvalid
        if nvalid:
            # the visible columns padded to whole blocks with -inf, a maximum per block
            seen = torch.full((nvalid * block,), float("-inf"))
            seen[:end] = x[row, :end]
            scores[row, :nvalid] = seen.view(nvalid, block).max(dim=1).values
        if end > 0:
            scores[row, (end - 1) // block] = float("inf")
    return scores.to(logits.device), valid.to(logits.device)


def torch_block_scores(
    logits: torch.Tensor, ends: torch.Tensor, next_n: int, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same by torch ops over the batch: the row padded to whole blocks with -inf, the
    columns past the end masked, amax over each block, the newest block scattered to +inf."""
    rows, width = logits.shape
    nblocks = -(-width // block)
    row_end = ends.long().repeat_interleave(next_n).clamp(max=width)
    x = torch.nn.functional.pad(logits.float(), (0, nblocks * block - width), value=float("-inf"))
    cols = torch.arange(nblocks * block, device=logits.device)
    x = x.masked_fill(cols[None, :] >= row_end[:, None], float("-inf"))
    scores = x.view(rows, nblocks, block).amax(-1)
    has = row_end > 0
    newest = ((row_end - 1).clamp(min=0) // block)[:, None]
    pinned = torch.where(has[:, None], float("inf"), scores.gather(1, newest))
    scores.scatter_(1, newest, pinned)
    valid = ((row_end.clamp(min=0) + block - 1) // block).to(torch.int32)
    return scores, valid
