"""vLLM's sampling penalties (`apply_penalties` as the v1 GPU worker's sampler calls it, in
place on its fp32 logits): inputs, reference, torch baseline.

logits is [tokens, vocab] fp32 whatever the spec's dtype (vLLM's sampler copies the model's
logits into fp32 first); a step of `reqs` requests, each with qlen - 1 draft tokens, has
reqs * qlen rows, request r's rows consecutive.  idx_mapping [tokens] int32 names each
row's request slot, token_ids [tokens] int32 are the step's input ids (a request's first row
holds its last accepted token, the next ones its drafts), local_pos [tokens] int32 each
row's place in its request.  Per slot: repetition, frequency and presence penalties (fp32),
the prompt's tokens as a bit mask (int32 words, bit t % 32 of word t / 32) and the output's
token counts (int32 per vocabulary entry).  Row t of request r at place p counts r's output
tokens plus the drafts before it; a token seen in the prompt or the output has its logit
divided by the repetition penalty when positive and multiplied when not; then the frequency
penalty times the count and the presence penalty (if counted) are subtracted.  The output
is the logits, written in place."""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int, qlen: int, vocab: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-normal logits times 4, fp32 whatever the dtype; the requests at random slots of a
    pool twice their number; penalties of every request drawn around common API settings
    (repetition 1.0-1.3, frequency and presence 0-0.5, so every row is penalized); a
    2,000-token prompt and 500 output tokens per slot drawn from the vocabulary; random
    draft tokens."""
    del dtype  # the sampler's logits are fp32
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = 2 * reqs
    tokens = reqs * qlen
    slot = torch.randperm(slots, generator=gen)[:reqs]
    idx_mapping = slot.repeat_interleave(qlen)
    local_pos = torch.arange(qlen).repeat(reqs)
    token_ids = torch.randint(0, vocab, (tokens,), generator=gen)
    repetition = 1.0 + 0.3 * torch.rand(slots, generator=gen)
    frequency = 0.5 * torch.rand(slots, generator=gen)
    presence = 0.5 * torch.rand(slots, generator=gen)
    words = -(-vocab // 32)
    prompt = torch.randint(0, vocab, (slots, 2000), generator=gen)
    bits = torch.zeros(slots, words * 32, dtype=torch.bool)
    bits.scatter_(1, prompt, True)
    weights = 1 << torch.arange(32, dtype=torch.int64)
    packed = (bits.view(slots, words, 32).long() * weights).sum(-1)
    prompt_mask = torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)
    output = torch.randint(0, vocab, (slots, 500), generator=gen)
    counts = torch.zeros(slots, vocab, dtype=torch.int32)
    counts.scatter_add_(1, output, torch.ones_like(output, dtype=torch.int32))
    logits = torch.randn(tokens, vocab, generator=gen) * 4.0
    return (
        logits.to(device),
        idx_mapping.to(dtype=torch.int32, device=device),
        token_ids.to(dtype=torch.int32, device=device),
        local_pos.to(dtype=torch.int32, device=device),
        repetition.to(device),
        frequency.to(device),
        presence.to(device),
        prompt_mask.to(device),
        counts.to(device),
    )


def _prompt_bits(prompt_mask: torch.Tensor, vocab: int) -> torch.Tensor:
    """[slots, words] int32 -> [slots, vocab] bool."""
    shifts = torch.arange(32, device=prompt_mask.device, dtype=torch.int64)
    bits = (prompt_mask.long()[:, :, None] >> shifts) & 1
    return bits.reshape(prompt_mask.shape[0], -1)[:, :vocab].bool()


def reference(
    logits: torch.Tensor, idx_mapping: torch.Tensor, token_ids: torch.Tensor,
    local_pos: torch.Tensor, repetition: torch.Tensor, frequency: torch.Tensor,
    presence: torch.Tensor, prompt_mask: torch.Tensor, output_counts: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Row by row in fp32, on a copy."""
    out = logits.clone()
    vocab = logits.shape[1]
    prompt = _prompt_bits(prompt_mask, vocab)
    for t in range(logits.shape[0]):
        r, p = int(idx_mapping[t]), int(local_pos[t])
        rep, freq, pres = float(repetition[r]), float(frequency[r]), float(presence[r])
        if rep == 1.0 and freq == 0.0 and pres == 0.0:
            continue
        counts = output_counts[r].clone()
        for j in range(1, p + 1):
            counts[int(token_ids[t - p + j])] += 1
        seen = counts > 0
        row = out[t]
        if rep != 1.0:
            scale = torch.where(prompt[r] | seen, rep, 1.0)
            row = torch.where(row > 0, row / scale, row * scale)
        out[t] = row - freq * counts.float() - pres * seen.float()
    return out


def torch_penalties(
    logits: torch.Tensor, idx_mapping: torch.Tensor, token_ids: torch.Tensor,
    local_pos: torch.Tensor, repetition: torch.Tensor, frequency: torch.Tensor,
    presence: torch.Tensor, prompt_mask: torch.Tensor, output_counts: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops over the whole batch, in place: the rows' counts gathered, the
    earlier drafts scattered in (one pass per draft place), the prompt bits unpacked."""
    slot = idx_mapping.long()
    pos = local_pos.long()
    counts = output_counts[slot]
    rows = torch.arange(logits.shape[0], device=logits.device)
    for j in range(1, int(pos.max()) + 1 if pos.numel() else 1):
        has = pos >= j
        src = token_ids.long()[(rows - pos + j).clamp(max=logits.shape[0] - 1)]
        counts[rows[has], src[has]] += 1
    seen = counts > 0
    scale = torch.where(_prompt_bits(prompt_mask, logits.shape[1])[slot] | seen,
                        repetition[slot][:, None], 1.0)  # fmt: skip
    logits.copy_(torch.where(logits > 0, logits / scale, logits * scale))
    logits -= frequency[slot][:, None] * counts
    logits -= presence[slot][:, None] * seen
    return logits
