"""What the foreign kernel specs share: where third_party/ is, the check that says what is
missing and how to get it, loading a fetched file, the repository on sys.path, and the
hooks that only forward to a wrapper package's reference.py.

The third-party code itself is never committed: `scripts/fetch_third_party.py` copies it,
at pinned commits, into the git-ignored `third_party/` at the repository root (or the
folder named by `KBOPT_THIRD_PARTY`).  A spec calls `require_sources` / `require_package`
at import, so `kbopt kernel check <spec.py>` on a machine without them prints one located
line per missing piece and the command that fetches it, instead of a traceback.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from kbopt.errors import Problem, ProblemList
from kbopt.kernel import Version

REPO_ROOT = Path(__file__).resolve().parents[2]
# A baseline that reference.py defines: (key, family, description, name of its function
# in reference.py).  The key is also the Version's name: the specs always gave both alike.
Baseline = tuple[str, str, str, str]
# Bytes per element of the dtypes the specs time: their floors count bytes with it.
ELEMENT_SIZE = {"float16": 2, "bfloat16": 2, "float32": 4}
FETCH_SCRIPT = REPO_ROOT / "scripts" / "fetch_third_party.py"
# Where each fetched source lands, relative to third_party/ (the `dest` of its pin in
# scripts/fetch_third_party.py; tests/test_foreign_kernels.py checks the two agree).
SOURCE_FILES = {
    "sglang": "sglang/decode_attention.py",
    "triton_softmax": "triton_tutorials/fused_softmax.py",
    "triton_matmul": "triton_tutorials/matrix_multiplication.py",
    "triton_layernorm": "triton_tutorials/layer_norm.py",
    "sglang_prefill": "sglang/prefill_attention.py",
    "sglang_merge_state": "sglang/merge_state.py",
    "sglang_int8_quant": "sglang/int8_kernel.py",
    "sglang_mamba_ssm": "sglang/mamba_ssm.py",
    "sglang_ssd_bmm": "sglang/ssd_bmm.py",
    "sglang_gdn_recurrent": "sglang/fla_fused_recurrent.py",
    "sglang_fused_moe": "sglang/fused_moe_kernel.py",
    "sglang_fp8_kernel": "sglang/fp8_kernel.py",
    "sglang_gdn_cumsum": "sglang/fla_cumsum.py",
    "sglang_gdn_kkt": "sglang/fla_chunk_scaled_dot_kkt.py",
    "sglang_gdn_solve_tril": "sglang/fla_solve_tril.py",
    "sglang_moe_sum_reduce": "sglang/moe_sum_reduce.py",
    "sglang_kv_indices": "sglang/kv_indices.py",
    "sglang_tensor_hash": "sglang/multimodal_hash.py",
    "sglang_dp_memcpy": "sglang/dp_memcpy.py",
    "sglang_logit_softcap": "sglang/logit_softcap.py",
    "sglang_alloc_extend": "sglang/alloc_extend.py",
    "sglang_deepep_permute": "sglang/deepep_permute.py",
    "sglang_eagle_hidden_pool": "sglang/eagle_hidden_pool.py",
    "sglang_qkvzba_split": "sglang/qkvzba_split.py",
    "vllm_lora_shrink": "vllm/lora_shrink.py",
    "vllm_lora_kernel_utils": "vllm/lora_kernel_utils.py",
    "vllm_lora_expand": "vllm/lora_expand.py",
    "vllm_lora_expand_utils": "vllm/lora_expand_utils.py",
    "vllm_awq_gemm": "vllm/awq_triton.py",
    "vllm_reshape_and_cache": "vllm/reshape_and_cache_flash.py",
    "vllm_causal_conv1d": "vllm/causal_conv1d.py",
    "vllm_gumbel_sample": "vllm/gumbel.py",
    "vllm_penalties": "vllm/penalties.py",
    "vllm_l2norm": "vllm/fla_l2norm.py",
    "vllm_lightning_attn_diag": "vllm/lightning_attn.py",
    "vllm_logprob_ranks": "vllm/logprob_ranks.py",
    "vllm_grammar_bitmask": "vllm/grammar_bitmask.py",
    "vllm_maxsim_rerank": "vllm/maxsim_rerank.py",
    "vllm_min_p": "vllm/min_p.py",
    "vllm_rejection_stats": "vllm/rejection_stats.py",
    "vllm_draft_logits_row": "vllm/draft_logits_row.py",
    "vllm_slot_mapping": "vllm/slot_mapping.py",
    "vllm_load_ptr": "vllm/load_ptr.py",
    "vllm_sigmoid_gate_mul": "vllm/sigmoid_gate_mul.py",
    "flaggems_conv2d": "flag_gems/conv2d.py",
    "flaggems_topk": "flag_gems/topk.py",
    "flaggems_upsample_nearest2d": "flag_gems/upsample_nearest2d.py",
    "flaggems_avg_pool2d": "flag_gems/avg_pool2d.py",
    "flaggems_radix_sort": "flag_gems/sort.py",
    "flaggems_batch_norm": "flag_gems/batch_norm.py",
    "flaggems_embedding_backward": "flag_gems/embedding_dense_backward.py",
    "flaggems_hadamard": "flag_gems/hadamard_transform.py",
    "flaggems_max_pool2d": "flag_gems/max_pool2d_with_indices.py",
    "flaggems_masked_select": "flag_gems/masked_select.py",
    "flaggems_upsample_bicubic2d_aa": "flag_gems/upsample_bicubic2d_aa.py",
    "flaggems_cumsum": "flag_gems/cumsum.py",
    "flaggems_scatter_add": "flag_gems/scatter_add_.py",
    "flaggems_isin": "flag_gems/isin.py",
    "flaggems_repeat_interleave": "flag_gems/repeat_interleave.py",
    "flaggems_count_nonzero": "flag_gems/count_nonzero.py",
    "flaggems_index_select": "flag_gems/index_select.py",
    "flaggems_argmax": "flag_gems/argmax.py",
    "flaggems_unfold_backward": "flag_gems/unfold_backward.py",
    "flaggems_quantile": "flag_gems/quantile.py",
    "flaggems_var_mean": "flag_gems/var_mean.py",
    "flaggems_soft_margin_loss": "flag_gems/soft_margin_loss.py",
    "flaggems_upsample_linear1d": "flag_gems/upsample_linear1d.py",
    "flaggems_pixel_unshuffle": "flag_gems/pixel_unshuffle.py",
    "flaggems_kron": "flag_gems/kron.py",
    "flaggems_mv": "flag_gems/mv.py",
    "flaggems_dropout": "flag_gems/dropout.py",
    "flaggems_weight_norm": "flag_gems/weightnorm.py",
    "flaggems_one_hot": "flag_gems/one_hot.py",
    "flaggems_nll_loss": "flag_gems/nllloss.py",
    "flaggems_index_add": "flag_gems/index_add.py",
    "flaggems_vector_norm": "flag_gems/vector_norm.py",
    "sglang_moe_router": "sglang/moe_router.py",
    "flaggems_cat": "flag_gems/cat.py",
    "vllm_ssd_state_passing": "vllm/ssd_state_passing.py",
    "vllm_mamba_fast_exp": "vllm/mamba_fast_exp.py",
    "flaggems_trace": "flag_gems/trace.py",
    "flaggems_paged_mqa_metadata": "flag_gems/get_paged_mqa_logits_metadata.py",
    "sglang_nsa_dequant_k_cache": "sglang/nsa_dequant_k_cache.py",
    "vllm_ssd_chunk_scan": "vllm/ssd_chunk_scan.py",
    "flaggems_rwkv_mm_sparsity": "flag_gems/rwkv_mm_sparsity.py",
    "vllm_ngram_propose": "vllm/ngram_speculator.py",
    "flaggems_topk_softmax": "flag_gems/topk_softmax.py",
    "sglang_ds_label_scores": "sglang/double_sparsity_attention.py",
    "flaggems_attention_bwd": "flag_gems/attention_bwd.py",
    "flaggems_sdpa_masked_fwd": "flag_gems/attention_fwd.py",
    "flaggems_grouped_topk": "flag_gems/grouped_topk.py",
    "sglang_embedding_lora_a": "sglang/embedding_lora_a.py",
    "flaggems_multinomial": "flag_gems/multinomial.py",
    "vllm_deepencoder_relpos_attn": "vllm/deepencoder_relpos_attn.py",
    "flaggems_layer_norm_backward": "flag_gems/layer_norm_backward.py",
    "flaggems_rms_norm_backward": "flag_gems/rms_norm_backward.py",
    "sglang_sla_attention": "sglang/sla_attention.py",
    "vllm_xpress_latent": "vllm/xpress_kernels.py",
    "vllm_turboquant_store": "vllm/turboquant_store.py",
    "vllm_turboquant_decode": "vllm/turboquant_decode.py",
    "vllm_decode_stage2": "vllm/decode_stage2.py",
    "flaggems_conv3d": "flag_gems/conv3d.py",
    "flaggems_sparse_attn_sink": "flag_gems/sparse_attention.py",
    "flaggems_bincount": "flag_gems/bincount.py",
    "flaggems_gdn_fused_kkt_inv": "flag_gems/fla_fused_cumsum_kkt_solve_tril.py",
    "flaggems_dsa_indexer": "flag_gems/indexer_k_tiled.py",
    "flaggems_flash_mla": "flag_gems/flash_mla.py",
    "flaggems_mhc_sinkhorn": "flag_gems/hc_split_sinkhorn.py",
    "flaggems_mhc_pre": "flag_gems/mhc_pre.py",
    "flaggems_mm_syrk": "flag_gems/mm_syrk.py",
    "flaggems_replication_pad3d": "flag_gems/replication_pad3d.py",
    "flaggems_bucket_topk": "flag_gems/bin_topk.py",
    "flaggems_grouped_mm": "flag_gems/group_gemm.py",
    "flaggems_mm_tma": "flag_gems/mm_hopper_tma.py",
    "sglang_seg_la": "sglang/seg_la.py",
    "sglang_gdn_wy": "sglang/fla_wy_fast.py",
    "sglang_gdn_chunk_h": "sglang/fla_chunk_delta_h.py",
    "vllm_topk_topp": "vllm/topk_topp.py",
    "vllm_topk_topp_tables": "vllm/topk_topp_tables.py",
    "vllm_logit_bias": "vllm/logit_bias.py",
    "vllm_vit_mrope_setup": "vllm/vit_mrope_setup.py",
    "vllm_nvfp4_qdq": "vllm/nvfp4_qdq.py",
    "sglang_bi_bmm": "sglang/bi_bmm.py",
    "sglang_bi_mean": "sglang/bi_mean.py",
    "sglang_bi_log_softmax": "sglang/bi_log_softmax.py",
    "vllm_qwen3vl_pos_embed": "vllm/qwen3vl_pos_embed.py",
    "vllm_dflash2_grouped_conv": "vllm/dflash2_grouped_conv.py",
    "sglang_silu_mul_masked_quant": "sglang/silu_mul_masked_quant.py",
    "sglang_murmur_hash": "sglang/murmur_hash.py",
    "vllm_draft_budget": "vllm/draft_budget.py",
    "vllm_sampling_mask": "vllm/sampling_mask.py",
    "sglang_dit_modulate_select": "sglang/scale_shift_select01.py",
    "sglang_dit_scale_shift": "sglang/scale_shift_blc.py",
    "sglang_kv_move": "sglang/kv_move.py",
    "vllm_ple_ngram_ids": "vllm/ple_ngram_ids.py",
    "vllm_dsa_block_scores": "vllm/dsa_block_scores.py",
    "sglang_int8_block_gemm": "sglang/int8_block_gemm.py",
    "sglang_ep_gather": "sglang/ep_gather.py",
    "sglang_ep_scatter": "sglang/ep_scatter.py",
    "sglang_fp8_mla_scaled_mm": "sglang/fp8_mla_scaled_mm.py",
    "vllm_step5_indexer_scores": "vllm/step5_indexer_scores.py",
    "vllm_step5_swa_decode": "vllm/step5_swa_decode.py",
    "vllm_step5_decode_gate": "vllm/step5_decode_gate.py",
    "vllm_diffusion_row_stats": "vllm/diffusion_row_stats.py",
    "vllm_quant_embedding": "vllm/quant_embedding.py",
    "vllm_moe_bitmatrix": "vllm/moe_bitmatrix.py",
    "vllm_expert_count": "vllm/expert_count.py",
    "vllm_moe_mul_sum": "vllm/moe_mul_sum.py",
    "sglang_lightning_inter": "sglang/lightning_inter.py",
    "vllm_unified_attention": "vllm/unified_attention.py",
    "vllm_attention_helpers": "vllm/attention_helpers.py",
    "vllm_rel_proj": "vllm/rel_proj.py",
    "vllm_moe_lora": "vllm/moe_lora.py",
    "vllm_gdn_post_conv": "vllm/gdn_post_conv.py",
    "vllm_qk_norm_rope_gate": "vllm/qk_norm_rope_gate.py",
    "vllm_gdn_initial_states": "vllm/gdn_initial_states.py",
    "vllm_routing_topk": "vllm/routing_topk.py",
    "vllm_kv_offload_gather": "vllm/kv_offload_gather.py",
    "vllm_hadamard_mma": "vllm/hadamard_mma.py",
    "vllm_paged_sconv": "vllm/paged_sconv.py",
    "vllm_greedy_argmax": "vllm/greedy_argmax.py",
    "vllm_bi_matmul": "vllm/bi_matmul.py",
    "vllm_block_topk": "vllm/block_topk.py",
    "vllm_markov_noise": "vllm/markov_noise.py",
    "vllm_gelu_sparse": "vllm/gelu_sparse.py",
    "vllm_mrope_positions": "vllm/mrope_positions.py",
    "vllm_prefix_prefill": "vllm/prefix_prefill.py",
    "vllm_gdn_gated_decode": "vllm/gdn_gated_decode.py",
    "vllm_lightning_decode": "vllm/lightning_decode.py",
    "vllm_batched_moe": "vllm/batched_moe.py",
    "sglang_kda_kkt": "sglang/fla_kda_kkt.py",
    "sglang_ssd_chunk_state": "sglang/ssd_chunk_state.py",
    "sglang_lora_expand": "sglang/lora_expand.py",
    "sglang_ds_sparse_decode": "sglang/ds_sparse_decode.py",
    "sglang_mla_decode_rope": "sglang/mla_decode_rope.py",
    "sglang_ds_dense_decode": "sglang/ds_dense_decode.py",
    "sglang_kda_chunk_o": "sglang/fla_kda_chunk_o.py",
    "sglang_kda_wy": "sglang/fla_kda_wy.py",
    "sglang_lora_shrink": "sglang/lora_shrink.py",
    "sglang_seg_la_mtp": "sglang/seg_la_mtp.py",
    "sglang_gdn_chunk_o": "sglang/fla_chunk_o.py",
    "sglang_extend_attention": "sglang/extend_attention.py",
    "sglang_extend_unified": "sglang/extend_unified.py",
    "sglang_moe_wna16": "sglang/moe_wna16.py",
    "sglang_conv1d_update": "sglang/conv1d_update.py",
    "sglang_ssd_chunk_cumsum": "sglang/ssd_chunk_cumsum.py",
    "sglang_ssd_varlen_states": "sglang/ssd_varlen_states.py",
    "sglang_mla_kv_store": "sglang/mla_kv_store.py",
    "sglang_kda_gate": "sglang/fla_kda_gate.py",
    "sglang_awq_dequant": "sglang/awq_dequant.py",
    "sglang_fp8_kv_store": "sglang/fp8_kv_store.py",
    "sglang_kda_cumsum": "sglang/fla_kda_cumsum.py",
    "sglang_qkv_lora_b": "sglang/qkv_lora_b.py",
    "sglang_rms_norm_gated": "sglang/fla_rms_norm_gated.py",
    "sglang_dit_rotary": "sglang/dit_rotary.py",
    "vllm_vit_rotary": "vllm/vit_rotary.py",
    "vllm_m3_sparse_prefill": "vllm/m3_sparse_prefill.py",
    "vllm_kimi_attn_res": "vllm/kimi_attn_res.py",
    "flaggems_moe_align": "flag_gems/moe_align_block_size.py",
    "vllm_m3_sparse_decode": "vllm/m3_sparse_decode.py",
    "vllm_kda_state_commit": "vllm/kda_state_commit.py",
    "sglang_gdn_verify": "sglang/fla_gdn_verify.py",
    "vllm_nvfp4_moe": "vllm/nvfp4_moe.py",
    "vllm_nvfp4_e2m1": "vllm/nvfp4_e2m1.py",
    "vllm_moe_write_zeros": "vllm/moe_write_zeros.py",
    "flaggems_avg_pool2d_backward": "flag_gems/avg_pool2d_backward.py",
    "sglang_nsa_act_quant": "sglang/nsa_act_quant.py",
    "vllm_replayssm_decode": "vllm/replayssm_decode.py",
    "sglang_tma_align_scale": "sglang/tma_align_scale.py",
    "vllm_silu_mul_colmajor_quant": "vllm/silu_mul_colmajor_quant.py",
    "vllm_dsv4_inv_rope_quant": "vllm/dsv4_inv_rope_quant.py",
    "flaggems_conv2d_wgrad": "flag_gems/conv2d_wgrad.py",
    "flaggems_flash_mla_sparse": "flag_gems/flashmla_sparse.py",
    "sglang_kda_decode": "sglang/fla_kda_decode.py",
    "sglang_moe_act_mul": "sglang/moe_act_mul.py",
    "sglang_seg_la_decode": "sglang/seg_la_decode.py",
    "vllm_w4a16_gemm": "vllm/w4a16_gemm.py",
    "vllm_vit_prefill_attn": "vllm/vit_prefill_attention.py",
    "flaggems_bmm": "flag_gems/bmm.py",
    "sglang_sgemm_lora_a": "sglang/sgemm_lora_a.py",
    "flaggems_mhc_sinkhorn_bwd": "flag_gems/mhc_bwd.py",
    "vllm_int8_scaled_mm": "vllm/int8_scaled_mm.py",
    "cce_lse_forward": "cce/cce_lse_forward.py",
    "cce_tl_utils": "cce/tl_utils.py",
    "torchao_jagged_fp8_colwise": "torchao/jagged_float8_scales.py",
    "gemlite_gemv_revsplitk": "gemlite/gemv_revsplitk.py",
    "gemlite_utils": "gemlite/utils.py",
    "lmdeploy_fused_lora": "lmdeploy/fused_lora.py",
    "unsloth_fp8_small_m": "unsloth/fp8_small_m.py",
    "flashinfer_persistent_gemm": "flashinfer/sm_constraint_gemm.py",
    "xformers_scaled_index_add": "xformers/k_scaled_index_add.py",
    "fla_causal_conv1d_bwd": "fla/causal_conv1d_bwd.py",
    "te_grouped_dbias_dscales": "te/grouped_dbias_dscales.py",
}


def third_party_dir() -> Path:
    env = os.environ.get("KBOPT_THIRD_PARTY")
    return Path(env).resolve() if env else REPO_ROOT / "third_party"


def source_path(source: str) -> Path:
    return third_party_dir() / SOURCE_FILES[source]


def missing_sources(*sources: str) -> list[str]:
    """The named sources whose fetched file is absent."""
    return [s for s in sources if not source_path(s).is_file()]


def fetch_hint(*sources: str) -> str:
    names = " ".join(sources)
    return (
        f"python scripts/fetch_third_party.py {names}  (git from GitHub; "
        "--from-pypi, --from-mirror DIR or --from-files DIR without network access to it)"
    )


def require_sources(spec_file: str, *sources: str) -> None:
    """Refuse to load a spec whose third-party files are absent: one problem each."""
    absent = missing_sources(*sources)
    if absent:
        raise ProblemList(
            [
                Problem(
                    f"third-party kernel {s!r} is missing: {source_path(s)} does not exist "
                    f"(never committed; fetch it with: {fetch_hint(s)})",
                    spec_file,
                    1,
                )
                for s in absent
            ]
        )


def package_missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def require_package(spec_file: str, module: str, requirement: str) -> None:
    """Refuse to load a spec whose third-party package is not installed."""
    if package_missing(module):
        raise ProblemList(
            [
                Problem(
                    f"third-party package {module!r} is not installed "
                    f"(pip install '{requirement}'; it is in kbopt's dev extra)",
                    spec_file,
                    1,
                )
            ]
        )


def import_file(name: str, path: Path) -> ModuleType:
    """Import the Python file at `path` as module `name` (registered in sys.modules, and
    taken out again if its code raises)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_source(source: str) -> ModuleType:
    """Import a fetched file once, under a private module name."""
    name = f"_kbopt_third_party_{source}"
    if name in sys.modules:
        return sys.modules[name]
    path = source_path(source)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; fetch it with: {fetch_hint(source)}")
    from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

    fix_scalar_index_if_interpreting()
    return import_file(name, path)


class ElementwiseBoolOps(ast.NodeTransformer):
    """For `load_source_rewritten`: Python's `and` (and, where asked, `or` and `not`) on
    tensors rewritten to the element-wise `&`, `|` and `== 0` that compiled Triton reads them
    as, where the CPU interpreter takes a mask's truth instead; with `drop_asserts`, device
    asserts (a no-op in compiled Triton without debugging) are dropped.  The rewrite applies
    to the whole file, host code included, so each launcher asks only for what its file
    needs."""

    def __init__(self, ops: tuple[str, ...] = ("and", "or", "not"), drop_asserts: bool = False):
        self.ops = ops
        self.drop_asserts = drop_asserts

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        is_and = isinstance(node.op, ast.And)
        if ("and" if is_and else "or") not in self.ops:
            return node
        op: ast.operator = ast.BitAnd() if is_and else ast.BitOr()
        out = node.values[0]
        for value in node.values[1:]:
            out = ast.BinOp(left=out, op=op, right=value)
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if "not" in self.ops and isinstance(node.op, ast.Not):
            return ast.Compare(left=node.operand, ops=[ast.Eq()], comparators=[ast.Constant(0)])
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST | None:
        return None if self.drop_asserts else node


class DropDeviceAssertBranches(ast.NodeTransformer):
    """For `load_source_rewritten`: an `if` whose body only calls `tl.device_assert` (and
    has no `else`) is dropped.  Without debugging the assert compiles to nothing, so the
    kernel the GPU runs is the same; the branch's condition alone can stop compiled Triton
    (SGLang's rope-fused MLA decode tests `cur_head == 0` on a vector of heads, which
    Triton 3.6 refuses as an ambiguous truth value)."""

    def visit_If(self, node: ast.If) -> ast.AST | None:
        self.generic_visit(node)
        only_asserts = all(
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "device_assert"
            for stmt in node.body
        )
        return None if only_asserts and not node.orelse else node


class CastsOfNamesAsIs(ast.NodeTransformer):
    """For `load_source_rewritten` under the CPU interpreter only: `name.to(...)` read as
    `name` for the given loop counters. The interpreter's `tl.range` yields Python ints,
    which have no `.to`; Python ints do not overflow, so the offsets computed from them are
    the same as compiled Triton's widened ones."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if (
            isinstance(f, ast.Attribute) and f.attr == "to"
            and isinstance(f.value, ast.Name) and f.value.id in self.names
        ):  # fmt: skip
            return f.value
        return node


def load_source_rewritten(source: str, rewrite: Any) -> ModuleType:
    """Import a fetched file once with `rewrite` (an ``ast.NodeTransformer``) applied to it,
    from a copy written to a temporary folder, under its own private module name: for
    constructs the Triton CPU interpreter reads differently from compiled Triton, or that
    compiled Triton does not accept as upstream wrote them.  One rewrite per source: the
    module is cached by the source's name alone.  The plain file is loaded first, so a
    missing fetch fails with the same message."""
    import tempfile

    name = f"_kbopt_third_party_{source}_interpreted"
    if name in sys.modules:
        return sys.modules[name]
    load_source(source)
    tree = rewrite.visit(ast.parse(source_path(source).read_text()))
    path = Path(tempfile.mkdtemp(prefix=f"kbopt_{source}_")) / f"{source}_interpreted.py"
    path.write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
    return import_file(name, path)


def ensure_repo_on_path() -> None:
    """Make `kernels.*` importable (a spec named by path only puts benchmarks/ on sys.path)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))


def reference_module(package: str) -> ModuleType:
    """The wrapper package `foreign.<package>`'s reference.py.  The hooks below import it
    when they run, not when the spec loads: it imports torch, and loading a spec must stay
    cheap (no torch, no triton)."""
    return importlib.import_module(f"foreign.{package}.reference")


def forward_make_inputs(
    package: str, *dim_names: str, function: str = "make_inputs"
) -> Callable[..., tuple[Any, ...]]:
    """A spec's `make_inputs` that calls reference.py's `function` with the values of
    `dim_names`, in that order, as positional arguments, and dtype, device and seed as
    keywords.  `function="make_check_inputs"` gives a spec's `make_check_inputs`."""

    def make_inputs(
        dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
    ) -> tuple[Any, ...]:
        make = getattr(reference_module(package), function)
        inputs: tuple[Any, ...] = make(
            *(dims[name] for name in dim_names), dtype=dtype, device=device, seed=seed
        )
        return inputs

    return make_inputs


def forward_reference(package: str) -> Callable[..., Any]:
    """A spec's `reference`: reference.py's `reference`, called with the inputs as given."""

    def reference(*inputs: Any) -> Any:
        return reference_module(package).reference(*inputs)

    return reference


def forward_baselines(package: str, *baselines: Baseline) -> Callable[[], dict[str, Version]]:
    """A spec's `baselines`: one Version per (key, family, description, function name),
    in the order given, each running that function of reference.py."""

    def load_baselines() -> dict[str, Version]:
        reference = reference_module(package)
        return {
            key: Version(key, family, description, getattr(reference, function))
            for key, family, description, function in baselines
        }

    return load_baselines


def gemm_tiles(
    cfg: Any, base: Mapping[str, Any], warps: int, stages: int
) -> tuple[int, int, int, int, int, int]:
    """(block_m, block_n, block_k, group_m, num_warps, num_stages) of a tiled GEMM launch: each
    knob the version sets, else the library's choice for the shape (`base`, a config in
    Triton's key names as the library's table gives it; `warps` and `stages` where the table
    has none, such as Triton's defaults)."""
    return (
        cfg.block_m or base["BLOCK_SIZE_M"],
        cfg.block_n or base["BLOCK_SIZE_N"],
        cfg.block_k or base["BLOCK_SIZE_K"],
        cfg.group_m or base["GROUP_SIZE_M"],
        cfg.num_warps or warps,
        cfg.num_stages or stages,
    )


def triton_launch_info(launcher_module: str) -> Callable[[str], dict[str, Any]]:
    """A spec's `launch_info`: for the triton family, the `LAST_INFO` dict that the named
    launcher module's `record` fills at each launch (imported when first asked, so the
    spec loads without triton); nothing for other families."""

    def launch_info(family: str) -> dict[str, Any]:
        if family != "triton":
            return {}
        info: dict[str, Any] = importlib.import_module(launcher_module).LAST_INFO
        return info

    return launch_info


def record(info: dict[str, Any], kernel: object, **fields: object) -> None:
    """Write what a launch chose into a launch_info dict (plus the compiled kernel's
    registers, spills and shared memory when the handle has them)."""
    info.clear()
    info.update(fields)
    for key in ("n_regs", "n_spills"):
        val = getattr(kernel, key, None)
        if isinstance(val, int):
            info[key] = val
    shared = getattr(getattr(kernel, "metadata", None), "shared", None)
    if isinstance(shared, int):
        info["shared"] = shared


@contextlib.contextmanager
def interpreter_float_scalars() -> Iterator[None]:
    """Under TRITON_INTERPRET=1, pass Python float arguments as fp32 scalars, as compiled
    Triton does, for the launches inside the block.

    Triton 3.6's interpreter leaves a float argument a Python float, so a kernel that calls
    `.to(tl.float32)` on it (Liger's `offset`, `gate_multiplier`) fails on the CPU only.  The
    patch is scoped to the block so that other kernels' CPU tests see the interpreter as is.
    """
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as itp

    original = itp._implicit_cvt

    def cvt(arg: Any) -> Any:
        if isinstance(arg, float):
            handle = itp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return original(arg)

    itp._implicit_cvt = cvt
    try:
        yield
    finally:
        itp._implicit_cvt = original


@contextlib.contextmanager
def interpreter_libdevice(module: ModuleType, **replacements: Any) -> Iterator[None]:
    """Under TRITON_INTERPRET=1, replace a kernel module's libdevice functions (Triton 3.6's
    CPU interpreter returns None for libdevice rsqrt, tanh...) by @triton.jit equivalents,
    for the launches inside the block; compiled runs see the module as is."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    originals = {name: getattr(module, name) for name in replacements}
    for name, fn in replacements.items():
        setattr(module, name, fn)
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(module, name, fn)
