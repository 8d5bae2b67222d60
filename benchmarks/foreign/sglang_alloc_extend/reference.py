"""SGLang's paged KV allocation for an extend batch (the `alloc_extend_kernel` launch of
`PagedTokenToKVPoolAllocator.alloc_extend`, used whenever the server runs with pages of more
than one token): inputs, reference, torch baseline.

Every request of the batch has a cached prefix (pre_lens, int64, not always a whole number of
pages) and extends it to seq_lens; last_loc is the KV slot of its prefix's last token (-1
without a prefix), so its partly filled last page continues at last_loc + 1.  free_pages
(int64) is the allocator's list of free page ids, consumed in order, request after
request.  The output is [extend tokens] int64: the KV slot of every new token, request
after request: first the rest of the prefix's last page, then whole new pages, then a new
partial page.  The page size is SGLang's `--page-size`; the data is integers whatever the
spec's dtype."""

from __future__ import annotations

import torch


def extend_lens(reqs: int, extend: int) -> list[int]:
    """New tokens per request around `extend`, summing to reqs * extend: pairs of
    requests differ by +k and -k (k up to extend / 2); an odd last request gets `extend`."""
    out = []
    for r in range(reqs):
        k = (r // 2 * 7) % (extend // 2 + 1)
        out.append(extend + (k if r % 2 == 0 else -k) if r + 1 < reqs or r % 2 else extend)
    return out


def make_inputs(
    reqs: int, extend: int, page_size: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Prefixes of 0 to 4000 tokens (a quarter of them none), each on its own shuffled
    pages; the free pages a shuffled run of the pool's other page ids."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    pre = torch.randint(0, 4001, (reqs,), generator=gen)
    pre[torch.rand(reqs, generator=gen) < 0.25] = 0
    seq = pre + torch.tensor(extend_lens(reqs, extend))
    used_pages = int(((pre + page_size - 1) // page_size).sum())
    need = int(((seq + page_size - 1) // page_size - (pre + page_size - 1) // page_size).sum())
    pool = torch.randperm(used_pages + need + 64, generator=gen) + 1  # page 0 is SGLang's pad
    prefix_pages, free_pages = pool[:used_pages], pool[used_pages:]
    last_loc = torch.full((reqs,), -1, dtype=torch.int64)
    first = 0
    for r in range(reqs):
        n_pages = (int(pre[r]) + page_size - 1) // page_size
        if n_pages:
            last_page = int(prefix_pages[first + n_pages - 1])
            last_loc[r] = last_page * page_size + (int(pre[r]) - 1) % page_size
        first += n_pages
    return (
        pre.to(device), seq.to(device), last_loc.to(device), free_pages.to(device),
        page_size,
    )  # fmt: skip


def reference(
    pre_lens: torch.Tensor, seq_lens: torch.Tensor, last_loc: torch.Tensor,
    free_pages: torch.Tensor, page_size: int,
) -> torch.Tensor:
    """Token by token in Python: a slot after the prefix's last one while the page lasts,
    then a fresh page from the free list at each page boundary."""
    out: list[int] = []
    free = free_pages.cpu().tolist()
    taken = 0
    for pre, seq, last in zip(
        pre_lens.tolist(), seq_lens.tolist(), last_loc.tolist(), strict=True
    ):
        slot = last
        for pos in range(pre, seq):
            if pos % page_size == 0:
                slot = free[taken] * page_size
                taken += 1
            else:
                slot += 1
            out.append(slot)
    return torch.tensor(out, dtype=torch.int64, device=pre_lens.device)


def torch_alloc_extend(
    pre_lens: torch.Tensor, seq_lens: torch.Tensor, last_loc: torch.Tensor,
    free_pages: torch.Tensor, page_size: int,
) -> torch.Tensor:
    """The same by torch ops over the tokens: each new token's request and position by
    repeat_interleave, the page it starts (if it starts one) counted by a cumsum over the
    page boundaries, its slot from that page or from the prefix's last slot."""
    ext = seq_lens - pre_lens
    req = torch.repeat_interleave(torch.arange(ext.shape[0], device=ext.device), ext)
    starts = torch.cumsum(ext, 0) - ext
    pos = pre_lens[req] + torch.arange(req.shape[0], device=ext.device) - starts[req]
    boundary = pos % page_size == 0
    page_idx = torch.cumsum(boundary.long(), 0) - 1
    # tokens before their request's first new page continue the prefix's last page
    first_new = pre_lens + (-pre_lens) % page_size
    in_old = pos < first_new[req]
    page = free_pages[page_idx.clamp_min(0)]
    new_slot = page * page_size + pos % page_size
    old_slot = last_loc[req] + 1 + (pos - pre_lens[req])
    return torch.where(in_old, old_slot, new_slot)
