"""FlagGems' multinomial sampling with replacement (`multinomial(prob, n, True)`, its
`multinomial_with_replacement` kernel): inputs, reference, torch baseline.

cdf is [dists, categories] fp32 whatever the spec's dtype: each distribution's cumulative
probabilities normalised by their total (what FlagGems' `normed_cumsum` hands the kernel;
its last value 1.0), made here with the inputs from softmax(4 z) rows of normal z.  The
Philox seed and offset are what FlagGems reads from the device generator's state
(`philox_backend_seed_offset`), made here with the inputs.  FlagGems' stream: sample n of
distribution y takes the first word of one Philox4x32-10 call on counter (offset's low word
+ y * samples + n, wrapping; offset's high word), as a uniform u; u + 1e-4 in fp32, capped at
0.9999, is searched in the row's CDF, and the sample is the leftmost category whose
cumulative probability reaches it (the last category if none does).  The output is
[dists, samples] int64.
"""

from __future__ import annotations

import torch

from foreign.flaggems_dropout.reference import M32, philox4x32, uniform

SHARPNESS = 4.0  # softmax(4 z) of normal z: a peaked distribution, as a teacher's or a replay's


def make_inputs(
    dists: int,
    categories: int,
    samples: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, int, int]:
    """The normalised CDF (fp32), the sample count, a 62-bit Philox seed and an offset (a
    multiple of 4) of up to 2^36, so that the counter's high word is used."""
    del dtype  # the CDF is fp32 whatever the spec's dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    probs = torch.softmax(torch.randn(dists, categories, generator=gen) * SHARPNESS, dim=-1)
    cum = torch.cumsum(probs, dim=-1)
    cdf = cum / cum[:, -1:]
    philox_seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    philox_offset = 4 * int(torch.randint(0, 2**34, (1,), generator=gen))
    return cdf.contiguous().to(device), samples, philox_seed, philox_offset


def draws(
    dists: int, samples: int, philox_seed: int, philox_offset: int, device: torch.device
) -> torch.Tensor:
    """FlagGems' search values [dists, samples]: the first uniform of each sample's Philox
    call, plus 1e-4 and capped at 0.9999, in fp32."""
    counters = torch.arange(dists * samples, dtype=torch.int64, device=device)
    c0 = ((philox_offset & M32) + counters) & M32
    words = philox4x32(philox_seed, c0, (philox_offset >> 32) & M32)
    rv = uniform(words[0]) + torch.tensor(1e-4, dtype=torch.float32)
    cap = torch.tensor(0.9999, dtype=torch.float32)
    return torch.where(rv > cap, cap, rv).view(dists, samples)


def reference(
    cdf: torch.Tensor, samples: int, philox_seed: int, philox_offset: int
) -> torch.Tensor:
    """The same draws recomputed from the Philox stream in int64 torch ops, each placed by
    torch.searchsorted (leftmost category whose CDF value is at or above it), clamped to the
    last category."""
    dists, categories = cdf.shape
    rv = draws(dists, samples, philox_seed, philox_offset, cdf.device)
    idx = torch.searchsorted(cdf.float(), rv, right=False)
    return idx.clamp_max(categories - 1).to(torch.int64)


def torch_multinomial(
    cdf: torch.Tensor, samples: int, philox_seed: int, philox_offset: int
) -> torch.Tensor:
    """The same by torch ops: the Philox draws in int64 torch ops, then torch.searchsorted
    over the CDF (torch.multinomial draws from its own generator's stream, other samples,
    so it cannot pass the check)."""
    return reference(cdf, samples, philox_seed, philox_offset)
