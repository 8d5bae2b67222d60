"""Fused residual add + RMSNorm (out of place): the spec, the reference and the versions."""
