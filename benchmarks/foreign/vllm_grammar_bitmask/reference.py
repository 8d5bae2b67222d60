"""vLLM's structured-output grammar bitmask (the `_apply_grammar_bitmask_kernel` launch of
`StructuredOutputsWorker.apply_grammar_bitmask`, the v1 GPU worker's path for guided
decoding): inputs, reference, torch baseline.

Every request of the step follows a grammar (JSON schema, regex) and owns `positions` mask
rows: one per logits row a decode step can give it (the sampled token and its speculative
drafts).  logits is [rows, vocab] in the spec's dtype (the LM head's output: vLLM masks it
before the sampler), its rows packed request after request as `cu_num_logits` [reqs + 1]
int32 says; every fourth request has one row fewer than `positions` (its last draft trimmed,
as adaptive verification does), so its last mask row is inactive.  logits_indices
[reqs * positions] int32 maps each mask row to (request * positions + position); bitmask
[reqs * positions, ceil(vocab / 32)] int32 holds one bit per token, set where the grammar
allows it.  The output is the logits with every disallowed token of an active row set to
-inf, in place."""

from __future__ import annotations

import torch


def row_counts(reqs: int, positions: int) -> list[int]:
    """Logits rows per request: every fourth request one fewer (at least one)."""
    return [max(1, positions - 1) if r % 4 == 3 else positions for r in range(reqs)]


def make_inputs(
    reqs: int, positions: int, vocab: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Normal logits; each mask row allows a share of the vocabulary drawn from 0.1%, 2%,
    30% and 90% (a JSON key, a number, free string content, almost anything)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    counts = torch.tensor(row_counts(reqs, positions), dtype=torch.int32)
    cu = torch.zeros(reqs + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(counts, 0)
    rows = int(cu[-1])
    logits = torch.randn(rows, vocab, generator=gen).to(dtype)
    masks = reqs * positions
    shares = torch.tensor([0.001, 0.02, 0.3, 0.9])
    share = shares[torch.randint(0, 4, (masks,), generator=gen)]
    allowed = torch.rand(masks, vocab, generator=gen) < share[:, None]
    words = (vocab + 31) // 32
    bits = torch.zeros(masks, words * 32, dtype=torch.int64)
    bits[:, :vocab] = allowed.long()
    weights = torch.ones(32, dtype=torch.int64) << torch.arange(32)
    packed = (bits.view(masks, words, 32) * weights).sum(-1)
    # the low 32 bits as int32 (bit 31 set reads negative, as numpy's view in vLLM)
    packed = torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)
    logits_indices = torch.arange(masks, dtype=torch.int32)
    return (
        logits.to(device), logits_indices.to(device), cu.to(device), packed.to(device),
        positions,
    )  # fmt: skip


def _unpacked(bitmask: torch.Tensor, vocab: int) -> torch.Tensor:
    """[masks, vocab] bool, True where the token is allowed."""
    words = bitmask.long() & 0xFFFFFFFF
    bits = (words[:, :, None] >> torch.arange(32, device=bitmask.device)) & 1
    return bits.reshape(bitmask.shape[0], -1)[:, :vocab].bool()


def reference(
    logits: torch.Tensor, logits_indices: torch.Tensor, cu_num_logits: torch.Tensor,
    bitmask: torch.Tensor, positions: int,
) -> torch.Tensor:
    """Mask row by mask row on a copy: the bits unpacked by shifts of the unsigned words,
    the disallowed tokens of each active row set to -inf."""
    out = logits.clone().cpu()
    allowed = _unpacked(bitmask.cpu(), logits.shape[1])
    cu = cu_num_logits.cpu().tolist()
    for i, mapping in enumerate(logits_indices.cpu().tolist()):
        req, pos = divmod(mapping, positions)
        if pos < cu[req + 1] - cu[req]:
            out[cu[req] + pos, ~allowed[i]] = float("-inf")
    return out.to(logits.device)


def torch_bitmask(
    logits: torch.Tensor, logits_indices: torch.Tensor, cu_num_logits: torch.Tensor,
    bitmask: torch.Tensor, positions: int,
) -> torch.Tensor:
    """The same by torch ops over the batch, in place: the bits unpacked, the active mask
    rows' logits rows gathered, masked and scattered back."""
    allowed = _unpacked(bitmask, logits.shape[1])
    mapping = logits_indices.long()
    req, pos = mapping // positions, mapping % positions
    cu = cu_num_logits.long()
    active = pos < (cu[req + 1] - cu[req])
    rows = (cu[req] + pos)[active]
    logits[rows] = logits[rows].masked_fill(~allowed[active], float("-inf"))
    return logits
