"""MLA decode's fixed sizes and its roofline counts, with no dependency (no torch).

The spec (`spec.py`) and the reference (`reference.py`) both read these, so the FLOP and
byte counts of the roofline have one home and the spec loads on a machine without torch.
"""

from __future__ import annotations

D_LATENT = 512
D_ROPE = 64
D_QK = D_LATENT + D_ROPE  # 576
D_V = D_LATENT  # 512: V is the latent part of the same cache rows
N_HEADS = 128


def flops(b: int, s: int, t: int, h: int = N_HEADS) -> int:
    """Matmul FLOPs: QK^T (2*576) plus PV (2*512) per (query row, key) pair."""
    return 2 * b * s * h * t * (D_QK + D_V)


def bytes_moved(b: int, s: int, t: int, h: int = N_HEADS, elem: int = 2) -> int:
    """Fewest bytes: every KV row read once, q read once, out written once."""
    kv = b * t * D_QK * elem
    q = b * s * h * D_QK * elem
    out = b * s * h * D_V * elem
    return kv + q + out
