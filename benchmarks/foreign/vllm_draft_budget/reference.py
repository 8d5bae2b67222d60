"""vLLM's adaptive-verification draft budget (the `_assign_draft_token_budget_kernel` launch
of `assign_draft_token_budget`, called by the v1 GPU worker's adaptive verification when the
step's draft budget is below the drafts scheduled): inputs, reference, torch baseline.

confidence_probs [2 * reqs, steps] fp32 is the manager's persistent table of per-request,
per-step draft confidences (the acceptance estimator's predictions, in (0, 1)); idx_mapping
[reqs] int32 maps the batch to its rows (a random half of the table); capacities [reqs]
int32 enters holding each request's scheduled drafts (every fourth request about half of
`steps`, as near its length limit) and leaves holding the admitted count; draft_budget is
the drafts the step admits (below the scheduled total, as vLLM calls it).  Every eighth
request has the confidences of the one before it, so survival probabilities tie and the
kernel's tie hand-out matters.  The output is capacities, written in place; integers
whatever the spec's dtype."""

from __future__ import annotations

import torch


def scheduled(reqs: int, steps: int) -> list[int]:
    """Scheduled drafts per request: every fourth request max(1, steps // 2)."""
    return [max(1, steps // 2) if r % 4 == 3 else steps for r in range(reqs)]


def make_inputs(
    reqs: int,
    steps: int,
    budget: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Each request's confidences around its own acceptance rate in [0.3, 0.95]."""
    del dtype
    caps = scheduled(reqs, steps)
    if not 0 < budget < sum(caps):
        raise ValueError(f"budget {budget} must be in (0, {sum(caps)}): vLLM calls the "
                         "kernel only when the budget binds")  # fmt: skip
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = 2 * reqs
    rate = 0.3 + 0.65 * torch.rand(rows, 1, generator=gen)
    probs = (rate + 0.1 * torch.randn(rows, steps, generator=gen)).clamp(0.02, 0.999)
    idx = torch.randperm(rows, generator=gen)[:reqs].to(torch.int32)
    for r in range(7, reqs, 8):
        probs[idx[r]] = probs[idx[r - 1]]
    capacities = torch.tensor(caps, dtype=torch.int32)
    return (
        probs.float().to(device), idx.to(device), capacities.to(device), budget,
    )  # fmt: skip


def reference(
    confidence_probs: torch.Tensor,
    idx_mapping: torch.Tensor,
    capacities: torch.Tensor,
    draft_budget: int,
) -> torch.Tensor:
    """On the CPU: fp32 survival products step by step, every eligible (request, step) slot
    sorted by survival (descending), then request and step (a stable sort), the first
    draft_budget taken and counted per request."""
    probs = confidence_probs.cpu()[idx_mapping.cpu().long()]
    reqs, steps = probs.shape
    caps = capacities.cpu().long()
    surv = torch.empty(reqs, steps, dtype=torch.float32)
    run = torch.ones(reqs, dtype=torch.float32)
    for s in range(steps):
        run = run * probs[:, s]
        surv[:, s] = run
    eligible = torch.arange(steps)[None, :] < caps[:, None]
    slots = [(-float(surv[r, s]), r, s) for r in range(reqs) for s in range(steps)
             if eligible[r, s]]  # fmt: skip
    slots.sort()
    out = torch.zeros(reqs, dtype=torch.int32)
    for _, r, _ in slots[:draft_budget]:
        out[r] += 1
    return out.to(capacities.device)


def torch_budget(
    confidence_probs: torch.Tensor,
    idx_mapping: torch.Tensor,
    capacities: torch.Tensor,
    draft_budget: int,
) -> torch.Tensor:
    """The same by torch ops on the device, in place: the gathered confidences multiplied
    step by step (fp32, the kernel's order), ineligible slots at -1, a stable descending sort of the flattened slots, the first
    draft_budget scattered back as per-request counts."""
    probs = confidence_probs[idx_mapping.long()]
    reqs, steps = probs.shape
    surv = probs.clone()
    for s in range(1, steps):
        surv[:, s] = surv[:, s - 1] * probs[:, s]
    eligible = torch.arange(steps, device=probs.device)[None, :] < capacities[:, None]
    surv = torch.where(eligible, surv, -1.0).flatten()
    order = torch.sort(surv, descending=True, stable=True).indices[:draft_budget]
    counts = torch.bincount(order // steps, minlength=reqs)
    capacities.copy_(counts)
    return capacities
