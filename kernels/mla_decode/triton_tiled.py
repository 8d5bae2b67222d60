"""The tiled Triton MLA decode kernel that triton_v2.. configure (not a version itself).

One program owns BLOCK_M query rows of one sequence (rows = query positions x heads folded
together, so speculative positions share the tile) and a contiguous slice of that sequence's
KV rows (its split). Per KV tile of BLOCK_N rows it loads the latent part ``kn`` [N, 512] and
the rope part ``kp`` [N, 64] ONCE and uses ``kn`` both as K (scores) and as V (output):

    scores = qn @ kn^T + qp @ kp^T          (two tensor-core dots: 576 = 512 + 64)
    acc    = acc * alpha + p @ kn           (online softmax, fp32 accumulator [M, 512])

With one split the program writes the output directly; with several it writes a partial
(normalised output + log2-sum-exp) that :func:`triton_common.combine` merges.
USE_TMA loads Q and KV through tensor descriptors (Hopper TMA) instead of pointer tiles;
the 512-wide latent part is then moved as two 256-wide boxes (the TMA box limit).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.mla_decode.triton_common import D_QK, D_V, LOG2E, combine, prepare, sm_count


@triton.jit
def _scores(qa, qb, qp, kv_desc_l, kv_desc_r, n0, HALF: tl.constexpr):
    """Raw scores of one KV tile through TMA: [M, 256]x2 latent halves + [M, 64] rope."""
    ka = kv_desc_l.load([n0, 0])
    kb = kv_desc_l.load([n0, HALF])
    kp = kv_desc_r.load([n0, 0])
    qk = tl.dot(qa, tl.trans(ka))
    qk = tl.dot(qb, tl.trans(kb), qk)
    return tl.dot(qp, tl.trans(kp), qk)


@triton.jit
def _tiled_kernel(
    Q,  # [b, R, D_QK]
    KV,  # [b, T, D_QK]
    Lens,  # [b] int32
    Out,  # [b, R, D_V] (one split)
    PartO,  # [b*R, NUM_SPLITS, D_V] fp32 (several splits)
    PartLse,  # [b*R, NUM_SPLITS] fp32
    scale_log2,
    R,
    T,
    NUM_SPLITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    DL: tl.constexpr,
    DR: tl.constexpr,
    USE_TMA: tl.constexpr,
    WS: tl.constexpr,
    PIPE_QK: tl.constexpr,
):
    pid_m = tl.program_id(0)  # fastest: the row tiles of one KV slice run side by side (L2 reuse)
    pid_s = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    D: tl.constexpr = DL + DR
    HALF: tl.constexpr = DL // 2
    seqlen = tl.load(Lens + pid_b)
    per_split = tl.cdiv(tl.cdiv(seqlen, NUM_SPLITS), BLOCK_N) * BLOCK_N
    start = pid_s * per_split
    end = tl.minimum(start + per_split, seqlen)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < R
    offs_l = tl.arange(0, DL)
    offs_r = tl.arange(0, DR)
    q_base = Q + pid_b * R * D
    kv_base = KV + pid_b * T * D

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)

    if USE_TMA:
        q_desc_l = tl.make_tensor_descriptor(q_base, [R, D], [D, 1], [BLOCK_M, HALF])
        q_desc_r = tl.make_tensor_descriptor(q_base + DL, [R, DR], [D, 1], [BLOCK_M, DR])
        kv_desc_l = tl.make_tensor_descriptor(kv_base, [seqlen, D], [D, 1], [BLOCK_N, HALF])
        kv_desc_r = tl.make_tensor_descriptor(kv_base + DL, [seqlen, DR], [D, 1], [BLOCK_N, DR])
        m0 = pid_m * BLOCK_M
        qa = q_desc_l.load([m0, 0])
        qb = q_desc_l.load([m0, HALF])
        qp = q_desc_r.load([m0, 0])
        acc_a = tl.zeros([BLOCK_M, HALF], dtype=tl.float32)
        acc_b = tl.zeros([BLOCK_M, HALF], dtype=tl.float32)
        if PIPE_QK:
            # FA3-style software pipelining: the next tile's scores are issued before this
            # tile's P@V, so the tensor cores work on them while the softmax waits.
            qk = _scores(qa, qb, qp, kv_desc_l, kv_desc_r, start, HALF)
            for n0 in tl.range(start, end, BLOCK_N, warp_specialize=WS):
                offs_n = n0 + tl.arange(0, BLOCK_N)
                sc = tl.where((offs_n < end)[None, :], qk * scale_log2, float("-inf"))
                m_new = tl.maximum(m_i, tl.max(sc, 1))
                alpha = tl.exp2(m_i - m_new)
                p = tl.exp2(sc - m_new[:, None])
                l_i = l_i * alpha + tl.sum(p, 1)
                qk = _scores(qa, qb, qp, kv_desc_l, kv_desc_r, n0 + BLOCK_N, HALF)
                va = kv_desc_l.load([n0, 0])
                vb = kv_desc_l.load([n0, HALF])
                pv = p.to(va.dtype)
                acc_a = tl.dot(pv, va, acc_a * alpha[:, None])
                acc_b = tl.dot(pv, vb, acc_b * alpha[:, None])
                m_i = m_new
        else:
            for n0 in tl.range(start, end, BLOCK_N, warp_specialize=WS):
                ka = kv_desc_l.load([n0, 0])
                kb = kv_desc_l.load([n0, HALF])
                kp = kv_desc_r.load([n0, 0])
                qk = tl.dot(qa, tl.trans(ka))
                qk = tl.dot(qb, tl.trans(kb), qk)
                qk = tl.dot(qp, tl.trans(kp), qk)
                offs_n = n0 + tl.arange(0, BLOCK_N)
                qk = tl.where((offs_n < end)[None, :], qk * scale_log2, float("-inf"))
                m_new = tl.maximum(m_i, tl.max(qk, 1))
                alpha = tl.exp2(m_i - m_new)
                p = tl.exp2(qk - m_new[:, None])
                l_i = l_i * alpha + tl.sum(p, 1)
                pv = p.to(ka.dtype)
                acc_a = tl.dot(pv, ka, acc_a * alpha[:, None])
                acc_b = tl.dot(pv, kb, acc_b * alpha[:, None])
                m_i = m_new
        acc = tl.join(acc_a, acc_b).permute(0, 2, 1).reshape(BLOCK_M, DL)
    else:
        q_rows = q_base + offs_m[:, None] * D
        qn = tl.load(q_rows + offs_l[None, :], mask=mask_m[:, None], other=0.0)
        qp = tl.load(q_rows + DL + offs_r[None, :], mask=mask_m[:, None], other=0.0)
        acc = tl.zeros([BLOCK_M, DL], dtype=tl.float32)
        for n0 in tl.range(start, end, BLOCK_N, warp_specialize=WS):
            offs_n = n0 + tl.arange(0, BLOCK_N)
            mask_n = offs_n < end
            kv_rows = kv_base + offs_n[:, None] * D
            kn = tl.load(kv_rows + offs_l[None, :], mask=mask_n[:, None], other=0.0)
            kp = tl.load(kv_rows + DL + offs_r[None, :], mask=mask_n[:, None], other=0.0)
            qk = tl.dot(qn, tl.trans(kn))
            qk = tl.dot(qp, tl.trans(kp), qk)
            qk = tl.where(mask_n[None, :], qk * scale_log2, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(qk - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = tl.dot(p.to(kn.dtype), kn, acc * alpha[:, None])
            m_i = m_new

    l_safe = tl.where(l_i > 0.0, l_i, 1.0)  # an empty split (ragged tail) has l_i = 0
    out = acc / l_safe[:, None]
    if NUM_SPLITS == 1:
        o_ptrs = Out + (pid_b * R + offs_m[:, None]) * DL + offs_l[None, :]
        tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=mask_m[:, None])
    else:
        row = pid_b * R + offs_m
        p_ptrs = PartO + (row[:, None] * NUM_SPLITS + pid_s) * DL + offs_l[None, :]
        tl.store(p_ptrs, out, mask=mask_m[:, None])
        lse = tl.where(l_i > 0.0, m_i + tl.log2(l_safe), float("-inf"))
        tl.store(PartLse + row * NUM_SPLITS + pid_s, lse, mask=mask_m)


@dataclass(frozen=True)
class TiledConfig:
    block_m: int = 64
    block_n: int = 32
    num_warps: int = 8
    num_stages: int = 2
    splits: int | None = 1  # None: size the split count from the SM count and the batch
    use_tma: bool = False
    min_rows_per_split: int = 256
    warp_specialize: bool = False
    pipe_qk: bool = False

    def tag(self) -> str:
        return (
            f"bm{self.block_m}-bn{self.block_n}-st{self.num_stages}-w{self.num_warps}"
            f"-sp{self.splits or 'auto'}{'-tma' if self.use_tma else ''}"
            f"{'-ws' if self.warp_specialize else ''}{'-pipe' if self.pipe_qk else ''}"
        )

    @classmethod
    def parse(cls, spec: str) -> TiledConfig:
        """'bm64-bn64-st2-w8-spauto-tma-ws' (any subset, defaults for the rest)."""
        cfg = cls()
        for tok in spec.split("-"):
            for prefix, field in (
                ("bm", "block_m"),
                ("bn", "block_n"),
                ("st", "num_stages"),
                ("w", "num_warps"),
                ("sp", "splits"),
            ):
                if tok.startswith(prefix) and tok != "ws":
                    val = tok[len(prefix) :]
                    cfg = replace(cfg, **{field: None if val == "auto" else int(val)})
                    break
            else:
                if tok == "tma":
                    cfg = replace(cfg, use_tma=True)
                elif tok == "ws":
                    cfg = replace(cfg, warp_specialize=True)
                elif tok == "pipe":
                    cfg = replace(cfg, pipe_qk=True)
                else:
                    raise ValueError(f"bad tiled config token {tok!r} in {spec!r}")
        return cfg


def auto_splits(b: int, row_tiles: int, t: int, n_sm: int, min_rows: int) -> int:
    """Enough splits that b*row_tiles*splits fills the SMs once, never splits shorter than
    ``min_rows`` KV rows (each split costs a partial write + combine read)."""
    programs = b * row_tiles
    if programs >= n_sm:
        return 1
    want = max(1, n_sm // programs)
    return max(1, min(want, t // min_rows if t >= min_rows else 1))


_ALLOCATOR_SET = False

# Resource report of the last compiled launch (registers, spills, shared memory, splits):
# the benchmark copies it into its result rows, so limits are recorded next to times.
LAST_INFO: dict[str, Any] = {}


def _ensure_tma_allocator() -> None:
    """Device-side tensor descriptors need scratch memory from a host allocator."""
    global _ALLOCATOR_SET
    if _ALLOCATOR_SET:
        return

    def alloc(size: int, alignment: int, stream: int | None) -> torch.Tensor:
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        return torch.empty(size, device=dev, dtype=torch.int8)

    triton.set_allocator(alloc)
    _ALLOCATOR_SET = True


def run_tiled(
    cfg: TiledConfig,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    b, s, h, t, lens = prepare(q, kv_cache, cache_seqlens)
    rows = s * h
    row_tiles = triton.cdiv(rows, cfg.block_m)
    if cfg.splits is None:
        dev = q.device.index if q.device.type == "cuda" and q.device.index is not None else 0
        splits = auto_splits(b, row_tiles, t, sm_count(dev), cfg.min_rows_per_split)
    else:
        splits = cfg.splits
    if cfg.use_tma:
        _ensure_tma_allocator()
    out = torch.empty(b, s, h, D_V, dtype=q.dtype, device=q.device)
    if splits > 1:
        part_o = torch.empty(b * rows, splits, D_V, dtype=torch.float32, device=q.device)
        part_lse = torch.empty(b * rows, splits, dtype=torch.float32, device=q.device)
    else:
        part_o = part_lse = out  # unused
    handle = _tiled_kernel[(row_tiles, splits, b)](
        q,
        kv_cache,
        lens,
        out,
        part_o,
        part_lse,
        float(sm_scale) * LOG2E,
        rows,
        t,
        NUM_SPLITS=splits,
        BLOCK_M=cfg.block_m,
        BLOCK_N=cfg.block_n,
        DL=D_V,
        DR=D_QK - D_V,
        USE_TMA=cfg.use_tma,
        WS=cfg.warp_specialize,
        PIPE_QK=cfg.pipe_qk and cfg.use_tma,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )
    LAST_INFO.clear()
    LAST_INFO["splits"] = splits
    # Rows are (position, head) with the head fastest: a tile of block_m rows serves
    # min(block_m, h) heads from each KV tile it reads.
    LAST_INFO["metrics"] = {"heads_per_program": float(min(cfg.block_m, h))}
    LAST_INFO["kernels"] = 2 if splits > 1 else 1  # the combine kernel runs after a split
    for key in ("n_regs", "n_spills", "shared"):
        val = getattr(handle, key, None) or getattr(getattr(handle, "metadata", None), key, None)
        if isinstance(val, int):
            LAST_INFO[key] = val
    if splits > 1:
        combine(part_o, part_lse, out.view(b * rows, D_V))
    return out
