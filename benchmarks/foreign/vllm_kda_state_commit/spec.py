"""vLLM's Kimi K3 KDA RecoverSSM state commit (vLLM v0.34.0, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_kda_state_commit` and never committed.

Why this one as the set's speculative-state commit: Kimi K3 serves speculative decoding
(its MTP or DSpark drafter) with RecoverSSM under `--use-replayssm`: each KDA layer's verify
runs the delta rule over the draft window without writing the state and records only each
token's fp32 correction and its key and raw gate; once the sampler has accepted a prefix of
the window, `KDARecoverSSMCommitContext.commit` folds it into every KDA layer's state.  On
every GPU but SM10x (where CuTe kernels take over) the fold is this Triton kernel, one
launch for all the rank's KDA layers through per-layer address tables: one program per
(32 state rows, request, layer x head) loads its [32, 128] fp32 tile of the source slot,
walks the accepted tokens from the last back, composing their rank-1 updates
(correction x normalised key) under the per-channel decays of the tokens after them into a
[32, 128] correction and a running decay product, and stores tile x product + correction to
the final slot; in vLLM's align cache mode (its default with prefix caching) a second fold
covers the tokens before the request's mamba block boundary, stored when the window closes
a block.  No output besides the state, no tl.dot: a read and a write of every live
request's 128 x 128 fp32 state per head and layer (54 MB a request on a TP8 rank), against
a few KB of records.  The nearest specs are the decode-step state updates
(`vllm_gdn_gated_decode`, `sglang_mamba_state_update`), which apply one token's update and
read an output out of the state; here there is no readout and a variable number of updates (1 to
the window) is composed in registers before one store, over many layers in one grid.  Both
trials are Kimi K3.1 on a tensor-parallel-8 rank as vLLM's source sizes it (the model's
config is not in the wheel): 69 KDA layers (the CuTe commit's notes: "a Kimi K3.1 rank
commits its 69 KDA layers in one launch"), 96 KDA heads of 128 split 12 a rank (the ROCm
KDA decode's notes), a 5-token window (4 drafts, the window those notes time), align mode,
requests committing 1 to 5 tokens (about 3 on average): a 16-request step (52,992
programs, 1.8 GB moved) and a 4-request step (13,248 programs, 0.44 GB).  Memory-bound:
the floor is reading each live state tile and writing the final (and any new boundary)
state once, plus the records of the accepted tokens.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_kda_state_commit")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a read-modify-write of the state pools: per tile, a fold of rank-1 updates before one store
CONTEXTS = ("elementwise", "reduction", "memory-bound")
FP32 = 4


def _plan(d: Mapping[str, int]) -> list[tuple[int, int, bool, bool]]:
    """reference.py's `commit_plan`: (commit length, boundary recovery length, crosses a
    block end, final state in a new slot) per request."""
    out = []
    for r in range(d["reqs"]):
        n = 1 + (3 * r) % d["window"]
        if not d["align"]:
            out.append((n, 0, False, False))
        elif r % 8 == 7:
            brl = 1 + (r // 8) % n
            out.append((n, brl, True, brl < n))
        else:
            out.append((n, d["window"] + 1, False, False))
    return out


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per (layer, head): every request's fp32 state tile read and its final state written
    once, a boundary state written where it lands in another slot than the final one, and
    each accepted token's key and raw gate (in the dtype) and fp32 correction read once; the
    fp32 A_log and dt_bias once, five int32 plan entries a request."""
    items = d["layers"] * d["heads"]
    tile = d["head_dim"] * d["head_dim"] * FP32
    plan = _plan(d)
    stored = sum(2 + new for *_, new in plan)
    tokens = sum(n for n, *_ in plan)
    record = 2 * d["head_dim"] * ELEMENT_SIZE[dtype] + d["head_dim"] * FP32
    params = items * (d["head_dim"] + 1) * FP32
    return items * (stored * tile + tokens * record) + params + 5 * 4 * d["reqs"]


def flops(d: Mapping[str, int]) -> int:
    """Per (layer, head, request) and state element: 3 per accepted token (the rank-1
    update, its scaling by the decays after it, the sum) and 2 for the stored state (the
    source times the decay product, plus the sum); as much again for the tokens before a
    boundary whose state lands in its own slot.  The key norms and gates, O(K) a token,
    not counted."""
    per = sum(3 * n + 2 + (3 * brl + 2) * new for n, brl, _, new in _plan(d))
    return d["layers"] * d["heads"] * d["head_dim"] * d["head_dim"] * per


_make_inputs = _common.forward_make_inputs(
    "vllm_kda_state_commit", "reqs", "layers", "heads", "head_dim", "window", "align"
)
_reference = _common.forward_reference("vllm_kda_state_commit")
_baselines = _common.forward_baselines(
    "vllm_kda_state_commit",
    (
        "torch",
        "torch",
        "the same fold by torch ops in fp32 over every layer at once: the requests' states "
        "gathered, the window walked token by token under a mask, the states scattered back",
        "torch_kda_commit",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_kda_state_commit.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 4, 8, 16, 32, 64, 128), "tile_m",
         "state rows (value channels) per program, each with the whole key row and two or "
         "four [rows, K] fp32 tiles live; None: vLLM's min(next_power_of_2(V), 32)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the accepted-token loop's loads; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_kda_state_commit",
    description=(
        "vLLM's Kimi K3 KDA RecoverSSM state commit (v0.34.0, _commit_kda_state_kernel): "
        "one launch for every KDA layer of the rank; per (32 state rows, request, layer x "
        "head) the accepted tokens' rank-1 delta-rule updates composed under their "
        "per-channel decays and applied once to the source state tile, stored to the final "
        "slot (and the block-boundary state in align mode)"
    ),
    dims=(
        Dim("reqs", "requests in the speculative step", "batch"),
        Dim("layers", "KDA layers of the rank (one launch folds them all)"),
        Dim("heads", "KDA heads on the rank", "num_heads"),
        Dim("head_dim", "key and value channels per head (KDA: K = V)", "head_dim"),
        Dim("window", "tokens a request verifies: 1 + drafts (its records)", "query_len"),
        Dim("align", "1: vLLM's align mamba cache mode (prefix caching), boundary states too"),
    ),
    trials=(
        Trial(
            "kimi_k31_tp8_commit16",
            {"reqs": 16, "layers": 69, "heads": 12, "head_dim": 128, "window": 5, "align": 1},
            "a 16-request speculative step of Kimi K3.1 on a tensor-parallel-8 rank (69 KDA "
            "layers, 12 of its 96 KDA heads of 128, 4 drafts) in align mode, requests "
            "committing 1 to 5 tokens (46 in all; the 8th and 16th close their mamba "
            "blocks, the 8th after the first of its 2): vLLM's launch (32 rows, 4 warps, 2 "
            "stages) is 52,992 programs, 1.8 GB moved (fp32 states)",
        ),
        Trial(
            "kimi_k31_tp8_commit4",
            {"reqs": 4, "layers": 69, "heads": 12, "head_dim": 128, "window": 5, "align": 1},
            "the same rank at 4 requests (committing 1, 4, 2 and 5 tokens, no block "
            "closed): 13,248 programs, 0.44 GB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    # a program holds whole key rows of its state tile (BLOCK_K = next_power_of_2(K))
    shape_metrics=lambda d: {"row_len": d["head_dim"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 states and corrections whatever the dtype (it is the keys' and gates', read alike
    # by both): fp32 sums of up to `window` updates in another order, fp32 exp and sigmoid
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="kda_state_commit",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
