"""Apple's Cut Cross-Entropy LSE forward (cut_cross_entropy/cce_lse_forward.py, release 25.1.1:
`_cce_lse_forward_kernel`), launched as CCE's `cce_lse_forward_kernel` launches it when
`linear_cross_entropy(e, c, targets)` runs its default "cce" implementation under training, so
that its launch choices are knobs.

The classifier matmul fused with the log-sum-exp of the cross-entropy: the logits e c^T are
never written.  One program per BLOCK_B x BLOCK_V tile of the [tokens, vocab] logits, in
GROUP_B-row bands (the tutorial matmul's L2 grouping: GROUP_B row tiles walk the vocabulary's
column tiles together), walks the whole hidden size in BLOCK_D steps, a tl.dot into an fp32
accumulator (`input_precision` ieee, or tf32 where torch's float32 matmul precision is
"high"), the rows and columns past the ends wrapped by a modulo and the hidden steps masked
unless BLOCK_D divides it.  After the loop the tile's columns past the vocabulary are set to
-inf, the tile's column sums over its live rows divided by the tokens are added atomically
into the fp32 `logit_avg` [vocab] (HAS_LA), and the tile's per-row log-sum-exp (its max, then
exp and sum) is merged into the fp32 LSE [tokens] by logaddexp under a spin lock (one uint32
lock per 128 rows: atomic_cas to take it, a load, the merge, a store, atomic_xchg to give it
back), so every row's LSE is the merge of cdiv(vocab, BLOCK_V) partials, one per column tile.
The launch records that count as `num_splits` (the vocabulary split across programs, each
row's partials merged through the lock rather than by a second pass) and the operands' width
as `matmul_operand_bits`.

CCE's launch (CCE_AUTOTUNE unset, the default: its autotuner replaced by one fixed
configuration): 256 x 128 tiles, 32-deep steps, GROUP_B 8, 8 warps, 3 stages for every shape;
EVEN_D, HAS_VALIDS, HAS_SOFTCAP and HAS_LA from the arguments.  Here no token is ignored (no
`valids`), no softcap, and `logit_avg` is returned, as the forward asks for it whenever the
loss needs a gradient and filter_eps is set (its default "high").  Knobs: the three tiles, the
band height, warps and stages, None keeping CCE's; every tile a power of two of at least 16
(tl.dot).  CCE allocates LSE (-inf), logit_avg (zeros) and the locks per call; here the
buffers are made once in `prepare` and refilled in the timed call (two torch fills before the
kernel: the merge accumulates into them).  The locks return to zero after every merge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "cce_lse_forward"
UTILS = "cce_tl_utils"
KERNEL = "_cce_lse_forward_kernel"
# tl_autotune._cce_forward_best_config and the kernel's heuristics (GROUP_B)
CCE_CONFIG = {"block_b": 256, "block_v": 128, "block_d": 32, "group_b": 8}
CCE_WARPS = 8
CCE_STAGES = 3
ROWS_PER_LOCK = 128  # cce_lse_forward_kernel: one lock per 128 tokens


@dataclass(frozen=True)
class CceLseConfig:
    block_b: int | None = None  # None: CCE's 256 tokens per tile
    block_v: int | None = None  # None: CCE's 128 vocabulary entries per tile
    block_d: int | None = None  # None: CCE's 32-deep hidden steps
    group_b: int | None = None  # None: CCE's bands of 8 row tiles
    num_warps: int | None = None  # None: CCE's 8
    num_stages: int | None = None  # None: CCE's 3


@triton.jit
def _log1p_cpu(x):  # type: ignore[no-untyped-def]
    """libdevice's log1p for the CPU interpreter only (it returns None for libdevice)."""
    return tl.log(1.0 + x)


def _power_of_two(v: int) -> bool:
    return v >= 16 and v & (v - 1) == 0


def kernel_modules() -> tuple[Any, Any]:
    """The fetched kernel module with CCE's tl_utils helpers bound into it (the shims of its
    imports leave them None), and the tl_utils module."""
    mod = _common.load_source(SOURCE)
    utils = _common.load_source(UTILS)
    mod.tl_logaddexp = utils.tl_logaddexp
    mod.tl_softcapping = utils.tl_softcapping
    mod.b_bin_fn = utils.b_bin_fn
    return mod, utils


def prepare(
    cfg: CceLseConfig, e: torch.Tensor, c: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod, utils = kernel_modules()
    # The module's kernel is triton.heuristics over the JITFunction (the autotune shim is the
    # identity); the heuristics would force GROUP_B 8, so the JITFunction is launched with
    # every constexpr as the heuristics give them and the band height a knob.
    kernel = mod._cce_lse_forward_kernel.fn
    if e.dim() != 2 or c.dim() != 2 or e.shape[1] != c.shape[1]:
        raise ValueError("e must be [tokens, hidden] and c [vocab, hidden]")
    if not e.is_contiguous():
        raise ValueError("e must be contiguous (CCE asserts it)")
    tokens, hidden = e.shape
    vocab = c.shape[0]
    knobs = {k: v for k, v in vars(cfg).items() if v is not None}
    c_ = {**CCE_CONFIG, "num_warps": CCE_WARPS, "num_stages": CCE_STAGES, **knobs}
    bb, bv, bd, gb = c_["block_b"], c_["block_v"], c_["block_d"], c_["group_b"]
    if not all(_power_of_two(t) for t in (bb, bv, bd)) or gb < 1:
        raise ValueError("every tile must be a power of two of at least 16 (tl.dot)")
    lse = torch.empty(tokens, dtype=torch.float32, device=e.device)
    logit_avg = torch.empty(vocab, dtype=torch.float32, device=e.device)
    locks = torch.zeros(-(-tokens // ROWS_PER_LOCK), dtype=torch.uint32, device=e.device)
    tiles_b, tiles_v = -(-tokens // bb), -(-vocab // bv)
    grid = (tiles_b * tiles_v,)
    precision = "tf32" if torch.get_float32_matmul_precision() == "high" else "ieee"

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        lse.fill_(-float("inf"))
        logit_avg.zero_()
        with _common.interpreter_libdevice(utils, tl_log1p=_log1p_cpu):
            handle = kernel[grid](
                e, c, lse, logit_avg, locks, None, None, tokens, vocab, hidden,
                e.stride(0), e.stride(1), c.stride(0), c.stride(1), lse.stride(0), 1,
                locks.numel(), utils.b_bin_fn(tokens),
                HAS_VALIDS=False, BLOCK_B=bb, BLOCK_V=bv, BLOCK_D=bd, GROUP_B=gb,
                EVEN_D=hidden % bd == 0, HAS_SOFTCAP=False, HAS_LA=True,
                DOT_PRECISION=precision, num_warps=c_["num_warps"], num_stages=c_["num_stages"],
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=3, kernel_names=["fill_", "zero_", KERNEL], **c_,
            programs=grid[0], row_tiles=tiles_b, vocab_tiles=tiles_v,
            d_steps=-(-hidden // bd), locks=locks.numel(), even_d=hidden % bd == 0,
            metrics={"num_splits": tiles_v, "matmul_operand_bits": 8 * e.element_size()},
        )  # fmt: skip
        return lse, logit_avg

    return launch
