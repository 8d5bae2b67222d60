"""DeepSeek-style MLA decode attention: one shared latent KV head, 128 query heads.

Shapes and layout are fixed in :mod:`kernels.mla_decode.reference`; every version is
reachable by name through :mod:`kernels.mla_decode.registry`.
"""
