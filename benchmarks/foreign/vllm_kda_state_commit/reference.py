"""vLLM's Kimi K3 KDA RecoverSSM state commit (the fold of `KDARecoverSSMCommitContext.commit`
after a speculative step's sampling, every KDA layer of the rank in one launch): inputs,
fp64 reference, torch baseline.

A RecoverSSM verify runs each KDA layer's delta rule over a request's draft window without
writing the state: it records, per (request, head, window position), the fp32 correction
u_t = beta_t (v_t - S_{t-1} exp(g_t) k_t) [V] and the token's key and raw gate [2K] in the
activations' dtype.  After sampling, the commit folds the accepted prefix of the window
into the state, from the state the verify started from:

    S_t = S_{t-1} diag(exp(gate_t)) + u_t normalize(k_t)^T,   t < commit_len,
    gate_t = lower_bound * sigmoid(exp(A_log) * (raw_g_t + dt_bias))

(the bounded KDA gate of a `gate_lower_bound`; without one, -exp(A_log) softplus(...)).
Inputs, as the commit's kernel finds them:

- state: the layers' fp32 state pools stacked, [layers, slots, heads, V, K] (vLLM keeps one
  [slots, heads, V, K] pool per layer; the launcher hands the kernel each layer's address,
  as vLLM's `KDARecoverSSMCommitContext` does); slot 0 is vLLM's null block.
- correction [layers, reqs, heads, window, V] fp32 and key_gate [layers, reqs, heads,
  window, 2K] in the spec's dtype (keys, then raw gates): the verify's records, row r the
  step's r-th speculative request; positions at and past a request's commit length hold
  values a thousand (corrections) and a hundred (keys and gates) times larger, which a
  kernel reading them would carry into the state.
- A_log [layers, heads] and dt_bias [layers, heads, K], fp32.
- state_indices, commit_lens, final_state_indices, boundary_state_indices,
  boundary_recovery_lens, int32 [reqs]: the request's source slot and what
  `_prepare_commit_plan_kernel` leaves for it (made here, as `commit_plan` says).
- lower_bound (float) and align (0 or 1: vLLM's "align" mamba cache mode, the default with
  prefix caching, where a window that closes a mamba block also stores the state at the
  block's end).

Output: the state pools, the final state of every live (layer, request, head) stored in
its final slot and, in align mode, the state after the first boundary_recovery_len accepted
tokens in the boundary slot (stored first, as the kernel does)."""

from __future__ import annotations

import torch

GATE_LOWER_BOUND = -5.0  # vLLM's most negative allowed gate_lower_bound (_KDA_GATE_LOGBOUND_MIN)
NULL_SLOT = 0  # vLLM's NULL_BLOCK_ID
STALE = 1000.0  # the scale of the records past a request's commit length


def accepted_lengths(reqs: int, window: int) -> list[int]:
    """Tokens each request commits (its accepted drafts and the bonus token, 1 to window):
    1 + 3r mod window, which cycles through every length when 3 does not divide the window
    (mean (window + 1) / 2: 3 tokens of a 5-token window)."""
    return [1 + (3 * r) % window for r in range(reqs)]


def commit_plan(reqs: int, window: int, align: int) -> list[tuple[int, int, bool, bool]]:
    """(commit length, boundary recovery length, crosses a block end, final state in a new
    slot) per request.  Without align: no boundary (recovery length 0).  In align mode every
    eighth request (r = 7 mod 8) closes its mamba block after 1 + (r // 8) mod length of its
    accepted tokens: the boundary state goes to its source slot and, when tokens remain past
    the boundary, the final state to the next block's new slot; a request that crosses no
    boundary has a recovery length past its window (the kernel folds a boundary state it
    does not store)."""
    plan = []
    for r, n in enumerate(accepted_lengths(reqs, window)):
        if not align:
            plan.append((n, 0, False, False))
        elif r % 8 == 7:
            brl = 1 + (r // 8) % n
            plan.append((n, brl, True, brl < n))
        else:
            plan.append((n, window + 1, False, False))
    return plan


def make_inputs(
    reqs: int, layers: int, heads: int, head_dim: int, window: int, align: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[object, ...]:  # fmt: skip
    """Unit-normal states (the null slot zero), corrections at 0.5, unit-normal keys and
    raw gates, A_log = log(uniform(1, 16)) (Mamba's initialisation) and dt_bias at 0.5; the
    requests' source slots a random permutation of 1..reqs, the new slots of align mode's
    crossing requests after them.  Drawn on the device."""
    if window < 1 or align not in (0, 1):
        raise ValueError("window >= 1; align 0 or 1")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=dev, device=device, dtype=torch.float32)

    plan = commit_plan(reqs, window, align)
    extra = sum(new for *_, new in plan)
    slots = 1 + reqs + extra
    k = v = head_dim
    state = randn(layers, slots, heads, v, k)
    state[:, NULL_SLOT] = 0
    correction = randn(layers, reqs, heads, window, v) * 0.5
    key_gate = randn(layers, reqs, heads, window, 2 * k)
    lens = torch.tensor([n for n, *_ in plan], device=device)
    stale = torch.arange(window, device=device)[None, :] >= lens[:, None]  # [reqs, window]
    correction *= torch.where(stale, STALE, 1.0)[None, :, None, :, None]
    key_gate *= torch.where(stale, STALE / 10, 1.0)[None, :, None, :, None]
    a_log = torch.log(1 + 15 * torch.rand(layers, heads, generator=dev, device=device))
    dt_bias = randn(layers, heads, k) * 0.5

    source = (1 + torch.randperm(reqs, generator=gen)).tolist()
    final, boundary, brls, nxt = [], [], [], 1 + reqs
    for (_, brl, crosses, new), src in zip(plan, source, strict=True):
        boundary.append(src if crosses else NULL_SLOT)
        final.append(nxt if new else src)
        nxt += new
        brls.append(brl)

    def ints(values: list[int]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int32, device=device)

    return (
        state,
        correction,
        key_gate.to(dtype),
        a_log,
        dt_bias,
        ints(source),
        ints([n for n, *_ in plan]),
        ints(final),
        ints(boundary),
        ints(brls),
        GATE_LOWER_BOUND,
        align,
    )


def _gate(
    raw_g: torch.Tensor, dt_bias: torch.Tensor, a: torch.Tensor, lower_bound: float | None
) -> torch.Tensor:
    """`_kda_gate`: the bounded gate, or -A softplus(...) (linear past 20) without a bound."""
    x = raw_g + dt_bias
    if lower_bound is not None:
        return lower_bound * torch.sigmoid(a * x)
    return -a * torch.nn.functional.softplus(x, threshold=20.0)


def _fold(
    state: torch.Tensor, correction: torch.Tensor, key_gate: torch.Tensor,
    a_log: torch.Tensor, dt_bias: torch.Tensor, state_indices: torch.Tensor,
    commit_lens: torch.Tensor, boundary_recovery_lens: torch.Tensor,
    lower_bound: float | None, acc: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The final and boundary states [layers, reqs, heads, V, K] in `acc`, the window walked
    token by token (the kernel composes the same updates from the last token back)."""
    k_dim = state.shape[-1]
    src = state_indices.long()
    cur = state[:, src].to(acc)
    boundary = cur.clone()
    keys = key_gate[..., :k_dim].to(acc)
    raw_g = key_gate[..., k_dim:].to(acc)
    normed = keys * torch.rsqrt((keys * keys).sum(-1, keepdim=True) + 1e-6)
    a = torch.exp(a_log.to(acc))[:, None, :, None, None]
    decay = torch.exp(_gate(raw_g, dt_bias.to(acc)[:, None, :, None, :], a, lower_bound))
    n = commit_lens.long()
    upto = torch.minimum(boundary_recovery_lens.long(), n)  # the tokens before a boundary
    for t in range(key_gate.shape[3]):
        update = correction[:, :, :, t, :, None].to(acc) * normed[:, :, :, t, None, :]
        nxt = cur * decay[:, :, :, t, None, :] + update
        cur = torch.where((t < n)[None, :, None, None, None], nxt, cur)
        boundary = torch.where((t < upto)[None, :, None, None, None], cur, boundary)
    return cur, boundary


def _commit(
    inputs: tuple[object, ...], acc: torch.dtype, out: torch.Tensor, layers_per_fold: int
) -> torch.Tensor:
    (state, correction, key_gate, a_log, dt_bias, state_indices, commit_lens, final_idx,
     boundary_idx, brl, lower_bound, align) = inputs  # fmt: skip
    live = (state_indices > NULL_SLOT) & (commit_lens > 0) & (final_idx > NULL_SLOT)
    stores = live & (boundary_idx > NULL_SLOT) & bool(align)
    for lo in range(0, state.shape[0], layers_per_fold):
        sl = slice(lo, lo + layers_per_fold)
        args = [x[sl] for x in (state, correction, key_gate, a_log, dt_bias)]
        final, boundary = _fold(*args, state_indices, commit_lens, brl, lower_bound, acc)
        out[sl, boundary_idx[stores].long()] = boundary[:, stores].to(out.dtype)
        out[sl, final_idx[live].long()] = final[:, live].to(out.dtype)
    return out


def reference(*inputs: object) -> torch.Tensor:
    """In fp64 from the stored values (a layer at a time: the fp64 copies stay small), each
    state rounded once to the pool's dtype."""
    state = inputs[0]
    return _commit(inputs, torch.float64, state.clone(), 1)  # type: ignore[union-attr]


def torch_kda_commit(*inputs: object) -> torch.Tensor:
    """The same fold by torch ops in fp32 over every layer at once: the requests' states
    gathered from the pools, the window walked token by token under a mask (a few
    pool-sized temporaries), the boundary and final states scattered back in place."""
    state = inputs[0]
    return _commit(inputs, torch.float32, state, state.shape[0])  # type: ignore[union-attr]
