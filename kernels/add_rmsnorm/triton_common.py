"""The Triton kernels behind every ``triton_v*`` version of add_rmsnorm, and their launch.

Not a version itself (kbopt only discovers ``triton_v<N>.py`` modules).  Two kernels:

- ``two_pass_kernel`` (triton_v1): one program per row, a loop over ``block``-wide
  chunks; pass 1 stores ``residual_out`` and accumulates the sum of squares, pass 2
  re-reads ``residual_out`` from global memory and writes ``y``.
- ``rows_kernel`` (triton_v2 and later): the whole row in registers (one pass over
  global memory).  What the later versions change is set by their ``CONFIG``:
  ``num_warps`` / ``vectors_per_thread`` (threads sized to the row),
  ``rows_per_program`` (a 2-D block of rows per program), ``persistent`` (one wave of
  programs striding over row blocks), ``evict`` (cache-eviction hints).

A version calls ``launch_two_pass`` or ``launch`` with its module's ``CONFIG`` read at
call time, so kbopt can replace ``CONFIG`` (``dataclasses.replace``) per measurement.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from kbopt.bench.interpreter import fix_scalar_index_if_interpreting
from kernels.add_rmsnorm.reference import check_inputs

MAX_FUSED = 65536  # widest row the one-pass kernel holds in registers
MAX_WARPS = 32  # 1024 threads per program
RING_BYTES = 192 * 1024  # largest cp.async ring (x and residual) one program may hold
VECTOR_BYTES = 16  # one 128-bit global access per thread
CPU_SM_COUNT = 2  # the "SM count" under TRITON_INTERPRET (small: persistent loops iterate)

# What the last launch chose (kbopt reads it through the spec's launch_info).
LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class AddRmsNormConfig:
    """The tunable parameters of a Triton version (the spec declares them as knobs)."""

    # Columns per chunk of triton_v1's two-pass loop; None: the whole row (one-pass kernel).
    block: int | None = None
    # Warps per program; None: sized so that each thread holds `vectors_per_thread`
    # 16-byte vectors of each streamed tensor.
    num_warps: int | None = None
    vectors_per_thread: int = 4
    # Rows per program (a [rows_per_program, hidden] block); halved while the grid would
    # have fewer programs than SMs.
    rows_per_program: int = 1
    # One wave of programs striding over the row blocks; programs_per_sm None: as many as
    # fit resident (from the compiled kernel's registers, threads and shared memory).
    persistent: bool = False
    programs_per_sm: int | None = None
    # Software pipelining of the persistent loop (tl.range num_stages): the next blocks'
    # x and residual stream into shared memory (cp.async) while this one is reduced.
    num_stages: int = 1
    # evict_first on the streamed loads and stores, evict_last on the weight.
    evict: bool = False


# range() over loaded scalars under TRITON_INTERPRET=1 (the CPU tests).
fix_scalar_index_if_interpreting()


# ---------------------------------------------------------------------- kernels


@triton.jit
def two_pass_kernel(
    X,
    R,
    W,
    Y,
    S,
    hidden,
    eps,
    BLOCK: tl.constexpr,
):
    """One row per program, two passes over global memory (triton_v1)."""
    row = tl.program_id(0).to(tl.int64)
    base = row * hidden
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, hidden, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < hidden
        x = tl.load(X + base + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(R + base + cols, mask=mask, other=0.0).to(tl.float32)
        s = x + r
        tl.store(S + base + cols, s.to(S.dtype.element_ty), mask=mask)
        acc += s * s
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / hidden + eps)
    for start in range(0, hidden, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < hidden
        # the same thread wrote these elements in pass 1: its own store is visible
        s = tl.load(S + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + base + cols, (s * rstd * w).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _row_block(
    X,
    R,
    Y,
    S,
    w,
    block_id,
    n_rows,
    hidden,
    eps,
    BLOCK: tl.constexpr,
    ROWS: tl.constexpr,
    EVEN: tl.constexpr,
    STREAM: tl.constexpr,
):
    """Normalize the rows [block_id * ROWS, +ROWS): one read of x and residual, one write
    of residual_out and y; `w` is the weight row [1, BLOCK], in registers (input dtype)."""
    rows = block_id * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offs = rows.to(tl.int64)[:, None] * hidden + cols[None, :]
    if EVEN:  # hidden == BLOCK and no partial row block: no masks at all
        x = tl.load(X + offs, eviction_policy=STREAM).to(tl.float32)
        r = tl.load(R + offs, eviction_policy=STREAM).to(tl.float32)
    else:
        mask = (rows < n_rows)[:, None] & (cols < hidden)[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0, eviction_policy=STREAM).to(tl.float32)
        r = tl.load(R + offs, mask=mask, other=0.0, eviction_policy=STREAM).to(tl.float32)
    s = x + r
    rstd = tl.rsqrt(tl.sum(s * s, axis=1) / hidden + eps)
    y = s * rstd[:, None] * w.to(tl.float32)
    if EVEN:
        tl.store(S + offs, s.to(S.dtype.element_ty), eviction_policy=STREAM)
        tl.store(Y + offs, y.to(Y.dtype.element_ty), eviction_policy=STREAM)
    else:
        tl.store(S + offs, s.to(S.dtype.element_ty), mask=mask, eviction_policy=STREAM)
        tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask, eviction_policy=STREAM)


@triton.jit
def rows_kernel(
    X,
    R,
    W,
    Y,
    S,
    n_rows,
    hidden,
    eps,
    BLOCK: tl.constexpr,
    ROWS: tl.constexpr,
    EVEN: tl.constexpr,
    PERSISTENT: tl.constexpr,
    STREAM: tl.constexpr,  # eviction policy of the streamed tensors ("" or "evict_first")
    KEEP: tl.constexpr,  # eviction policy of the weight ("" or "evict_last")
    NUM_STAGES: tl.constexpr,  # software pipelining depth of the persistent loop
):
    """Whole rows in registers, ROWS rows per block; one block per program, or (PERSISTENT)
    a grid-stride loop over the blocks with the weight loaded once per program."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if EVEN:
        w = tl.load(W + cols, eviction_policy=KEEP)
    else:
        w = tl.load(W + cols, mask=cols < hidden, other=0.0, eviction_policy=KEEP)
    w = w[None, :]  # kept in the input dtype: half the registers of fp32 across the loop
    if PERSISTENT:
        n_blocks = tl.cdiv(n_rows, ROWS)
        for block_id in tl.range(pid, n_blocks, tl.num_programs(0), num_stages=NUM_STAGES):
            _row_block(X, R, Y, S, w, block_id, n_rows, hidden, eps, BLOCK, ROWS, EVEN, STREAM)
    else:
        _row_block(X, R, Y, S, w, pid, n_rows, hidden, eps, BLOCK, ROWS, EVEN, STREAM)


# ---------------------------------------------------------------------- launch


@functools.cache
def sm_count(device_index: int) -> int:
    return int(torch.cuda.get_device_properties(device_index).multi_processor_count)


def _sms(x: torch.Tensor) -> int:
    if x.device.type == "cuda":
        return sm_count(x.device.index if x.device.index is not None else 0)
    return CPU_SM_COUNT


def auto_num_warps(block_elems: int, elem_size: int, vectors_per_thread: int) -> int:
    """Warps so that each thread holds `vectors_per_thread` 16-byte vectors of a tensor."""
    per_thread = max(1, VECTOR_BYTES // elem_size) * max(1, vectors_per_thread)
    warps = block_elems // (32 * per_thread)
    return int(min(MAX_WARPS, max(1, triton.next_power_of_2(max(1, warps)))))


def effective_rows_per_program(rows: int, wanted: int, n_sm: int) -> int:
    """`wanted` rows per program, halved until the grid has at least one program per SM."""
    rpp = max(1, wanted)
    while rpp > 1 and -(-rows // rpp) < n_sm:
        rpp //= 2
    return rpp


def pipeline_stages(wanted: int, block_bytes: int) -> int:
    """`wanted` stages, fewer while the ring (stages - 1 blocks of x and of residual) would
    not fit in RING_BYTES of shared memory; 1: no pipelining."""
    stages = max(1, int(wanted))
    while stages > 1 and (stages - 1) * 2 * block_bytes > RING_BYTES:
        stages -= 1
    return stages


def resident_programs(n_regs: int, num_warps: int, shared: int = 0) -> int:
    """Programs of `num_warps` warps and `n_regs` registers per thread that fit on one SM
    of compute capability 9.0 (65,536 registers, 2,048 threads, 32 programs, 228 KiB of shared memory)."""
    regs_per_warp = -(-max(1, n_regs) * 32 // 256) * 256  # allocated per warp, 256 at a time
    by_regs = 65536 // (regs_per_warp * num_warps)
    by_threads = 2048 // (32 * num_warps)
    by_smem = (228 * 1024) // (shared + 1024)  # 1 KiB per program is reserved
    return max(1, min(by_regs, by_threads, by_smem, 32))


def _new_outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.empty_like(x), torch.empty_like(x)


def _record(info: dict[str, Any], kernel: Any) -> None:
    LAST_INFO.clear()
    LAST_INFO.update(info)
    for key in ("n_regs", "n_spills"):
        val = getattr(kernel, key, None)
        if isinstance(val, int):
            LAST_INFO[key] = val
    shared = getattr(getattr(kernel, "metadata", None), "shared", None)
    if isinstance(shared, int):
        LAST_INFO["shared"] = shared


def launch_two_pass(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float, cfg: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """triton_v1: one program per row, `cfg.block`-wide chunks, two passes."""
    rows, hidden = check_inputs(x, residual, weight, eps)
    block = int(cfg.block or 256)
    if block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of two, got {block}")
    num_warps = int(cfg.num_warps or 4)
    y, s = _new_outputs(x)
    kernel = two_pass_kernel[(rows,)](
        x, residual, weight, y, s, hidden, float(eps), BLOCK=block, num_warps=num_warps
    )
    info = dict(
        num_warps=num_warps,
        block=block,
        rows_per_program=1,
        metrics={"grid_size": rows, "block_size": 32 * num_warps, "kernel_count": 1},
    )
    _record(info, kernel)
    return y, s


@dataclass(frozen=True)
class Plan:
    """How one shape is launched under one config (cached: the host work is paid once)."""

    rows_per_program: int
    n_blocks: int
    kwargs: dict[str, Any]
    grid_size: int | None  # None: persistent, sized from the compiled kernel's occupancy


@functools.lru_cache(maxsize=256)
def _plan(rows: int, hidden: int, elem_size: int, n_sm: int, cfg: AddRmsNormConfig) -> Plan:
    block = triton.next_power_of_2(hidden)
    if hidden > MAX_FUSED:
        raise ValueError(f"hidden={hidden} exceeds {MAX_FUSED}: the row must fit in registers")
    if cfg.block is not None and cfg.block != block:
        raise ValueError(
            f"one-pass versions hold the whole row: block must be None (got {cfg.block}, "
            f"the row needs {block})"
        )
    wanted = cfg.rows_per_program
    if wanted < 1 or wanted & (wanted - 1):
        raise ValueError(f"rows_per_program must be a power of two, got {wanted}")
    rpp = effective_rows_per_program(rows, wanted, n_sm)
    num_warps = int(cfg.num_warps or auto_num_warps(rpp * block, elem_size, cfg.vectors_per_thread))
    n_blocks = -(-rows // rpp)
    stages = pipeline_stages(cfg.num_stages, rpp * block * elem_size) if cfg.persistent else 1
    kwargs = dict(
        BLOCK=block,
        ROWS=rpp,
        EVEN=(block == hidden and rows % rpp == 0),
        PERSISTENT=bool(cfg.persistent),
        STREAM="evict_first" if cfg.evict else "",
        KEEP="evict_last" if cfg.evict else "",
        NUM_STAGES=stages,
        num_warps=num_warps,
    )
    if not cfg.persistent:
        grid_size: int | None = n_blocks
    elif cfg.programs_per_sm is not None:
        grid_size = min(n_blocks, max(1, cfg.programs_per_sm) * n_sm)
    else:
        grid_size = None
    return Plan(rpp, n_blocks, kwargs, grid_size)


# (device, dtype, launch constants, hidden) -> (programs per SM, where that number came from)
_OCCUPANCY: dict[tuple[Any, ...], tuple[int, str]] = {}


def _occupancy(plan: Plan, args: tuple[Any, ...]) -> tuple[int, str]:
    """Resident programs per SM of the compiled kernel (compiled here, ahead of the launch)."""
    x = args[0]
    key = (x.device, x.dtype, tuple(sorted(plan.kwargs.items())), args[6] % 16 == 0)
    if key not in _OCCUPANCY:
        if x.device.type != "cuda":  # the interpreter compiles nothing
            _OCCUPANCY[key] = (1, "interpreter")
        else:
            kernel = rows_kernel.warmup(*args, grid=(1,), **plan.kwargs)
            kernel = kernel.result() if hasattr(kernel, "result") else kernel
            kernel._init_handles()
            per_sm = resident_programs(
                int(kernel.n_regs), plan.kwargs["num_warps"], int(kernel.metadata.shared)
            )
            _OCCUPANCY[key] = (per_sm, "compiled kernel")
    return _OCCUPANCY[key]


def launch(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float, cfg: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """triton_v2 and later: whole rows in registers, as `cfg` says (see the module doc)."""
    rows, hidden = check_inputs(x, residual, weight, eps)
    if not isinstance(cfg, AddRmsNormConfig):
        raise TypeError(f"CONFIG must be an AddRmsNormConfig, got {type(cfg).__name__}")
    n_sm = _sms(x)
    plan = _plan(rows, hidden, x.element_size(), n_sm, cfg)
    y, s = _new_outputs(x)
    args = (x, residual, weight, y, s, rows, hidden, float(eps))
    if plan.grid_size is not None:
        grid, per_sm, source = plan.grid_size, cfg.programs_per_sm, "config"
    else:
        per_sm, source = _occupancy(plan, args)
        grid = min(plan.n_blocks, per_sm * n_sm)
    kernel = rows_kernel[(grid,)](*args, **plan.kwargs)
    num_warps = plan.kwargs["num_warps"]
    info = dict(
        num_warps=num_warps,
        block=plan.kwargs["BLOCK"],
        rows_per_program=plan.rows_per_program,
        persistent=plan.kwargs["PERSISTENT"],
        num_stages=plan.kwargs["NUM_STAGES"],
        metrics={
            "grid_size": grid,
            "ctas_per_sm": round(grid / n_sm, 3),
            "block_size": 32 * num_warps,
            "kernel_count": 1,
        },
    )
    if plan.kwargs["PERSISTENT"]:
        info.update(programs_per_sm=per_sm, programs_per_sm_from=source)
    _record(info, kernel)
    return y, s
