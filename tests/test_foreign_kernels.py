"""The foreign kernel set (benchmarks/foreign/): specs over kernels nobody here wrote.

Without third_party/ (CI: the fetch needs GitHub, or PyPI for SGLang only) the specs that
need it must refuse to load with one located line naming the fetch command; those tests
always run.  With third_party/ fetched (`python scripts/fetch_third_party.py`), every
version runs under the Triton CPU interpreter at tiny dims, in a subprocess with
TRITON_INTERPRET=1 (Triton reads it when a kernel is defined, so it cannot be switched on
inside this process without changing the other tests' kernels), against its fp32
reference.  The Liger specs need only the liger-kernel package (dev extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbopt.cli import main as cli_main
from kbopt.errors import ProblemList
from kbopt.kernel import clear_cache, load_spec, read_knob_values

REPO = Path(__file__).resolve().parent.parent
FOREIGN = REPO / "benchmarks" / "foreign"
SCRIPT = REPO / "scripts" / "fetch_third_party.py"

# spec folder -> the third_party source it needs (None: a package or nothing)
NEEDS = {
    "sglang_mla_decode": "sglang",
    "sglang_mha_decode": "sglang",
    "triton_matmul": "triton_matmul",
    "triton_softmax": "triton_softmax",
    "triton_layernorm": "triton_layernorm",
    "liger_rmsnorm": None,
    "liger_swiglu": None,
    "torch_attention_decode": None,
    "liger_geglu": None,
    "liger_layernorm": None,
    "liger_cross_entropy": None,
    "liger_rope": None,
    "liger_group_norm": None,
    "torch_sdpa_decode": None,
    "torch_cross_entropy": None,
    "liger_jsd": None,
    "liger_dyt": None,
    "liger_fused_add_rms_norm": None,
    "liger_sparsemax": None,
    "liger_kl_div": None,
    "liger_poly_norm": None,
    "liger_llama4_rope": None,
    "liger_relu_squared": None,
    "liger_tvd": None,
    "liger_embedding": None,
    "liger_grpo_loss": None,
    "liger_moe_up_proj": None,
    "liger_moe_down_proj": None,
    "liger_attn_res": None,
    "liger_qwen2vl_mrope": None,
    "liger_mm_int8int2": None,
    "liger_neighborhood_attention": None,
    "liger_mlp_gate_up": None,
    "sglang_prefill_attention": "sglang_prefill",
    "sglang_merge_state": "sglang_merge_state",
    "liger_mhc_coeffs": None,
    "liger_mhc_post_res": None,
    "sglang_int8_quant": "sglang_int8_quant",
    "sglang_mamba_state_update": "sglang_mamba_ssm",
    "sglang_ssd_bmm": "sglang_ssd_bmm",
    "sglang_gdn_recurrent": "sglang_gdn_recurrent",
    "sglang_fused_moe": "sglang_fused_moe",
    "sglang_fp8_group_quant": "sglang_fp8_kernel",
    "sglang_fp8_block_gemm": "sglang_fp8_kernel",
    "sglang_gdn_cumsum": "sglang_gdn_cumsum",
    "sglang_gdn_kkt": "sglang_gdn_kkt",
    "sglang_gdn_solve_tril": "sglang_gdn_solve_tril",
    "sglang_moe_sum_reduce": "sglang_moe_sum_reduce",
    "sglang_kv_indices": "sglang_kv_indices",
    "vllm_lora_shrink": "vllm_lora_shrink",
    "vllm_lora_expand": "vllm_lora_expand",
    "vllm_awq_gemm": "vllm_awq_gemm",
    "vllm_reshape_and_cache": "vllm_reshape_and_cache",
    "vllm_causal_conv1d": "vllm_causal_conv1d",
    "vllm_gumbel_sample": "vllm_gumbel_sample",
    "vllm_penalties": "vllm_penalties",
    "vllm_l2norm": "vllm_l2norm",
    "vllm_lightning_attn_diag": "vllm_lightning_attn_diag",
    "flaggems_conv2d": "flaggems_conv2d",
    "flaggems_topk": "flaggems_topk",
    "flaggems_upsample_nearest2d": "flaggems_upsample_nearest2d",
    "flaggems_avg_pool2d": "flaggems_avg_pool2d",
    "flaggems_radix_sort": "flaggems_radix_sort",
    "flaggems_batch_norm": "flaggems_batch_norm",
    "flaggems_embedding_backward": "flaggems_embedding_backward",
    "flaggems_hadamard": "flaggems_hadamard",
    "flaggems_max_pool2d": "flaggems_max_pool2d",
    "flaggems_masked_select": "flaggems_masked_select",
    "flaggems_upsample_bicubic2d_aa": "flaggems_upsample_bicubic2d_aa",
    "flaggems_cumsum": "flaggems_cumsum",
    "flaggems_scatter_add": "flaggems_scatter_add",
    "flaggems_isin": "flaggems_isin",
    "flaggems_repeat_interleave": "flaggems_repeat_interleave",
    "flaggems_count_nonzero": "flaggems_count_nonzero",
    "flaggems_index_select": "flaggems_index_select",
    "flaggems_argmax": "flaggems_argmax",
    "flaggems_unfold_backward": "flaggems_unfold_backward",
    "flaggems_quantile": "flaggems_quantile",
    "flaggems_var_mean": "flaggems_var_mean",
    "flaggems_soft_margin_loss": "flaggems_soft_margin_loss",
    "flaggems_upsample_linear1d": "flaggems_upsample_linear1d",
    "flaggems_pixel_unshuffle": "flaggems_pixel_unshuffle",
    "sglang_tensor_hash": "sglang_tensor_hash",
    "sglang_dp_memcpy": "sglang_dp_memcpy",
    "sglang_logit_softcap": "sglang_logit_softcap",
    "vllm_logprob_ranks": "vllm_logprob_ranks",
    "vllm_grammar_bitmask": "vllm_grammar_bitmask",
    "vllm_maxsim_rerank": "vllm_maxsim_rerank",
    "flaggems_kron": "flaggems_kron",
    "sglang_alloc_extend": "sglang_alloc_extend",
    "flaggems_mv": "flaggems_mv",
    "flaggems_dropout": "flaggems_dropout",
    "flaggems_weight_norm": "flaggems_weight_norm",
    "flaggems_one_hot": "flaggems_one_hot",
    "vllm_min_p": "vllm_min_p",
    "sglang_deepep_permute": "sglang_deepep_permute",
    "vllm_rejection_stats": "vllm_rejection_stats",
    "sglang_eagle_hidden_pool": "sglang_eagle_hidden_pool",
    "flaggems_nll_loss": "flaggems_nll_loss",
    "vllm_slot_mapping": "vllm_slot_mapping",
    "flaggems_index_add": "flaggems_index_add",
    "sglang_qkvzba_split": "sglang_qkvzba_split",
    "flaggems_vector_norm": "flaggems_vector_norm",
    "sglang_moe_router": "sglang_moe_router",
    "vllm_sigmoid_gate_mul": "vllm_sigmoid_gate_mul",
    "flaggems_cat": "flaggems_cat",
    "vllm_ssd_state_passing": "vllm_ssd_state_passing",
    "flaggems_trace": "flaggems_trace",
    "flaggems_paged_mqa_metadata": "flaggems_paged_mqa_metadata",
    "sglang_nsa_dequant_k_cache": "sglang_nsa_dequant_k_cache",
    "flaggems_rwkv_mm_sparsity": "flaggems_rwkv_mm_sparsity",
    "vllm_ssd_chunk_scan": "vllm_ssd_chunk_scan",
    "vllm_ngram_propose": "vllm_ngram_propose",
    "flaggems_topk_softmax": "flaggems_topk_softmax",
    "sglang_ds_label_scores": "sglang_ds_label_scores",
    "flaggems_attention_bwd": "flaggems_attention_bwd",
    "flaggems_sdpa_masked_fwd": "flaggems_sdpa_masked_fwd",
    "flaggems_grouped_topk": "flaggems_grouped_topk",
    "sglang_embedding_lora_a": "sglang_embedding_lora_a",
    "flaggems_multinomial": "flaggems_multinomial",
    "vllm_deepencoder_relpos_attn": "vllm_deepencoder_relpos_attn",
    "flaggems_layer_norm_backward": "flaggems_layer_norm_backward",
    "flaggems_rms_norm_backward": "flaggems_rms_norm_backward",
    "sglang_sla_attention": "sglang_sla_attention",
    "vllm_xpress_latent": "vllm_xpress_latent",
    "vllm_turboquant_store": "vllm_turboquant_store",
    "vllm_turboquant_decode": "vllm_turboquant_decode",
    "flaggems_conv3d": "flaggems_conv3d",
    "flaggems_sparse_attn_sink": "flaggems_sparse_attn_sink",
    "flaggems_bincount": "flaggems_bincount",
    "flaggems_gdn_fused_kkt_inv": "flaggems_gdn_fused_kkt_inv",
    "flaggems_dsa_indexer": "flaggems_dsa_indexer",
    "flaggems_flash_mla": "flaggems_flash_mla",
    "flaggems_mhc_sinkhorn": "flaggems_mhc_sinkhorn",
    "flaggems_mhc_pre": "flaggems_mhc_pre",
    "flaggems_mm_syrk": "flaggems_mm_syrk",
    "flaggems_replication_pad3d": "flaggems_replication_pad3d",
    "flaggems_bucket_topk": "flaggems_bucket_topk",
    "flaggems_grouped_mm": "flaggems_grouped_mm",
    "flaggems_mm_tma": "flaggems_mm_tma",
    "sglang_seg_la": "sglang_seg_la",
    "sglang_gdn_wy": "sglang_gdn_wy",
    "sglang_gdn_chunk_h": "sglang_gdn_chunk_h",
    "vllm_topk_topp": "vllm_topk_topp",
    "vllm_logit_bias": "vllm_logit_bias",
    "vllm_vit_mrope_setup": "vllm_vit_mrope_setup",
    "vllm_nvfp4_qdq": "vllm_nvfp4_qdq",
    "sglang_bi_bmm": "sglang_bi_bmm",
    "sglang_bi_mean": "sglang_bi_mean",
    "sglang_bi_log_softmax": "sglang_bi_log_softmax",
    "vllm_qwen3vl_pos_embed": "vllm_qwen3vl_pos_embed",
    "vllm_dflash2_grouped_conv": "vllm_dflash2_grouped_conv",
    "sglang_silu_mul_masked_quant": "sglang_silu_mul_masked_quant",
    "sglang_murmur_hash": "sglang_murmur_hash",
    "vllm_draft_budget": "vllm_draft_budget",
    "vllm_sampling_mask": "vllm_sampling_mask",
    "sglang_dit_modulate_select": "sglang_dit_modulate_select",
    "sglang_dit_scale_shift": "sglang_dit_scale_shift",
    "sglang_kv_move": "sglang_kv_move",
    "vllm_ple_ngram_ids": "vllm_ple_ngram_ids",
    "vllm_dsa_block_scores": "vllm_dsa_block_scores",
    "sglang_int8_block_gemm": "sglang_int8_block_gemm",
    "sglang_ep_gather": "sglang_ep_gather",
    "sglang_ep_scatter": "sglang_ep_scatter",
    "sglang_mla_tensor_quant": "sglang_fp8_mla_scaled_mm",
    "sglang_scaled_mm": "sglang_fp8_mla_scaled_mm",
    "vllm_step5_indexer_scores": "vllm_step5_indexer_scores",
    "vllm_step5_swa_decode": "vllm_step5_swa_decode",
    "vllm_diffusion_row_stats": "vllm_diffusion_row_stats",
    "vllm_quant_embedding": "vllm_quant_embedding",
    "vllm_moe_bitmatrix": "vllm_moe_bitmatrix",
    "vllm_expert_count": "vllm_expert_count",
    "vllm_moe_mul_sum": "vllm_moe_mul_sum",
    "sglang_lightning_inter": "sglang_lightning_inter",
    "vllm_unified_attention": "vllm_unified_attention",
    "vllm_rel_proj": "vllm_rel_proj",
    "vllm_moe_lora": "vllm_moe_lora",
    "vllm_gdn_post_conv": "vllm_gdn_post_conv",
    "vllm_qk_norm_rope_gate": "vllm_qk_norm_rope_gate",
    "vllm_gdn_initial_states": "vllm_gdn_initial_states",
    "vllm_routing_topk": "vllm_routing_topk",
    "vllm_kv_offload_gather": "vllm_kv_offload_gather",
    "vllm_hadamard_mma": "vllm_hadamard_mma",
    "vllm_paged_sconv": "vllm_paged_sconv",
    "vllm_greedy_argmax": "vllm_greedy_argmax",
    "vllm_bi_matmul": "vllm_bi_matmul",
    "vllm_block_topk": "vllm_block_topk",
    "vllm_markov_noise": "vllm_markov_noise",
    "vllm_gelu_sparse": "vllm_gelu_sparse",
    "vllm_mrope_positions": "vllm_mrope_positions",
    "vllm_prefix_prefill": "vllm_prefix_prefill",
    "vllm_gdn_gated_decode": "vllm_gdn_gated_decode",
    "vllm_lightning_decode": "vllm_lightning_decode",
    "vllm_batched_moe": "vllm_batched_moe",
    "sglang_kda_kkt": "sglang_kda_kkt",
    "sglang_ssd_chunk_state": "sglang_ssd_chunk_state",
    "sglang_lora_expand": "sglang_lora_expand",
    "sglang_ds_sparse_decode": "sglang_ds_sparse_decode",
    "sglang_mla_decode_rope": "sglang_mla_decode_rope",
    "sglang_ds_dense_decode": "sglang_ds_dense_decode",
    "sglang_kda_chunk_o": "sglang_kda_chunk_o",
    "sglang_kda_wy": "sglang_kda_wy",
    "sglang_lora_shrink": "sglang_lora_shrink",
    "sglang_seg_la_mtp": "sglang_seg_la_mtp",
    "sglang_gdn_chunk_o": "sglang_gdn_chunk_o",
    "sglang_extend_attention": "sglang_extend_attention",
    "sglang_extend_unified": "sglang_extend_unified",
    "sglang_moe_wna16": "sglang_moe_wna16",
    "sglang_conv1d_update": "sglang_conv1d_update",
    "sglang_ssd_chunk_cumsum": "sglang_ssd_chunk_cumsum",
    "sglang_ssd_varlen_states": "sglang_ssd_varlen_states",
    "sglang_mla_kv_store": "sglang_mla_kv_store",
    "sglang_kda_gate": "sglang_kda_gate",
    "sglang_awq_dequant": "sglang_awq_dequant",
    "sglang_fp8_kv_store": "sglang_fp8_kv_store",
    "sglang_kda_cumsum": "sglang_kda_cumsum",
    "sglang_qkv_lora_b": "sglang_qkv_lora_b",
    "sglang_rms_norm_gated": "sglang_rms_norm_gated",
    "sglang_dit_rotary": "sglang_dit_rotary",
    "vllm_vit_rotary": "vllm_vit_rotary",
    "vllm_m3_sparse_prefill": "vllm_m3_sparse_prefill",
    "vllm_kimi_attn_res": "vllm_kimi_attn_res",
    "flaggems_moe_align": "flaggems_moe_align",
    "vllm_m3_sparse_decode": "vllm_m3_sparse_decode",
    "vllm_kda_state_commit": "vllm_kda_state_commit",
    "sglang_gdn_verify": "sglang_gdn_verify",
    "liger_moe_up_proj_wgrad": None,
    "vllm_nvfp4_moe": "vllm_nvfp4_moe",
    "flaggems_avg_pool2d_backward": "flaggems_avg_pool2d_backward",
    "sglang_nsa_act_quant": "sglang_nsa_act_quant",
    "vllm_replayssm_decode": "vllm_replayssm_decode",
    "sglang_tma_align_scale": "sglang_tma_align_scale",
    "vllm_silu_mul_colmajor_quant": "vllm_silu_mul_colmajor_quant",
    "vllm_dsv4_inv_rope_quant": "vllm_dsv4_inv_rope_quant",
    "liger_moe_down_proj_bwd": None,
    "liger_moe_up_proj_dgrad": None,
    "liger_moe_combine": None,
    "flaggems_conv2d_wgrad": "flaggems_conv2d_wgrad",
    "flaggems_flash_mla_sparse": "flaggems_flash_mla_sparse",
    "sglang_kda_decode": "sglang_kda_decode",
    "sglang_moe_act_mul": "sglang_moe_act_mul",
    "sglang_seg_la_decode": "sglang_seg_la_decode",
    "vllm_w4a16_gemm": "vllm_w4a16_gemm",
    "vllm_vit_prefill_attn": "vllm_vit_prefill_attn",
    "flaggems_bmm": "flaggems_bmm",
    "sglang_sgemm_lora_a": "sglang_sgemm_lora_a",
    "flaggems_mhc_sinkhorn_bwd": "flaggems_mhc_sinkhorn_bwd",
    "vllm_int8_scaled_mm": "vllm_int8_scaled_mm",
    "cce_lse_forward": "cce_lse_forward",
    "torchao_jagged_fp8_colwise": "torchao_jagged_fp8_colwise",
    "gemlite_gemv_revsplitk": "gemlite_gemv_revsplitk",
    "unsloth_fp8_small_m": "unsloth_fp8_small_m",
    "lmdeploy_fused_lora": "lmdeploy_fused_lora",
    "flashinfer_persistent_gemm": "flashinfer_persistent_gemm",
    "xformers_scaled_index_add": "xformers_scaled_index_add",
    "fla_causal_conv1d_bwd": "fla_causal_conv1d_bwd",
    "te_grouped_dbias_dscales": "te_grouped_dbias_dscales",
}


def _fetch_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_fetch_third_party", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_fetch_third_party"] = mod
    spec.loader.exec_module(mod)
    return mod


def _present(source: str | None) -> bool:
    if source is None:
        return True
    sys.path.insert(0, str(REPO / "benchmarks"))
    from foreign import _common

    return not _common.missing_sources(source)


def _liger() -> bool:
    return importlib.util.find_spec("liger_kernel") is not None


def test_every_foreign_kernel_is_listed() -> None:
    found = {p.parent.name for p in FOREIGN.glob("*/spec.py")}
    assert found == set(NEEDS)


def test_pins_and_wrapper_agree_on_where_files_land() -> None:
    fetch = _fetch_module()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from foreign import _common

    assert {s.name: s.dest for s in fetch.SOURCES} == _common.SOURCE_FILES
    for s in fetch.SOURCES:
        assert len(s.sha256) == 64 and s.license and len(s.ref) >= 6, s.name


UPSTREAM = '''"""A tutorial that runs a benchmark at import."""
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.autotune(configs=[], key=["N"])
@triton.jit
def kern(X, N, BLOCK: tl.constexpr):
    helper(X)


@triton.jit
def helper(x):
    return x


benchmark.run(show_plots=True)
'''


def test_extract_keeps_the_named_jit_functions_without_autotune(tmp_path: Path) -> None:
    fetch = _fetch_module()
    body = fetch.extract_functions(UPSTREAM, ("kern", "helper"), "x.py")
    assert body.startswith("@triton.jit\ndef kern(X, N, BLOCK: tl.constexpr):")
    assert "autotune" not in body and "benchmark" not in body and "DEVICE" not in body
    with pytest.raises(fetch.FetchError, match="no top-level function"):
        fetch.extract_functions(UPSTREAM, ("missing",), "x.py")


def test_fetch_from_files_verifies_the_hash_and_writes_the_manifest(tmp_path: Path) -> None:
    fetch = _fetch_module()
    src_root = tmp_path / "copies"
    upstream = src_root / "someone+repo" / "tutorials" / "t.py"
    upstream.parent.mkdir(parents=True)
    upstream.write_text(UPSTREAM)
    body = fetch.extract_functions(UPSTREAM, ("kern",), "t.py")
    good = fetch.Source(
        name="t",
        repo="someone/repo",
        ref="0" * 40,
        path="tutorials/t.py",
        license="MIT",
        dest="t/t.py",
        sha256=fetch.sha256(body),
        mode="extract",
        functions=("kern",),
    )
    dest = tmp_path / "tp"
    args = fetch.argparse.Namespace(
        from_files=str(src_root), from_mirror=None, from_pypi=False, dest=str(dest), no_verify=False
    )
    entry = fetch.fetch_one(good, args, {})
    assert entry["verified"] == "yes" and (dest / "t" / "t.py").is_file()
    text = (dest / "t" / "t.py").read_text()
    assert text.startswith("# Third-party code, NOT part of kbopt") and "never commit" in text
    bad = fetch.Source(**{**good.__dict__, "sha256": "f" * 64})
    with pytest.raises(fetch.FetchError, match="does not match the pin"):
        fetch.fetch_one(bad, args, {})


def test_a_wheel_member_with_crlf_ends_hashes_as_git_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git show and a file read as text give "\n" ends; a wheel member keeps its bytes, and
    # FlagGems' index_add.py is committed with "\r\n": the pin must verify both ways
    import zipfile

    fetch = _fetch_module()
    wheel = tmp_path / "dist" / "pkg-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/t.py", UPSTREAM.replace("\n", "\r\n"))
    source = fetch.Source(
        name="t",
        repo="someone/repo",
        ref="v1.0",
        path="src/pkg/t.py",
        license="MIT",
        dest="t/t.py",
        sha256=fetch.sha256(UPSTREAM),
        pypi=("pkg", "1.0", "pkg/t.py"),
    )
    text, how = fetch.from_pypi(source, {"pypi:pkg==1.0": wheel.parent})
    assert text == UPSTREAM and how == "pypi pkg==1.0"
    assert fetch.universal_newlines("a\r\nb\rc\n") == "a\nb\nc\n"


def test_fetch_cli_rejects_unknown_sources(capsys: pytest.CaptureFixture[str]) -> None:
    fetch = _fetch_module()
    assert fetch.main(["nonesuch"]) == 2
    assert "known: sglang" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n, s in NEEDS.items() if s is not None])
def test_check_without_third_party_says_what_is_missing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KBOPT_THIRD_PARTY", str(tmp_path / "empty"))
    clear_cache()
    spec_path = FOREIGN / name / "spec.py"
    rc = cli_main(["--root", str(REPO), "kernel", "check", str(spec_path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{spec_path}:1: third-party kernel {NEEDS[name]!r} is missing" in err
    assert f"python scripts/fetch_third_party.py {NEEDS[name]}" in err
    assert "Traceback" not in err
    clear_cache()


def _spec_or_skip(name: str):  # type: ignore[no-untyped-def]
    source = NEEDS[name]
    if not _present(source):
        pytest.skip(
            f"third_party/ lacks {source!r} (never committed; `python scripts/"
            f"fetch_third_party.py {source}` fetches it, which CI cannot do without GitHub)"
        )
    if name.startswith("liger") and not _liger():
        pytest.skip("liger-kernel is not installed (pip install 'liger-kernel==0.8.5')")
    clear_cache()
    try:
        return load_spec(str(FOREIGN / name / "spec.py"), REPO)
    except ProblemList as exc:  # a second upstream file the spec also loads is absent
        if "third-party kernel" in str(exc) and "is missing" in str(exc):
            pytest.skip(str(exc).split(": ", 1)[-1].split(" (never committed")[0])
        raise


@pytest.mark.parametrize("name", list(NEEDS))
def test_spec_checks_and_versions_expose_their_knobs(name: str) -> None:
    spec = _spec_or_skip(name)
    assert spec.trials and all(t.why for t in spec.trials)
    assert spec.dtype in spec.tolerances
    for version, path in spec.version_files().items():
        knobs = spec.knobs_for(version)
        # every declared knob is a literal in the version file: a designer can copy and edit it
        values = read_knob_values(path, [k.name for k in knobs])
        assert set(values) == {k.name for k in knobs}, version
        assert all(k.role for k in knobs), version
        spec.check_knobs(version, values)
    assert spec.contexts, "the catalog contexts this kernel is an instance of"


def test_block_topk_scores_are_distinct_so_the_top_k_is_unique() -> None:
    # ids are checked exactly: a tie near the top-k boundary lets the kernel and torch.topk
    # keep different ids, which the 32K trial's 32,768 rows of N(0, 1) draws did on a GPU
    spec = _spec_or_skip("vllm_block_topk")
    torch = pytest.importorskip("torch")
    dims = {"heads": 2, "reqs": 3, "q_len": 40, "prefix": 4000, "topk": 16}
    score = spec.make_inputs(dims, dtype=torch.float32, device="cpu", seed=3)[0]
    ranks = torch.arange(score.shape[-1], dtype=score.dtype).expand_as(score)
    assert torch.equal(score.sort(dim=-1).values, ranks)


def test_flaggems_sdpa_default_drops_stages_that_do_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On an H100 the tuned list's first configuration (4 stages) needs 384 KiB of shared
    # memory at a 128-wide head: FlagGems' tuner drops it and takes the next kept one; a
    # stage count set on purpose fails as it is
    _spec_or_skip("flaggems_sdpa_masked_fwd")
    torch = pytest.importorskip("torch")
    errors = pytest.importorskip("triton.runtime.errors")
    from foreign import _common
    from foreign.flaggems_sdpa_masked_fwd import launcher

    tried = []

    class Kernel:
        def __getitem__(self, grid):
            def launch(*args, num_stages, **kw):
                tried.append(num_stages)
                if num_stages > 2:
                    raise errors.OutOfResources(393216, 232448, "shared memory")
                return None

            return launch

    monkeypatch.setattr(_common, "load_source", lambda name: type("M", (), {"_attn_fwd": Kernel()}))
    monkeypatch.setattr(_common, "record", lambda info, handle, **kw: info.update(kw))
    q = torch.zeros(1, 2, 8, 128)
    k = v = torch.zeros(1, 1, 8, 128)
    mask = torch.zeros(1, 2, 8, 8)
    launcher.prepare(launcher.SdpaMaskedFwdConfig(), q, k, v, mask)()
    assert tried == [4, 3, 2] and launcher.LAST_INFO["num_stages"] == 2
    tried.clear()
    with pytest.raises(errors.OutOfResources):
        launcher.prepare(launcher.SdpaMaskedFwdConfig(num_stages=3), q, k, v, mask)()
    assert tried == [3]


def test_sglang_v1_is_sglang_defaults() -> None:
    spec = _spec_or_skip("sglang_mla_decode")
    assert spec.knob_values("triton_v1") == {
        "block_n": 32,
        "block_h": 16,
        "num_kv_splits": 8,
        "num_stages": 2,
        "num_warps": 4,
    }
    roles = {k.name: k.role for k in spec.knobs["triton"]}
    assert roles == {
        "block_n": "kv_tile",
        "block_h": "heads_per_program",
        "num_kv_splits": "splits",
        "num_stages": "pipeline_stages",
        "num_warps": "warps",
    }


# One interpreter run: every version and baseline of a spec (optionally with changed knob
# values of one version) at tiny dims, fp32 and fp16; prints {label: [rel_err, tolerance]}.
RUNNER = r"""
import dataclasses, json, sys, torch
from kbopt.bench.harness import rel_error
from kbopt.kernel import load_spec
spec = load_spec(sys.argv[1])
dims = json.loads(sys.argv[2])
variants = json.loads(sys.argv[3])
versions, errors = spec.load_versions()
assert not errors, errors
out = {}
def run(label, version, inputs, ref, dtype):
    # copies: some kernels write into their inputs (Liger's cross-entropy, RoPE)
    inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    got = version.prepare(*inputs)() if version.prepare else version.fn(*inputs)
    err = rel_error(got, ref)  # several outputs: the worst
    out[label] = [err, spec.tolerance(str(dtype).removeprefix("torch."))]
    return got
for dtype in (torch.float32, torch.float16):
    make = spec.make_check_inputs or spec.make_inputs
    inputs = make(dims, dtype=dtype, device="cpu", seed=3)
    ref = spec.reference(*inputs)
    got = {}
    for name, version in versions.items():
        got[name] = run(f"{name}/{dtype}", version, inputs, ref, dtype)
    for vname, knobs in variants.items():
        mod = sys.modules[spec.module_name(vname)]
        base = mod.CONFIG
        mod.CONFIG = dataclasses.replace(base, **knobs)
        run(f"{vname}{knobs}/{dtype}", versions[vname], inputs, ref, dtype)
        mod.CONFIG = base
    if "sglang" in got:
        out[f"v1_equals_sglang/{dtype}"] = [float((got["triton_v1"] != got["sglang"]).sum()), 0.5]
print("RESULT " + json.dumps(out))
"""

CASES = {
    "sglang_mla_decode": ({"b": 2, "s": 2, "t": 48}, {"triton_v1": {"block_h": 32, "block_n": 16, "num_kv_splits": 3}}),
    "triton_matmul": ({"m": 40, "n": 72, "k": 96}, {"triton_v1": {"block_size_m": 16, "block_size_n": 32, "block_size_k": 32, "group_size_m": 2}}),
    "triton_softmax": ({"rows": 7, "cols": 100}, {}),
    "triton_layernorm": ({"rows": 5, "hidden": 300}, {"triton_v1": {"block_size": 128, "num_warps": 2}}),
    "liger_rmsnorm": ({"rows": 20, "hidden": 96}, {"triton_v1": {"block_row": 8}}),
    "liger_swiglu": ({"rows": 5, "hidden": 300}, {"triton_v1": {"block_size": 128}}),
    "torch_attention_decode": ({"b": 2, "h": 3, "t": 50}, {}),
    "liger_geglu": ({"rows": 5, "hidden": 300}, {"triton_v1": {"num_warps": 2}}),
    "liger_layernorm": ({"rows": 5, "hidden": 300}, {"triton_v1": {"num_warps": 2}}),
    "liger_cross_entropy": ({"rows": 6, "vocab": 300}, {"triton_v1": {"block_size": 128}}),
    "liger_rope": ({"b": 2, "s": 3, "hq": 4, "hk": 2}, {"triton_v1": {"num_warps": 2}}),
    "liger_group_norm": ({"n": 2, "c": 6, "hw": 50, "groups": 3}, {"triton_v1": {"block_size": 32}}),
    "torch_sdpa_decode": ({"b": 2, "h": 3, "t": 50}, {}),
    "torch_cross_entropy": ({"rows": 6, "vocab": 300}, {}),
    "liger_jsd": ({"rows": 4, "vocab": 300}, {"triton_v1": {"block_size": 128, "num_warps": 2}}),
    # v1: Liger's own autotuner (18 configurations); the variant: an autotuner over 2
    "liger_dyt": ({"rows": 3, "hidden": 300}, {"triton_v1": {"block_n": 256, "num_warps": 2}}),
    "liger_fused_add_rms_norm": ({"rows": 5, "hidden": 300}, {"triton_v1": {"num_warps": 2}}),
    "liger_sparsemax": ({"rows": 5, "cols": 300}, {"triton_v1": {"num_warps": 2}}),
    "liger_kl_div": ({"rows": 4, "vocab": 300}, {"triton_v1": {"block_size": 128, "num_warps": 2}}),
    "liger_poly_norm": ({"rows": 5, "width": 300}, {"triton_v1": {"num_warps": 2}}),
    # the variant: 16-pair steps, so the head's 64 pairs take the unrolled loop's four steps
    "liger_llama4_rope": ({"b": 2, "s": 3, "hq": 4, "hk": 2}, {"triton_v1": {"block_size": 16, "num_warps": 2}}),
    "liger_relu_squared": ({"rows": 5, "width": 300}, {"triton_v1": {"num_warps": 2}}),
    "liger_tvd": ({"rows": 4, "vocab": 300}, {"triton_v1": {"block_size": 128, "num_warps": 2}}),
    # 37 tokens, 72 wide: v1's 128 x 128 tile and the variant's 16 x 32 tiles both masked
    "liger_embedding": ({"tokens": 37, "vocab": 50, "dim": 72}, {"triton_v1": {"block_m": 16, "block_n": 32, "num_warps": 2}}),
    # check inputs end completions early, so masked tokens are covered
    "liger_grpo_loss": ({"b": 2, "length": 5, "vocab": 300}, {"triton_v1": {"block_n": 128, "num_warps": 2}}),
    # tl.dot, fp32 and fp16 under the interpreter; Liger's routing kernels take most of the ~15 s
    "liger_moe_up_proj": ({"tokens": 12, "hidden": 32, "inter": 24, "experts": 3, "k": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 2}}),
    # 12 tokens to 3 experts top-2 (24 sorted rows, ~8 per expert), hidden 36, inter 40: v1's 64-row tiles (one per expert), 128-column and 64-deep tiles (one masked step); the variant: 16-row tiles, 16 x 16 weight tiles (3 column tiles and 3 reduction steps, the last of each masked), 2 warps, 1 stage
    "liger_moe_down_proj": ({"tokens": 12, "hidden": 36, "inter": 40, "experts": 3, "k": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 blocks: the depth loop unrolled to 4, its last step guarded off
    "liger_attn_res": ({"blocks": 3, "tokens": 5, "hidden": 300}, {"triton_v1": {"num_warps": 2}}),
    # 36 patches on a 32-wide grid: height and width positions differ from the temporal one
    "liger_qwen2vl_mrope": ({"b": 1, "s": 36, "hq": 3, "hk": 2}, {"triton_v1": {"num_warps": 2}}),
    # int8 tl.dot under the interpreter; k = 4 * 64 for v1's block_k, exact int32 results
    "liger_mm_int8int2": ({"m": 5, "k": 256, "n": 24}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 32, "group_m": 2, "num_warps": 2}}),
    # 2 sequences of 20 tokens, width 96, intermediate 40: v1's 32 x 128 x 64 boxes (the row, column and last width tiles padded by the TMA); the variant: 16 x 16 x 32 tiles over 2 x 3 tiles per sequence, swizzled in groups of 2, 2 warps, 1 stage
    "liger_mlp_gate_up": ({"batch": 2, "seq": 20, "dim": 96, "hidden": 40}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 32, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 20 tokens: v1's 32-wide tiles masked, the variant's 16-wide tiles two per axis
    "liger_neighborhood_attention": ({"b": 1, "h": 2, "s": 20, "d": 16}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "softmax_warps": 2}}),
    # tl.dot, fp32 and fp16; 20 tokens: v1's 64-row tiles (SGLang's off CUDA) masked, the variant's 16-row tiles cross the causal diagonal
    "sglang_prefill_attention": ({"b": 2, "s": 20, "hq": 4, "hk": 2, "d": 16}, {"triton_v1": {"block_m": 16, "block_n": 16, "num_warps": 2}}),
    # a 40-wide head padded to 64; the first token's prefix is empty (LSE +inf)
    "sglang_merge_state": ({"tokens": 5, "heads": 3, "head_size": 40}, {"triton_v1": {"num_warps": 2}}),
    # tl.dot; 384 stream values: v1's 256-deep steps masked, the variant's 64-deep six steps
    "liger_mhc_coeffs": ({"tokens": 20, "hc": 4, "c": 96}, {"triton_v1": {"block_n": 16, "block_k": 64, "block_m": 16, "num_warps": 2, "sinkhorn_warps": 2}}),
    # 100 columns: v1's 64-wide tiles (Liger's below 1024 columns) and the variant's 32-wide both masked
    "liger_mhc_post_res": ({"tokens": 5, "hc": 4, "c": 100}, {"triton_v1": {"block_n": 4, "block_c": 32, "num_warps": 2, "num_stages": 1}}),
    # 300 columns in v1's 512-column block, masked; libdevice's round replaced on the CPU only
    "sglang_int8_quant": ({"rows": 5, "hidden": 300}, {"triton_v1": {"num_warps": 2}}),
    # tl.dot; 40 tokens in 32-token chunks (the last one partial), two packed sequences, two groups
    "sglang_ssd_bmm": ({"batch": 1, "seqlen": 40, "ngroups": 2, "dstate": 24, "chunk": 32, "seqs": 2}, {"triton_v1": {"block_m": 32, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # two value heads per q/k head, 5 tokens; a 48-wide V: v1's 32-column slices (one masked), the variant's 16
    "sglang_gdn_recurrent": ({"batch": 2, "seq": 5, "heads": 2, "vheads": 4, "dk": 16, "dv": 48}, {"triton_v1": {"block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # state size 24 (v1: 16-row tiles of a 20-row head, masked, the state padded to 32), two heads per group; the state in place
    "sglang_mamba_state_update": ({"batch": 2, "nheads": 4, "dim": 20, "dstate": 24, "ngroups": 2}, {"triton_v1": {"block_m": 4, "num_warps": 2}}),
    # tl.dot; 5 tokens over 4 experts (above E: 64 x 64 x 32 tiles, a 48-deep hidden size masked), the variant's 16-wide tiles in groups of 2; routing sorted in torch
    "sglang_fused_moe": ({"tokens": 5, "hidden": 48, "inter": 20, "experts": 4, "topk": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 3 rows of 384 in 128-wide groups (9 programs); e4m3 out; the interpreter's fp32 -> e4m3 cast replaced by torch's on the CPU only
    "sglang_fp8_group_quant": ({"rows": 3, "hidden": 384, "group": 128}, {"triton_v1": {"num_warps": 2}}),
    # fp8 tl.dot under the interpreter (fp16, fp32 out); k = 320: three scale groups, the last step masked; n = 160: a partial weight block
    "sglang_fp8_block_gemm": ({"m": 5, "n": 160, "k": 320}, {"triton_v1": {"block_m": 16, "block_n": 32, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 3 packed 20-token sequences, 16-token chunks (the second of each cut at 4), 3 heads: fp32 gates whatever the dtype
    "sglang_gdn_cumsum": ({"seqs": 3, "seqlen": 20, "heads": 3, "chunk": 16}, {"triton_v1": {"num_warps": 2}}),
    # tl.dot; 3 packed 20-token sequences in 16-token chunks (the second of each cut at 4), two value heads per key head; a 48-deep key: v1's 64-deep step masked, the variant's three 16-deep steps
    "sglang_gdn_kkt": ({"seqs": 3, "seqlen": 20, "heads": 4, "kheads": 2, "dk": 48, "chunk": 16}, {"triton_v1": {"block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # fp32 tl.dot ("ieee"); 2 packed 100-token sequences: a whole 64-token chunk and one cut at 36 (its last 16-row block at 4)
    "sglang_gdn_solve_tril": ({"seqs": 2, "seqlen": 100, "heads": 2, "chunk": 64}, {"triton_v1": {"diag_warps": 2, "diag_stages": 1, "merge_warps": 2}}),
    # 2500 columns: v1's 2048-wide slices (the second masked); the variant's 2-token, 256-wide tiles (the last token row masked), a pipelined top-k loop
    "sglang_moe_sum_reduce": ({"tokens": 5, "topk": 3, "hidden": 2500}, {"triton_v1": {"block_m": 2, "block_dim": 256, "num_stages": 2, "num_warps": 2}}),
    # 700 slots per request: two 512-slot steps, the second masked; pool rows 1000 wide
    "sglang_kv_indices": ({"batch": 3, "kv_len": 700, "max_context": 1000}, {"triton_v1": {"num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 40 tokens (below 128: v1's 256-deep steps split 64 ways, a 96-wide hidden size masked and most splits adding zeros), 3 slices through the pointer table, 3 adapters; the variant: 16-token tiles, 32-deep steps, no split (plain stores)
    "vllm_lora_shrink": ({"tokens": 40, "hidden": 96, "rank": 16, "loras": 3, "slices": 3}, {"triton_v1": {"block_m": 16, "block_k": 32, "split_k": 1, "num_warps": 2, "num_stages": 1}}),
    # tl.dot; the fp32 buffer cast to fp16 (or fp32 weights, no cast), 37 tokens over 3 adapters (13, 12, 12; one empty slot), rank 24, a QKV of 40, 24 and 24 columns (per-slice int64 stride and width tables, uint64 pointers): v1 is vLLM's Hopper launch, one 64-token tile per adapter (51 or 52 rows masked), one 64-column tile per slice (24 or 40 live, the rest wrapped and masked), one masked 32-deep step, 4 warps, 1 stage with the cast, 2 without; the variant: 8-token tiles (2 an adapter, the second partial), 16-column tiles (3, the last 8 live; the k and v slices' third exiting), two 16-deep steps (the second masked), 2 warps, 2 stages
    "vllm_lora_expand": ({"tokens": 37, "loras": 3, "rank": 24, "slices": 3, "first_out": 40, "other_out": 24}, {"triton_v1": {"block_m": 8, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 2}}),
    # tl.dot with int4 unpacking, fp32 and fp16 (fp16 accumulation); k = 512: v1's 8 splits of 32-deep steps take two strides each; n = 80: a partial 32-column tile; the variant: 16 x 16 tiles, 64-deep steps split 2 ways
    "vllm_awq_gemm": ({"tokens": 5, "k": 512, "n": 80, "group": 128}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 64, "split_k": 2, "num_warps": 2, "num_stages": 1}}),
    # 2 sequences of 20 tokens crossing 16-token blocks; 3 kv heads of 40: v1's 128-wide tile masked, the variant's four 32-wide tiles (the last masked); random caches, so a stray write shows
    "vllm_reshape_and_cache": ({"tokens": 40, "seqs": 2, "heads": 3, "head_size": 40, "block_size": 16}, {"triton_v1": {"tile_size": 32, "num_warps": 2, "num_stages": 1}}),
    # 3 packed 21-token sequences (the middle one continuing a cached state), 300 channels: v1's 8-token chunks (the last cut at 5) and 256-channel tiles (the second masked); the variant's 16-token chunks, 128-channel tiles
    "vllm_causal_conv1d": ({"seqs": 3, "seqlen": 21, "dim": 300, "width": 4}, {"triton_v1": {"block_m": 16, "block_n": 128, "num_warps": 2, "num_stages": 1}}),
    # 9 requests in a 20-slot pool (2 greedy), 3000 columns: v1's three 1024-wide blocks (the last masked), the variant's twelve 256-wide; the hash's noise recomputed exactly, ids compared exactly
    "vllm_gumbel_sample": ({"tokens": 9, "vocab": 3000, "slots": 20}, {"triton_v1": {"block_size": 256, "num_warps": 2, "num_stages": 1, "combine_warps": 1}}),
    # 3 requests of 3 rows (the later rows counting 1 and 2 earlier drafts), 3000 columns: v1's 8192-wide block masked, the variant's three 1024-wide (the last masked); fp32 logits whatever the dtype
    "vllm_penalties": ({"reqs": 3, "qlen": 3, "vocab": 3000}, {"triton_v1": {"block_size": 1024, "num_warps": 2, "num_stages": 1}}),
    # 21 head vectors of 40 (padded to 64): v1's 32-row tile masked, the variant's three 8-row tiles (the last masked)
    "vllm_l2norm": ({"tokens": 7, "heads": 3, "head_dim": 40}, {"triton_v1": {"mblock": 8, "num_warps": 2, "num_stages": 1}}),
    # fp32 tl.dot (inputs cast up, so fp16 is exact under the interpreter); 300 tokens: a whole 256-token block and one cut at 44, two sequences of two heads with their own decay; v1's 32-query sub-blocks, the variant's 64
    "vllm_lightning_attn_diag": ({"batch": 2, "heads": 2, "seqlen": 300, "d": 16, "e": 32}, {"triton_v1": {"cblock": 64, "num_warps": 2, "num_stages": 1}}),
    # fp32 tl.dot (tf32 off) and fp16; 2 images of 7 x 9: 126 positions, v1's 32-position tiles (the last masked) cross an image boundary, the padded border masked; 40 input channels: two 32-deep steps per tap (the second masked); 48 output channels (the second 32-tile masked); the variant: 64 x 16 x 16 tiles, 2 warps, 1 stage
    "flaggems_conv2d": ({"batch": 2, "channels_in": 40, "channels_out": 48, "height": 7, "width": 9, "filter_size": 3}, {"triton_v1": {"block_ni_ho_wo": 64, "block_co": 16, "block_ci": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 rows of 2500 columns, k = 5: v1's 1024-column chunks (the third cut at 452, masked with the dtype's minimum), 15 candidates sorted in a 16-wide bitonic merge; the variant: 256-column chunks (10 per row, 50 candidates in a 64-wide merge), 1 and 2 warps
    "flaggems_topk": ({"rows": 3, "columns": 2500, "k": 5}, {"triton_v1": {"chunk_size": 256, "num_warps": 1, "merge_warps": 2}}),
    # 2 images of 5 channels, 13 x 11 -> 26 x 22: 572 pixels, so v1's 1024-pixel tile wraps (the kernel has no mask: lanes past the plane compute a row modulo its height and write the same value again); the variant: 128-pixel tiles (the fifth wrapping), 3 planes per program over 10 (4 programs walking 3, 3, 2 and 2 planes), 2 warps, 1 stage
    "flaggems_upsample_nearest2d": ({"batch": 2, "channels": 5, "height": 13, "width": 11, "scale": 2}, {"triton_v1": {"block_size": 128, "planes_per_program": 3, "num_warps": 2, "num_stages": 1}}),
    # 2 images of 3 channels, 38 x 45 pooled 3 x 3 -> 12 x 15 (the last input rows and columns dropped): v1's 16 x 16 tile masked on both sides; the variant: 8 x 4 tiles (2 x 4 per plane, the last of each masked), 2 warps, 1 stage
    "flaggems_avg_pool2d": ({"batch": 2, "channels": 3, "height": 38, "width": 45, "pool": 3}, {"triton_v1": {"block_h": 8, "block_w": 4, "num_warps": 2, "num_stages": 1}}),
    # fp32 keys whatever the dtype, checked exactly (values and int64 columns, ties in column order); 3 rows of 5000: v1's 2048-column sweep tiles (3 per row, the last cut at 904) look back over their predecessors' status words, one 8192-column histogram program per row; the variant: 2 bits per pass (16 passes of 4 bins), 512-column histogram steps 2 per program (5 programs per row) of 4 bins, 1024-column sweeps (5 per row) of 1 bin each, 2 warps
    "flaggems_radix_sort": ({"rows": 3, "columns": 5000}, {"triton_v1": {"bits_per_pass": 2, "hist_tile_n": 512, "hist_tiles_per_program": 2, "hist_tile_r": 4, "sweep_tile_n": 1024, "sweep_tile_r": 1, "num_warps": 2, "sweep_warps": 2}}),
    # 3 images of 5 channels, 8 x 6: v1's heuristic 4 x 64 tile (one step, masked on both sides); the variant: 2 x 16 tiles (two image steps, the second half masked; three full pixel steps), 2 warps, 1 stage; running statistics updated in place and checked
    "flaggems_batch_norm": ({"batch": 3, "channels": 5, "height": 8, "width": 6}, {"triton_v1": {"block_m": 2, "block_n": 16, "num_warps": 2, "num_stages": 1}}),
    # 37 tokens over a 50-row table (Zipf-drawn, so rows repeat and take several atomic adds), hidden 300: v1's 128-column programs (the third masked); the variant: 64 columns, 2 warps
    "flaggems_embedding_backward": ({"tokens": 37, "vocab": 50, "hidden": 300}, {"triton_v1": {"block_d": 64, "num_warps": 2}}),
    # 37 rows of 256: v1's table (16 rows per program, the third program masked, 1 warp), 8 butterfly stages against the explicit fp64 matrix; the variant: 4 rows per program, 2 warps
    "flaggems_hadamard": ({"tokens": 37, "dim": 256}, {"triton_v1": {"rows_per_program": 4, "num_warps": 2}}),
    # 2 images of 3 channels, 37 x 30 pooled 3 x 3 stride 2 padding 1 -> 19 x 15 (post-ReLU, so windows tie at 0.0 and the first must win), values and int64 indices exact: v1's 16 x 16 tile masked on both sides; the variant: 8 x 4 tiles, 2 warps, 1 stage
    "flaggems_max_pool2d": ({"batch": 2, "channels": 3, "height": 37, "width": 30}, {"triton_v1": {"block_h": 8, "block_w": 4, "num_warps": 2, "num_stages": 1}}),
    # 7 rows of 900 (6300 elements, above the single-program path), 4 rows kept, exact: v1's 4096-element blocks (2 programs, the second peeled and masked); the variant: 256-element blocks, 5 programs of 5 blocks each, 2 warps
    "flaggems_masked_select": ({"rows": 7, "hidden": 900, "live": 4}, {"triton_v1": {"block_size": 256, "num_warps": 2, "programs": 5}}),
    # 1 image of 2 channels, 29 x 41 shrunk to 13 x 19 (9 x 9 taps) against torch's fp64 resize: v1's 512 x 2 tile (one program column, its lanes wrapping onto the row); the variant: 8 x 4 tiles (3 x 4 programs, the last wrapping), 2 warps, 1 stage
    "flaggems_upsample_bicubic2d_aa": ({"batch": 1, "channels": 2, "in_h": 29, "in_w": 41, "out_h": 13, "out_w": 19}, {"triton_v1": {"block_x": 8, "block_y": 4, "num_warps": 2, "num_stages": 1}}),
    # fp32 whatever the dtype; 3 rows of 20000 (above the one-program 16384): v1's 4096-column tiles, 5 programs per row of one tile (the last masked); the variant: 1024-column tiles, 4 programs of 5 tiles each, 2 warps
    "flaggems_cumsum": ({"rows": 3, "vocab": 20000}, {"triton_v1": {"tile_size": 1024, "num_warps": 2, "programs_per_row": 4}}),
    # 37 tokens x top-4 over 20 experts (148 pairs into 20 fp32 totals, atomics against fp64): v1's one 256-pair program, masked; the variant: 32-pair blocks (5 programs, the last masked), 2 warps
    "flaggems_scatter_add": ({"tokens": 37, "topk": 4, "experts": 20}, {"triton_v1": {"block_size": 32, "num_warps": 2}}),
    # 700 ids against 300 (9 search rounds, a quarter found), exact: v1's 512-id tiles (2 programs, the second masked); the variant: 64-id tiles, 3 programs looping over 4 tiles each (the last tiles past the end), 2 warps
    "flaggems_isin": ({"tokens": 700, "set_size": 300}, {"triton_v1": {"block_m": 64, "programs": 3, "num_warps": 2}}),
    # 37 tokens x top-4 over 20 experts (148 rows; some experts empty, hot ones loop), exact: v1's 32-id steps; the variant: 8-id steps, 2 warps
    "flaggems_repeat_interleave": ({"tokens": 37, "topk": 4, "experts": 20}, {"triton_v1": {"block_size": 8, "num_warps": 2}}),
    # 5 rows of 5000 (~89% zeros), exact: v1's 2048-column blocks (3 per row, the last masked), 1024-count combine; the variant: 512-column blocks (10 per row), a 4-count combine looping 3 times, 2 and 1 warps
    "flaggems_count_nonzero": ({"tokens": 5, "inter": 5000}, {"triton_v1": {"block_size": 512, "num_warps": 2, "combine_block": 4, "combine_warps": 1}}),
    # 6 rows of 700 logits, 300 sorted ids selected, exact: v1's heuristic (1 row, 64 columns: 5 programs per row, the last masked); the variant: 2 rows (dividing the 6, as the interpreter needs) and 128 columns, 2 warps
    "flaggems_index_select": ({"tokens": 6, "vocab": 700, "draft_vocab": 300}, {"triton_v1": {"block_m": 2, "block_n": 128, "num_warps": 2}}),
    # 3 rows of 40,000 (above 32,768: v1's 4096-column tiles, 9 whole and a masked tail, 16 warps), exact with 16-bit ties: the variant 1024-column tiles, 2 warps
    "flaggems_argmax": ({"rows": 3, "vocab": 40000}, {"triton_v1": {"tile_n": 1024, "num_warps": 2}}),
    # 2 clips of 1000 samples, 40-sample windows every 16 (61 windows, 2-3 adds per sample, a tail no window reaches): v1's 128-element blocks (39 programs, the last masked); the variant: 256, 2 warps
    "flaggems_unfold_backward": ({"batch": 2, "samples": 1000, "window": 40, "hop": 16}, {"triton_v1": {"block": 256, "num_warps": 2}}),
    # 12 groups of 100 (padded to 128 with the dtype's largest value), 3 quantiles (BLOCK_Q 4, one masked): v1's 4 warps; the variant: 2 warps
    "flaggems_quantile": ({"tokens": 4, "hidden": 300, "group": 100, "quantiles": 3}, {"triton_v1": {"num_warps": 2}}),
    # 6 rows of 2500: v1's one row per program in 1024-column steps (3, the last masked), 4 warps, 2 stages; the variant: 2 rows (dividing the 6, as the interpreter needs), 256-column steps, 2 warps, 1 stage
    "flaggems_var_mean": ({"rows": 6, "hidden": 2500}, {"triton_v1": {"block_m": 2, "block_n": 256, "num_warps": 2, "num_stages": 1}}),
    # a 37 x 50 block (1850 elements): v1's 1024-element programs (2, the last masked) adding into one scalar; the variant: 256 (8 programs), 2 warps
    "flaggems_soft_margin_loss": ({"images": 37, "texts": 50}, {"triton_v1": {"block_size": 256, "num_warps": 2}}),
    # 2 x 3 rows, 30 samples stretched to 52: v1's one masked 256-frame block per row; the variant: 16-frame blocks (4 per row, the last masked), 2 warps
    "flaggems_upsample_linear1d": ({"batch": 2, "channels": 3, "tokens": 30, "frames": 52}, {"triton_v1": {"block_size": 16, "num_warps": 2}}),
    # 2 tiles of 5 channels on an 8 x 8 grid, factor 2 (640 elements), exact: v1's one masked 1024-element program; the variant: 128 (5 programs), 2 warps
    "flaggems_pixel_unshuffle": ({"tiles": 2, "hidden": 5, "grid": 8, "factor": 2}, {"triton_v1": {"block_size": 128, "num_warps": 2}}),
    # 40 x 300 values (12,000 fp32 words, 6000 fp16): v1's 8192-word tiles in 256-word steps (2 or 1 programs, the last masked), one tree level; exact, as bytes: the variant 128-word steps, 2 warps, 1 stage, no .cg
    "sglang_tensor_hash": ({"patches": 40, "width": 300}, {"triton_v1": {"block_words": 128, "num_warps": 2, "num_stages": 1, "use_cg": False}}),
    # the last of 3 ranks' 7 rows of 1500 (10,500 elements) into a zeroed 21-row buffer, exact: v1's 8192-element programs (2, the last masked); the variant: 1024 (11), 2 warps
    "sglang_dp_memcpy": ({"ranks": 3, "tokens": 7, "hidden": 1500}, {"triton_v1": {"block_size": 1024, "num_warps": 2}}),
    # 3 rows of 1000 logits (std 10, a few past the cap of 30): v1's 1024-element programs (3, the last masked); the variant: 256 (12), 2 warps
    "sglang_logit_softcap": ({"rows": 3, "vocab": 1000}, {"triton_v1": {"block_size": 256, "num_warps": 2}}),
    # 5 rows of 20,000 (16-bit ties counted), exact: v1's 8192-column tiles (3, the last masked); the variant: 1024-column tiles, 2 warps, 1 stage
    "vllm_logprob_ranks": ({"rows": 5, "vocab": 20000}, {"triton_v1": {"block_size": 1024, "num_warps": 2, "num_stages": 1}}),
    # 5 requests with 3 positions (15 mask rows, the fourth request's last inactive: 14 logits rows) of 3000 tokens, exact with -inf in place: v1's one masked 8192-token block per row; the variant: 1024 (3 per row, the last masked), 2 warps
    "vllm_grammar_bitmask": ({"reqs": 5, "positions": 3, "vocab": 3000}, {"triton_v1": {"block_size": 1024, "num_warps": 2}}),
    # 6 docs of up to 40 tokens (bucket 64), a 20-token query (bucket 32), dim 48 (padded to 64), fp16 tl.dot: v1's 16 x 16 tiles; the variant: 32 queries x 32 doc tokens, 4 warps, 1 stage
    "vllm_maxsim_rerank": ({"docs": 6, "doc_len": 40, "query_len": 20, "dim": 48}, {"triton_v1": {"block_q": 32, "block_d": 32, "num_warps": 4, "num_stages": 1}}),
    # a 3 x 5 factor by a 7 x 300 one (21 x 1500 out): v1's 1 x 1024 tiles (2 per row, the last masked); the variant: 4 x 256 tiles (masked rows and columns), 2 warps
    "flaggems_kron": ({"m1": 3, "n1": 5, "m2": 7, "n2": 300}, {"triton_v1": {"block_m": 4, "block_n": 256, "num_warps": 2}}),
    # 7 requests extending about 20 tokens each after cached prefixes, 16-token pages, exact: v1's 256-slot tile (next power of two of the 140 tokens); the variant: a 4096-slot tile, 2 warps
    "sglang_alloc_extend": ({"reqs": 7, "extend": 20, "page_size": 16}, {"triton_v1": {"extend_tile": 4096, "num_warps": 2}}),
    # a 50 x 300 weight: v1's one row per program in 32-column steps (the tenth masked); the variant: 8 rows per program (the seventh program's last six masked), 128-column steps (the third masked), 2 warps, 1 stage
    "flaggems_mv": ({"out_features": 50, "in_features": 300}, {"triton_v1": {"block_n": 8, "block_m": 128, "num_warps": 2, "num_stages": 1}}),
    # 3 x 1000 activations (3000 elements), exact against Philox recomputed in torch: v1's one program of 4 x 1024 (the last 1096 masked), 16 warps; the variant: 2 warps
    "flaggems_dropout": ({"tokens": 3, "hidden": 1000}, {"triton_v1": {"num_warps": 2}}),
    # a [6, 7, 90] weight (630 columns per row): v1's one row per program in 512-column steps (the second masked); the variant: 4 rows per program (the second program's last two masked), 128-column steps (the fifth masked), 2 warps, 1 stage
    "flaggems_weight_norm": ({"channels": 6, "fan": 7, "taps": 90}, {"triton_v1": {"block_rows": 4, "block_cols": 128, "num_warps": 2, "num_stages": 1}}),
    # 13 tokens' top-3 of 200 experts (39 ids), exact: v1's 32 ids per program (the second program's last 25 masked), 128 classes per step (the second masked); the variant: 16 ids (3 programs, the last masked), 64 classes (4 steps, the last masked), 2 warps
    "flaggems_one_hot": ({"tokens": 13, "topk": 3, "experts": 200}, {"triton_v1": {"block_m": 16, "block_n": 64, "num_warps": 2}}),
    # 5 requests of 2 rows (10 programs) of 3000 tokens, exact with -inf in place: v1's 1024-column tiles (3 per pass, the last masked); the variant: 512 (6, the last masked), 2 warps, 1 stage
    "vllm_min_p": ({"reqs": 5, "qlen": 2, "vocab": 3000}, {"triton_v1": {"block_size": 512, "num_warps": 2, "num_stages": 1}}),
    # 9 received tokens of 300 columns, top-4 over 5 local experts (13 expert rows), exact: v1's one masked 512-column tile; the variant: 128 (3, the last masked), 2 warps, 1 stage
    "sglang_deepep_permute": ({"tokens": 9, "hidden": 300, "topk": 4, "experts": 5}, {"triton_v1": {"block_size": 128, "num_warps": 2, "num_stages": 1}}),
    # 5 requests with 2 drafts (15 rows, 5 bonus, the fourth request greedy) of 3000 tokens: v1's one masked 8192-column block per row; the variant: 1024 (3 per row, the last masked), 2 warps
    "vllm_rejection_stats": ({"reqs": 5, "drafts": 2, "vocab": 3000}, {"triton_v1": {"block_size": 1024, "num_warps": 2}}),
    # 5 requests extending 4 tokens, 2 rows kept, hidden 300, exact: v1's 64-column steps (5, the last masked); the variant: 128 (3, the last masked), 2 warps, 1 stage
    "sglang_eagle_hidden_pool": ({"reqs": 5, "extend": 4, "pool": 2, "hidden": 300}, {"triton_v1": {"block_hid": 128, "num_warps": 2, "num_stages": 1}}),
    # 300 tokens (a quarter ignored) of 1000 classes: v1's 128 rows per program (3, the last masked); the variant: 64 rows (5, the last masked), 2 warps
    "flaggems_nll_loss": ({"tokens": 300, "vocab": 1000}, {"triton_v1": {"block_n": 64, "num_warps": 2}}),
    # 2 groups, 5 requests of 20 tokens after up to 80 computed (16-token blocks), a 130-token mapping (30 padded), exact: v1's one masked 1024-token step per walk; the variant: 16-token steps (2 per request, the last masked; 2 of padding), 2 warps, 1 stage
    "vllm_slot_mapping": ({"groups": 2, "reqs": 5, "query_len": 20, "context": 40, "max_tokens": 130}, {"triton_v1": {"block_size": 16, "num_warps": 2, "num_stages": 1}}),
    # one expert's 13 rows added into 50 tokens of 300 columns (3900 source elements): v1's 128 per program (31, the last masked); the variant: 512 (8, the last masked), 2 warps
    "flaggems_index_add": ({"tokens": 50, "rows": 13, "hidden": 300}, {"triton_v1": {"block_size": 512, "num_warps": 2}}),
    # 5 tokens, 2 key heads and 4 value heads (r 2), key heads of 16 and value heads of 8 (the kernel has no masks: power-of-two segments), exact: v1's one warp per program (10); the variant: 4 warps (more lanes than a 16-element segment)
    "sglang_qkvzba_split": ({"tokens": 5, "k_heads": 2, "v_heads": 4, "head_k": 16, "head_v": 8}, {"triton_v1": {"num_warps": 4}}),
    # a 37 x 300 gradient (11,100 elements): v1's 128-element blocks (87 programs, the last masked) and a 128-wide tail (41 masked); the variant: 512 (22, the last masked; a 32-wide tail), 2 warps, 1 for the tail
    "flaggems_vector_norm": ({"rows": 37, "cols": 300}, {"triton_v1": {"block_size": 512, "num_warps": 2, "mid_warps": 1}}),
    # 40 tokens of hidden 512, 8 experts, top-2 (grid-valued: exact logits), ids exact: v1's 32 tokens per program (2, the second's last 24 masked), a 16-wide expert tile (8 masked), 256-deep K steps (2); the variant: 16 tokens (3, the last masked), 32 expert columns, 64-deep steps (8), 2 warps, 1 stage
    "sglang_moe_router": ({"tokens": 40, "hidden": 512, "experts": 8, "topk": 2}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 64, "num_warps": 2, "num_stages": 1}}),
    # 6 tokens of 1500 columns: v1's 1024-column programs (2 per token, the second masked), 4 warps; the variant: 256 columns (6 per token, the last masked), 2 warps
    "vllm_sigmoid_gate_mul": ({"tokens": 6, "hidden": 1500}, {"triton_v1": {"block": 256, "num_warps": 2}}),
    # 3 tokens, 5 heads, halves of 24 and 10 columns (360 and 150 elements), exact: v1's one 1024-element program per input (masked); the variant: 64 elements (6 per row, the second row's last 3 empty), 2 warps
    "flaggems_cat": ({"tokens": 3, "heads": 5, "nope_dim": 24, "rope_dim": 10}, {"triton_v1": {"block_x": 64, "num_warps": 2}}),
    # 3 sequences of 4 chunks, 3 heads, 200 state elements, 8-token chunks (initial and final states on, slots from 7): v1's 64-element programs (4 per head, the last masked); the variant: 128 elements (2, the second masked), 2 warps, 1 stage
    "vllm_ssd_state_passing": ({"seqs": 3, "chunks_per_seq": 4, "heads": 3, "state_dim": 200, "chunk_size": 8}, {"triton_v1": {"block_size": 128, "num_warps": 2, "num_stages": 1}}),
    # a 2500 x 2500 matrix: v1's 1024 diagonal elements per step (3, the last masked); the variant: 256 (10, the last masked), 1 warp, 2 stages
    "flaggems_trace": ({"n": 2500}, {"triton_v1": {"block_size": 256, "num_warps": 1, "num_stages": 2}}),
    # 37 requests (context lengths up to 32,768, every eighth on a 256-token boundary, some empty) over 11 SMs, exact: v1's 64-wide tile (next power of two of 37), Triton's 4 warps; the variant: a 256-wide tile (more masked lanes), 1 warp
    "flaggems_paged_mqa_metadata": ({"batch": 37, "num_sms": 11}, {"triton_v1": {"block_size": 256, "num_warps": 1}}),
    # 19 gathered tokens from a 4-page pool of 4-token pages (slots gathered again, as prefix sharing does), 656-byte fp8 records, bf16 out: v1's Triton 4 warps; the variant: 1 warp
    "sglang_nsa_dequant_k_cache": ({"tokens": 19, "pool_tokens": 16, "page_size": 4}, {"triton_v1": {"num_warps": 1}}),
    # 64 keys (16 non-zero) x 40 columns, fp32 sums: v1's one 512-row step (masked past 64) and 16-column programs (3, the last masked); the variant: 16-row steps (4), 32-column programs (2, the last masked), 2 warps, 1 stage
    "flaggems_rwkv_mm_sparsity": ({"keys": 64, "cols": 40, "nonzeros": 16}, {"triton_v1": {"blk_size": 16, "block_size": 32, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 2 packed 40-token sequences in 32-token chunks (the second of each cut at 8), 4 heads in 2 groups, head_dim 24 and d_state 24 (padded to 32), cached initial states: v1's 32 x 32 tiles and one 32-token causal step (masked columns); the variant: 32 x 16 tiles (2 per chunk and head, the second masked), two 16-token causal steps, 2 warps, 1 stage
    "vllm_ssd_chunk_scan": ({"seqs": 2, "seq_len": 40, "heads": 4, "head_dim": 24, "groups": 2, "d_state": 24, "chunk_size": 32}, {"triton_v1": {"block_m": 32, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # 9 requests (histories of 152 to 300 tokens, the eighth state's request without a sample) in a 500-token buffer, 2- to 4-grams, 8 drafts (some running past the history), exact: v1's 128-position blocks (4, the last masked); the variant: 64 (8), 2 scan warps, 1 finalize warp
    "vllm_ngram_propose": ({"reqs": 9, "seq_len": 300, "max_model_len": 500, "min_n": 2, "max_n": 4, "spec_tokens": 8}, {"triton_v1": {"block_l": 64, "scan_warps": 2, "finalize_warps": 1}}),
    # 37 tokens over 60 experts (Qwen1.5-MoE's count), top 4, renormalized, ids and rows exact: v1's 64-wide expert tile (4 masked experts) and 16 tokens per program (3, the last masked), 4 warps; the variant: a 128-wide tile (68 masked), 4 tokens per program, 2 warps
    "flaggems_topk_softmax": ({"tokens": 37, "experts": 60, "topk": 4}, {"triton_v1": {"block_rows": 4, "block_experts": 128, "num_warps": 2}}),
    # 3 requests of 256, 219 and 246 tokens (slots shuffled over the pool), 4 query heads on 2 KV heads, 16 channels; fp16 scores, -inf past each request: v1's 32-position programs (8 per row; a partial block and whole blocks past the length); the variant: 128 positions per program, 1 warp
    "sglang_ds_label_scores": ({"batch": 3, "ctx": 256, "heads": 4, "kv_heads": 2, "channels": 16}, {"triton_v1": {"block_n": 128, "num_warps": 1}}),
    # 2 query heads per KV head (4 on 2), 256 tokens, head dim 32, causal, dk and dv summed per KV head: v1's 128 key rows per program (2 per head; 16-row diagonal steps, then 32; dQ in 16- then 32-key steps); the variant: 64 key and query rows per program (4 per head), 64-row dK/dV steps (32 on the diagonal), 64-key dQ steps, 8 warps, 3 stages
    "flaggems_attention_bwd": ({"batch": 1, "heads": 4, "kv_heads": 2, "seq": 256, "head_dim": 32}, {"triton_v1": {"block_m1": 64, "block_n1": 64, "block_n2": 64, "num_warps": 8, "num_stages": 3}}),
    # 3 sequences padded to 80 tokens (the first full, the others 40 to 80 real), 4 query heads on 2 KV heads, head dim 128: v1's 128 x 128 tile (one program of 80 masked-tail query rows per head, one key step partly out of range); the variant: 32 x 32 tiles (three query programs, three key steps, the last half out of range), 4 warps, 2 stages
    "flaggems_sdpa_masked_fwd": ({"batch": 3, "heads": 4, "kv_heads": 2, "seq": 80, "head_dim": 128}, {"triton_v1": {"block_m": 32, "block_n": 32, "num_warps": 4, "num_stages": 2}}),
    # 13 tokens over 48 experts in 4 groups of 12 (16-lane group tiles and a 64-lane expert tile, masked), top-2 groups, top-4 experts: v1's 4 warps for both launches; the variant: 1 and 2 warps
    "flaggems_grouped_topk": ({"tokens": 13, "experts": 48, "groups": 4, "topk_group": 2, "topk": 4}, {"triton_v1": {"group_warps": 1, "select_warps": 2}}),
    # 6 requests of about 7 tokens (the grid padded to the longest), 8 slots of max rank 24 (ranks 24, 12, 6, 3 and an empty slot in use), a 300-token vocabulary, exact: v1's one masked 128-rank step; the variant: 16-rank steps (two for rank 24, the second masked), 2 warps, 1 stage
    "sglang_embedding_lora_a": ({"reqs": 6, "tokens": 7, "rank": 24, "loras": 8, "vocab": 300}, {"triton_v1": {"block_rank": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 distributions over 1000 categories (10 search steps), 200 samples each, exact: v1's 128-sample programs (2 per distribution, the second masked); the variant: 32-sample programs (7 per distribution, the last masked), 2 warps, 1 stage
    "flaggems_multinomial": ({"dists": 3, "categories": 1000, "samples": 200}, {"triton_v1": {"nblock": 32, "num_warps": 2, "num_stages": 1}}),
    # 2 images, 2 heads, a 5 x 7 patch grid (35 tokens), head dim 16: v1's 64 x 64 tiles (one masked query block, one masked key step); the variant: 16 queries x 32 keys (3 query blocks and 2 key steps, the last of each masked), 2 warps, 1 stage
    "vllm_deepencoder_relpos_attn": ({"images": 2, "heads": 2, "grid_h": 5, "grid_w": 7, "head_dim": 16}, {"triton_v1": {"block_m": 16, "block_n": 32, "num_warps": 2, "num_stages": 1}}),
    # 37 rows of 300 (statistics in the dtype), dx, dw and db: v1's 1-row programs with one masked 2048-column step, 1-column programs with one masked 128-row step; the variant: 4-row programs (10, the last masked) in 256-column steps (2, the second masked), 32-column programs (10, the last masked) in 16-row steps (3, the last masked), 2 warps each, 1 stage
    "flaggems_layer_norm_backward": ({"rows": 37, "hidden": 300}, {"triton_v1": {"dx_block_rows": 4, "dx_block_cols": 256, "dx_warps": 2, "wb_block_rows": 16, "wb_block_cols": 32, "wb_warps": 2, "num_stages": 1}}),
    # 37 rows x 300 (v1: one 512-wide block per row, 212 columns masked; 16 x 256 weight-gradient tiles, 3 x 2, the last of each masked) and the variant: 2 warps per row, 8 x 64 tiles (5 x 5, the last 5 rows and 44 columns live), 1 warp
    "flaggems_rms_norm_backward": ({"rows": 37, "hidden": 300}, {"triton_v1": {"dx_warps": 2, "dw_block_rows": 8, "dw_block_cols": 64, "dw_warps": 1}}),
    # tl.dot, fp32 and fp16; 2 heads of 200 tokens, head dim 32, each 128-query block keeping 2 of its 4 64-key blocks (the last one partial): v1's 128 x 64 tiles (the second query block partial), 8 warps, 3 stages; the variant: 32 x 16 tiles (the LUT's rows repeated per query sub-block, each key block split in four, some past the sequence), 2 warps, 1 stage
    "sglang_sla_attention": ({"heads": 2, "tokens": 200, "head_dim": 32, "topk": 2}, {"triton_v1": {"block_m": 32, "block_n": 16, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 3 blocks of 5 slots (an 8-row tile, 3 rows masked), rank 16, MLP hidden 64, a 100-token vocabulary: v1's one 64-column MLP step, 8 warps, 3 stages; the variant: 16-column steps (4), 2 warps, 1 stage
    "vllm_xpress_latent": ({"reqs": 3, "block": 5, "rank": 16, "mlp_hidden": 64, "vocab": 100}, {"triton_v1": {"hidden_tile": 16, "num_warps": 2, "num_stages": 1}}),
    # 21 tokens (slots shuffled over 3 pages of 16), 2 KV heads, head size 24 (a 32-lane tile: masked lanes, 3 of 4 3-bit groups and 12 of 16 value bytes stored), 3-bit keys and 4-bit values, exact as bytes: v1's 4 warps, 1 stage; the variant: 1 warp, 2 stages
    "vllm_turboquant_store": ({"tokens": 21, "kv_heads": 2, "head_dim": 24, "key_bits": 3, "value_bits": 4}, {"triton_v1": {"num_warps": 1, "num_stages": 2}}),
    # 3 requests of 40, 33 and 36 tokens on shuffled 16-token pages, 6 heads over 2 KV heads of 24 (BLOCK_D 32 masked), 3-bit keys and 4-bit values: v1's 32 splits of 2 tokens (the last ones empty), 4 tokens a step; the variant: 4 splits, 8 tokens a step (the last masked), 2 warps, 2 stages, merge 2 warps 1 stage
    "vllm_turboquant_decode": ({"batch": 3, "ctx": 40, "heads": 6, "kv_heads": 2, "head_dim": 24, "key_bits": 3, "value_bits": 4}, {"triton_v1": {"num_kv_splits": 4, "block_kv": 8, "num_warps": 2, "num_stages": 2, "merge_warps": 2, "merge_stages": 1}}),
    # 37 patches of 3 channels x 2 frames x 4 x 4 pixels (32 taps of 3 live channels in a 16-wide step) into 40 channels: v1's one masked 512-patch tile and 16-channel tiles (3, the last masked); the variant: 16-patch tiles (3, the last masked), 32-channel tiles (2, the second masked), 2 warps, 1 stage
    "flaggems_conv3d": ({"patches": 37, "channels": 3, "temporal_patch": 2, "patch": 4, "embed": 40}, {"triton_v1": {"block_ni_do_ho_wo": 16, "block_co": 32, "block_ci": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 requests of 700 tokens (2100: the sum kernel's path; the first and third read their states, the second's stale slot is not read), 1 head of 64, slots shuffled over a 7-state pool, fp32 tl.dot: v1's 32-column K splits (2 partials) and a 64-wide V tile, 32-token steps (the 22nd masked); the variant: 16 x 32 state tiles (4 partials), 16-token steps (the 44th masked), 1 warp, 1 stage
    "sglang_seg_la": ({"reqs": 3, "tokens": 700, "heads": 1, "head_dim": 64}, {"triton_v1": {"k_split": 16, "v_split": 32, "block": 16, "num_warps": 1, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 3 sequences of 20 tokens in 16-token chunks (the second cut at 4), 4 value heads over 2 key heads, key head 48 and value head 40: v1's one masked 64-wide K and V tile, 4 warps, 3 stages; the variant: 16-wide K tiles (3) and 32-wide V tiles (2, the second masked), 2 warps, 1 stage
    "sglang_gdn_wy": ({"seqs": 3, "seqlen": 20, "heads": 4, "kheads": 2, "dk": 48, "dv": 40, "chunk": 16}, {"triton_v1": {"block_k": 16, "block_v": 32, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 3 sequences of 40 tokens in 16-token chunks (the third cut at 8), 4 value heads over 2 key heads, key head 80 (two 64-row state blocks, the second masked) and value head 40, slots shuffled over a 5-state pool: v1's 32-wide V tiles (2, the second masked), 4 warps, 2 stages; the variant: 16-wide V tiles (3, the last masked), 2 warps, 1 stage
    "sglang_gdn_chunk_h": ({"seqs": 3, "seqlen": 40, "heads": 4, "kheads": 2, "dk": 80, "dv": 40, "chunk": 16}, {"triton_v1": {"block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # 5 requests of 3000 tokens, each with its own top-k (10..50) and top-p, exact with -inf in place: v1's 8192 / 4096 tiles (one masked tile per pass), 8 warps, 5 programs; the variant: 256-column row passes (12, the last masked) and 16-value outlier passes (several, the last masked), 2 programs (grid-stride over the rows, scratch rows reused), 2 warps, 1 stage
    "vllm_topk_topp": ({"reqs": 5, "vocab": 3000}, {"triton_v1": {"block_size": 256, "block_size_trunc": 16, "num_programs": 2, "num_warps": 2, "num_stages": 1}}),
    # 8 requests of 3000 tokens (allowed lists of 40, biases on 30 tokens, min-tokens stops, one request with all three, one with none), exact with -inf in place: v1's 1024-entry list tile and one masked 8192-column fill; the variant: a 64-entry list tile, 512-column fill steps (6, the last masked), 2 warps, 1 stage
    "vllm_logit_bias": ({"reqs": 8, "vocab": 3000, "allowed": 40, "biased": 30}, {"triton_v1": {"block_size": 64, "logits_block_size": 512, "num_warps": 2, "num_stages": 1}}),
    # 3 grids of 2 frames x 6 x 10 patches (the last 2 frames x 4 x 8: 304 tokens), head dim 40 (6 frequencies per axis, an 18-column half in a 32-wide tile: masked columns), zero-filled unwritten columns: v1's 32-token programs (10, the last masked), 8 warps; the variant: 16-token programs (19, the last masked), 2 warps
    "vllm_vit_mrope_setup": ({"grids": 3, "frames": 2, "grid_h": 6, "grid_w": 10, "head_dim": 40}, {"triton_v1": {"block_n": 16, "num_warps": 2}}),
    # 7 tokens of 400 (25 groups of 16; outlier channels, one all-zero group), exact to the E2M1 code in fp16/fp32: v1's 32-group programs (one per row, 7 groups masked); the variant: 8-group programs (4 per row, the last masked), 2 warps
    "vllm_nvfp4_qdq": ({"tokens": 7, "hidden": 400}, {"triton_v1": {"tile_blocks": 8, "num_warps": 2}}),
    # 3 heads x 20 tokens, nope 48 (one K step, masked), rank 80, fp16 tl.dot: v1's 128 x 256 x 64 fp16 tiles (3 programs, rows and columns clamped); the variant: 16 x 32 x 32 tiles (2 K steps, the second masked), group 2, 5 persistent programs over 18 tiles, 2 warps, 1 stage
    "sglang_bi_bmm": ({"heads": 3, "tokens": 20, "nope": 48, "rank": 80}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 32, "group_m": 2, "programs": 5, "num_warps": 2, "num_stages": 1}}),
    # a [2, 300, 37] tensor's mean over 300 (74 programs, lanes 37 apart): v1's one masked 1024-lane block; the variant: 64-lane blocks (5, the last masked), 2 warps, 1 stage
    "sglang_bi_mean": ({"outer": 2, "reduced": 300, "inner": 37}, {"triton_v1": {"block_size": 64, "num_warps": 2, "num_stages": 1}}),
    # 3 rows of 2500 logits: v1's three passes of 3 blocks of 1024 (the last masked); the variant: 256-lane blocks (10, the last masked), 2 warps, 1 stage
    "sglang_bi_log_softmax": ({"rows": 3, "vocab": 2500}, {"triton_v1": {"block_size": 256, "num_warps": 2, "num_stages": 1}}),
    # 2 frames of a 6 x 10 patch grid (3 x 5 merge blocks) from an 8 x 8 table of 200 columns: v1's one masked 256-column step; the variant: 64-column steps (4, the last masked), 2 warps, 1 stage
    "vllm_qwen3vl_pos_embed": ({"frames": 2, "grid_h": 6, "grid_w": 10, "hidden": 200, "grid_side": 8}, {"triton_v1": {"block_d": 64, "num_warps": 2, "num_stages": 1}}),
    # 3 draft blocks of 5 rows, 320 channels in 40-channel groups, 4 taps (masked at each block's start), offsets a strided view: v1's one masked 512-channel tile per row; the variant: 128-channel tiles (3 per row, the last masked), 2 warps
    "vllm_dflash2_grouped_conv": ({"reqs": 3, "block": 5, "hidden": 320, "group": 40, "taps": 4}, {"triton_v1": {"element_block": 128, "num_warps": 2}}),
    # 9 experts (the seventh empty) of 3..21 valid rows in a 40-row capacity (padding 1e4, never read), inter 96 in 32-column groups, e4m3 by torch's cast under the interpreter: v1's 32 token programs per expert (one row each at most, most idle), 1 warp, 6 stages; the variant: 3 token programs per expert (up to 7 rows each, the last round partial), 2 warps, 1 stage
    "sglang_silu_mul_masked_quant": ({"experts": 9, "capacity": 40, "tokens": 12, "inter": 96, "group": 32}, {"triton_v1": {"blocks_per_expert": 3, "num_warps": 2, "num_stages": 1}}),
    # 5 rows of 3000 columns, 64-bit seeds with their high words set, exact: v1's 1024-column programs (3 per row, the last masked), 4 warps; the variant: 256-column programs (12 per row, the last masked), 2 warps
    "sglang_murmur_hash": ({"rows": 5, "vocab": 3000}, {"triton_v1": {"block_size": 256, "num_warps": 2}}),
    # 37 requests x 5 draft steps (158 scheduled, ties every eighth request), 93 admitted (seed 3: the threshold splits a tie, so the request-order hand-out counts), exact: v1's 256-request pass and 1024-slot probes (one each, masked); the variant: 16-request passes (3, the last masked) and 64-slot probes (3, the last masked), 2 warps, 1 stage
    "vllm_draft_budget": ({"reqs": 37, "steps": 5, "budget": 93}, {"triton_v1": {"block_reqs": 16, "block_size": 64, "num_warps": 2, "num_stages": 1}}),
    # 9 requests (the fourth a chunked prefill: nothing sampled) over 3000 tokens, top-k up to 40, the eighth untruncated (its ids clipped at 2048), exact: v1's one masked 8192-column block; the variant: 1024 (3, the last masked), 2 warps, 1 stage
    "vllm_sampling_mask": ({"reqs": 9, "vocab": 3000, "max_k": 40}, {"triton_v1": {"block_size": 1024, "num_warps": 2, "num_stages": 1}}),
    # 2 samples of 20 noisy and 13 reference tokens, hidden 200: v1's one 128 x 128 tile per sample and channel block (tokens and the last channels masked); the variant: 16 x 64 tiles (3 x 4 per sample, the last of each masked), 2 warps
    "sglang_dit_modulate_select": ({"batch": 2, "noisy_tokens": 20, "cond_tokens": 13, "hidden": 200}, {"triton_v1": {"block_l": 16, "block_c": 64, "num_warps": 2}}),
    # 2 samples x 37 tokens x 200 channels, per-token fp32 shift and scale read through strided views (rows 400 apart): v1's 128 x 128 tiles (1 x 2 per sample, tokens and channels masked); the variant: 16 x 64 tiles (3 x 4 per sample, the last of each masked), 2 warps
    "sglang_dit_scale_shift": ({"batch": 2, "tokens": 37, "hidden": 200}, {"triton_v1": {"block_l": 16, "block_c": 64, "num_warps": 2}}),
    # 3 layers, 2 KV heads of 40 (160- and 320-byte rows), 7 requests of 6 draft tokens (30 slots moved in place, exact): v1's 128-byte tiles (the last masked) in one launch of 32 slots; the variant: 64-byte tiles, chunks of 8 slots (4 launches, the last of 6), 2 warps
    "sglang_kv_move": ({"layers": 3, "kv_heads": 2, "head_dim": 40, "reqs": 7, "draft_tokens": 6}, {"triton_v1": {"bytes_per_tile": 64, "locs_cap": 8, "num_warps": 2}}),
    # 37 tokens of 5 uneven requests (EOS in a lookback row's newest place and in the step), 3-grams over 4 heads (8 int64 ids per token), exact: v1's 8-token tiles (5, the last masked); the variant: 16-token tiles (3, the last masked), 2 warps
    "vllm_ple_ngram_ids": ({"tokens": 37, "reqs": 5, "ngram": 3, "heads": 4}, {"triton_v1": {"block_t": 16, "num_warps": 2}}),
    # 10 requests of 2 rows over 1000 positions in 48-position blocks (21 per row, padded to 64 and masked; one request sees nothing), exact with +-inf: v1's one 128-block tile per row; the variant: 4-block tiles over 3 programs per row (two passes each), 2 warps, 1 stage
    "vllm_dsa_block_scores": ({"reqs": 10, "next_n": 2, "width": 1000, "block": 48}, {"triton_v1": {"tile": 4, "programs": 3, "num_warps": 2, "num_stages": 1}}),
    # 5 tokens x 160 outputs x 320 deep (K masked in its third 128-step, rows and columns past M and N wrapped), int8 tl.dot: v1's 64 x 128 tiles; the variant: 16 x 32 tiles in groups of 2, 2 warps, 1 stage
    "sglang_int8_block_gemm": ({"m": 5, "n": 160, "k": 320}, {"triton_v1": {"block_m": 16, "block_n": 32, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 37 received tokens x 4 slots (1 to 3 local, 5 local experts, 56 local rows over 5 x 128 padded), hidden 384: v1's 128-column blocks (3) x 37 token programs; the variant: 64-column blocks x 16 token programs (3 grid-stride passes, the last partial), 1 warp, 1 stage
    "sglang_ep_gather": ({"tokens": 37, "hidden": 384, "topk": 4, "local_experts": 5}, {"triton_v1": {"block_d": 64, "token_programs": 16, "num_warps": 1, "num_stages": 1}}),
    # 37 tokens of 384 e4m3 columns (3 scales), top-4 over 12 experts: 9 experts get one slot each from 6 tokens spread over the batch (first and last included; 1 to 3 slots a token), the other 3 no rows; rounded counts of 128 or 0; v1's 128-entry label stores (one per segment), 8 warps, 37 one-token copy programs (the 384-column row in a masked 512 block, the scales in a masked 4); the variant: 32-entry stores (4 per segment), 2 warps, 5 copy programs walking 7 or 8 tokens each, 1 warp
    "sglang_ep_scatter": ({"tokens": 37, "hidden": 384, "topk": 4, "local_experts": 12}, {"triton_v1": {"block_e": 32, "fill_warps": 2, "copy_programs": 5, "copy_warps": 1}}),
    # 5 tokens x 3 heads of 96 values read through the transposed view (every row masked in v1's 128-value tile), one global scale, e4m3 exact; the variant: 256-value tiles, 1 and 2 warps
    "sglang_mla_tensor_quant": ({"tokens": 5, "heads": 3, "head_dim": 96}, {"triton_v1": {"block_size": 256, "stage1_warps": 1, "stage2_warps": 2}}),
    # 5 x 300 e4m3 tokens by a 150 x 300 transposed weight: v1's 64 x 64 x 256 tiles (rows, columns and the second K step masked); the variant: 16 x 32 x 64 tiles (the fifth K step masked), 2 warps, 1 stage
    "sglang_scaled_mm": ({"m": 5, "n": 150, "k": 300}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 64, "num_warps": 2, "num_stages": 1}}),
    # 2 requests of 6 tokens (3 pairs each, 12 rows) ending contexts of 70 regions (4 packed 32-region pages per request, 3 used), 4 heads padded to 16, fp8 tl.dot under the interpreter, -inf past lengths 69, 69 and 70: v1's 32-region tiles (3 per row, the last masked); the variant: 16-region tiles (5, the last masked), 2 warps
    "vllm_step5_indexer_scores": ({"reqs": 2, "tokens": 6, "regions": 70, "heads": 4}, {"triton_v1": {"tile": 16, "num_warps": 2}}),
    # 3 requests of 2 tokens (MTP), contexts 40, 21 and 22 (the shorter ones inside the 24-key window), 4 heads over 2 KV heads (group 2), 16-token pages: v1's plan (pack 1, one split: the gated store), 64-key steps masked; the variant: 16-key steps, 2 splits merged by the combine launch, the pair packed (rows 4), 2 warps, 1 stage, 2 combine warps
    "vllm_step5_swa_decode": ({"reqs": 3, "q_len": 2, "ctx": 40, "window": 24, "heads": 4, "kv_heads": 2}, {"triton_v1": {"block_n": 16, "splits": 2, "pack": 2, "num_warps": 2, "num_stages": 1, "merge_warps": 2}}),
    # 2 requests of 3 canvas rows (6 rows) of 5000 logits, the noise recomputed bit for bit (ids exact), entropy and probs against fp64: v1's 4096-column steps (2 per pass, the second masked); the variant: 1024 (5, the last masked), 2 warps, 1 stage
    "vllm_diffusion_row_stats": ({"reqs": 2, "canvas": 3, "vocab": 5000}, {"triton_v1": {"block": 1024, "num_warps": 2, "num_stages": 1}}),
    # 7 ids of a 50-row int4 table, 320 columns in 5 groups of 64: v1's 512-column block (one per row, masked past 320); the variant: 128 columns (3 per row, the last half masked), 2 warps
    "vllm_quant_embedding": ({"tokens": 7, "vocab": 50, "hidden": 320, "group": 64, "bits": 4}, {"triton_v1": {"block": 128, "num_warps": 2}}),
    # 700 tokens, top-5 of 96 experts, EP 2 (48 local: 2 words, the second partly used, about half the ids -1), exact: v1's 512-token blocks (2, the second masked); the variant: 64 (11, the last masked), 2 warps
    "vllm_moe_bitmatrix": ({"tokens": 700, "experts": 96, "topk": 5, "ep": 2}, {"triton_v1": {"block_m": 64, "num_warps": 2}}),
    # 300 tokens, top-6 of 48 experts, EP 4 (12 local, the expert map applied), exact: v1's 1024-id steps (2 over 1,800 ids, the second masked); the variant: 256 (8, the last masked), 2 warps, 1 stage
    # 3 sequences of 5 new tokens over 19 cached (24 keys, 8-token blocks shuffled in the pool), 4 heads over 2 KV heads of 24 (padded to 32): v1's 16-row programs (8 tokens, one block a sequence) and 32-key tiles (one, masked past 24); the variant: 4-row programs (2 tokens, 3 blocks a sequence, the last partial), 8-key tiles (3 steps), 2 warps, 1 stage
    "vllm_unified_attention": ({"seqs": 3, "q_len": 5, "ctx": 19, "heads": 4, "kvheads": 2, "head": 24, "block_size": 8}, {"triton_v1": {"block_m": 4, "tile_size": 8, "num_warps": 2, "num_stages": 1}}),
    # 700 tokens of 3 heads (2,100 rows: the throughput kernel; the decode trial's low-latency kernel is run on the GPU), extent 100: v1's 32 x 128 tiles two row tiles a program (33 x 1, the last row tile past the rows); the variant: 16 x 64 tiles four a program (33 x 2), 2 warps
    "vllm_rel_proj": ({"tokens": 700, "heads": 3, "kvheads": 1, "head": 24, "extent": 100}, {"triton_v1": {"block_m": 16, "block_n": 64, "group_m": 4, "num_warps": 2}}),
    # 70 tokens, top-2 of 6 experts, hidden 96, n 40, rank 8 (BLOCK_R 16, masked), 2 adapters and tokens without one, 2 slices added into the base: v1's 32-pair blocks (the alignment's padding, blocks past the count returning), BLOCK_K 128 (by 23 pairs per expert: one step masked past 96, EVEN_K off), one 128-wide n tile; the variant: 16-pair blocks, 32-column n tiles, 32-deep K (EVEN_K on), NPID 2 (n split in two), 2 warps, 1 stage
    "vllm_moe_lora": ({"tokens": 70, "hidden": 96, "n": 40, "experts": 6, "top_k": 2, "rank": 8, "loras": 2, "slices": 2}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 32, "npid": 2, "num_warps": 2, "num_stages": 1}}),
    # 37 prompt tokens, 3 key heads of 24 and 6 value heads of 40 (BK 32 and BV 64 masked), one fp32 norm per q/k row: v1's 16-token slabs (3, the last masked); the variant: 8 (5, the last masked), 2 warps, 1 stage
    "vllm_gdn_post_conv": ({"tokens": 37, "k_heads": 3, "v_heads": 6, "head_k": 24, "head_v": 40}, {"triton_v1": {"block_t": 8, "num_warps": 2, "num_stages": 1}}),
    # 13 tokens, 3 q heads and 2 KV heads of 48 (HEAD_BLOCK 64, masked) in a packed QKV row, rotary 20 (10 per half, ROT_HALF_BLOCK 16, masked; 28 pass-through), MRoPE sections 4/3/3 with h and w trailing t: v1's whole-head blocks, 1 warp, 2 stages; the variant: 128 and 32 lanes, 2 warps, 1 stage
    "vllm_qk_norm_rope_gate": ({"tokens": 13, "q_heads": 3, "kv_heads": 2, "head_dim": 48, "rotary_dim": 20, "pos_rows": 3}, {"triton_v1": {"head_block": 128, "rot_half_block": 32, "num_warps": 2, "num_stages": 1}}),
    # 5 prefill sequences (2 to 3 fresh, zero-filled) from a pool of 9 slots, 3 value heads of 12 x 10 (360 values a state), exact: v1's 512-value block (one, masked past 360), 8 warps; the variant: 128 (3, the last masked), 2 warps, 1 stage
    "vllm_gdn_initial_states": ({"seqs": 5, "slots": 9, "v_heads": 3, "head_k": 10, "head_v": 12}, {"triton_v1": {"block": 128, "num_warps": 2, "num_stages": 1}}),
    # 2 x 2 heads, 600 tokens (3 blocks, the last 88 tokens: a partial first sub-block), d 16, e 32, fp32 history updated in place: v1's CBLOCK 64 for both launches; the variant: 32 for the states (the partial block's shift 8), 128 for the output (the last block's second program fully masked), 2 warps, 1 stage
    "sglang_lightning_inter": ({"batch": 2, "heads": 2, "seqlen": 600, "d": 16, "e": 32}, {"triton_v1": {"cblock_kv": 32, "cblock_out": 128, "num_warps": 2, "num_stages": 1}}),
    # 70 tokens, top-4 of 48 experts (padded to 64: the peeled last tile masked), no ties by construction: v1's 32 x 32 tiles (3 row blocks, the last masked; two expert tiles merged); the variant: 16 tokens x one 64-expert tile (2 words, the second half spare), 2 warps
    "vllm_routing_topk": ({"tokens": 70, "experts": 48, "topk": 4}, {"triton_v1": {"block_m": 16, "block_n": 64, "num_warps": 2}}),
    "vllm_expert_count": ({"tokens": 300, "experts": 48, "topk": 6, "ep": 4}, {"triton_v1": {"block": 256, "num_warps": 2, "num_stages": 1}}),
    # 5 token rows, intermediate 100 (gate_up 200), a cutoff per row at mean + 1.6449 std: v1's 128-lane row block (masked past 100), 1 warp; the variant: 256 lanes, 2 warps, 1 stage
    "vllm_gelu_sparse": ({"rows": 5, "d": 100}, {"triton_v1": {"block": 256, "num_warps": 2, "num_stages": 1}}),
    # 3 prompt chunks of 40 tokens and 4 decoding requests, 3 channels, a 320-wide table of 14 slots, exact: v1's 1024-token step (one, masked past 40); the variant: 16 (3 steps, the last masked), 2 warps, 1 stage
    "vllm_mrope_positions": ({"prefills": 3, "chunk": 40, "decodes": 4, "channels": 3, "max_model_len": 320}, {"triton_v1": {"block": 16, "num_warps": 2, "num_stages": 1}}),
    # 37 tokens, top-5 of 24 experts, EP 3 (8 local: about two thirds of the slots skipped, their NaN rows never read), hidden 300: v1's CPU-branch 512-column step (one, masked past 300); the variant: 128 (3, the last masked), 2 warps, 1 stage
    "vllm_moe_mul_sum": ({"tokens": 37, "topk": 5, "hidden": 300, "experts": 24, "ep": 3}, {"triton_v1": {"block_k": 128, "num_warps": 2, "num_stages": 1}}),
    # a 4-token block of 3 layers, 3 heads of 40 (120 values a token, head and column split across steps), 5 blocks, exact: v1's 128-value step (one, masked past 120); the variant: 32 (4, the last masked), 2 warps, 1 stage
    "vllm_kv_offload_gather": ({"layers": 3, "heads": 3, "block_size": 4, "content": 40, "blocks": 5}, {"triton_v1": {"block": 32, "num_warps": 2, "num_stages": 1}}),
    # 7 tokens of 5 heads of 32 (35 rows), fp32 rows through fp16 under the interpreter (bf16 on a GPU, as vLLM does): v1's 16-row programs (3, the last masked at 3 rows); the variant: 32 rows (2, the second masked), 2 warps, 2 stages
    "vllm_hadamard_mma": ({"tokens": 7, "heads": 5, "head_dim": 32}, {"triton_v1": {"block_m": 32, "num_warps": 2, "num_stages": 2}}),
    # 3 requests of 5 tokens after 2 cached ones (the first tap before position 0, two from the cache through 4-token blocks), 2 heads of a 24-channel stream at columns 8..31 of a 40-wide head; v1's 8 tokens (2 programs, the second partial) x 64 channels (48 live); the variant: 4 tokens x 16 channels (4 x 3 programs), 2 warps, 1 stage
    "vllm_paged_sconv": ({"reqs": 3, "qlen": 5, "ctx": 2, "heads": 2, "ws": 24, "off_s": 8, "head_size": 40, "width": 4}, {"triton_v1": {"block_t": 4, "block_c": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 rows of 10,000 columns (a few NaN, which must lose), exact: v1's 4096-column tiles (3 splits, the last 1,808 live; the finish kernel's 4 lanes, one masked); the variant: 1024-column tiles (10 splits, the last 784 live; 16 finish lanes), 2 warps each
    "vllm_greedy_argmax": ({"rows": 3, "vocab": 10000}, {"triton_v1": {"block": 1024, "num_warps": 2, "finish_warps": 2}}),
    # 37 tokens, 72 outputs, hidden 100 (no tuned entry: the dtype's default, 128 x 128 x 32 (fp32) or 128 x 256 x 64 (fp16), one masked tile and one program, K masked); the variant: 16 x 32 x 32 tiles (3 x 3 = 9 over 5 persistent programs, the second walk partial; 4 K steps, the last masked), GROUP_SIZE_M 2, 2 warps, 1 stage
    "vllm_bi_matmul": ({"tokens": 37, "out": 72, "hidden": 100}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 32, "group_m": 2, "programs": 5, "num_warps": 2, "num_stages": 1}}),
    # 2 requests of 5 tokens after 4,100 context tokens (33 causal blocks each, the last forced in), 2 heads, top-8, exact: v1's 2048-block step (one, 33 live), 8 warps, 2 stages; the variant: 16-block steps (3, merged with the running best half, the last masked past one), 2 warps, 1 stage
    "vllm_block_topk": ({"heads": 2, "reqs": 2, "q_len": 5, "prefix": 4100, "topk": 8}, {"triton_v1": {"block_k": 16, "num_warps": 2, "num_stages": 1}}),
    "vllm_markov_noise": ({"reqs": 3, "steps": 2, "vocab": 3000, "slots": 7}, {"triton_v1": {"block_size": 256, "num_warps": 2, "num_stages": 1}}),
    # 2 sequences of 37 cached + 21 new tokens, 4 heads over 2 KV heads of 24 (padded to 32, masked), 8-token blocks split by x: v1's 128-row block (masked past 21), 32-key prefix steps crossing blocks (2, the second masked), 64-key new steps (one, masked); the variant: 16-row blocks (2), 16-key prefix steps (3, the last masked), 16-key new steps, 2 warps, 2 stages
    "vllm_prefix_prefill": ({"seqs": 2, "q_len": 21, "ctx": 37, "heads": 4, "kvheads": 2, "head": 24, "block_size": 8}, {"triton_v1": {"block_m": 16, "block_size": 16, "block_n": 16, "num_warps": 2, "num_stages": 2}}),
    # 5 decoding sequences, 2 q/k heads of 24 (BK 32, masked) and 4 value heads of 40, a pool of 6 states in the dtype updated in place: v1's 32-row blocks (2 per head, the second masked), 4 warps, 3 stages; the variant: 16 (3, the last masked), 2 warps, 1 stage
    "vllm_gdn_gated_decode": ({"seqs": 5, "heads": 2, "vheads": 4, "dk": 24, "dv": 40}, {"triton_v1": {"block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # 5 decoding sequences, 3 heads of 32, a pool of 11 bf16-or-fp32 states updated in place: v1's 32-column blocks (one per head); the variant: 8 (4 per head), 2 warps
    "vllm_lightning_decode": ({"seqs": 5, "heads": 3, "d": 32}, {"triton_v1": {"block_size": 8, "num_warps": 2}}),
    # 3 experts' 40-row slots (about 10 valid each), hidden 80, n 48: v1's 32 x 64 x 128 tiles (2 row tiles, the second past every count but a rare one, one masked K step, n masked), 4 warps, 3 stages; the variant: 16 x 16 x 32 (3 K steps, the last masked), 2 warps, 2 stages
    "vllm_batched_moe": ({"experts": 3, "max_tokens": 40, "hidden": 80, "inter": 24, "avg_tokens": 10}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 2}}),
    # 3 sequences of 40 tokens (one 64-token chunk each, cut at 40), 4 heads of 24 channels, fp32 per-channel gates: v1's 16-token sub-chunks (the third masked, the fourth empty), one 32-deep key slice (masked); the variant: 32-token sub-chunks (the second masked), 16-deep slices (the second masked), 2 warps, 1 stage
    "sglang_kda_kkt": ({"seqs": 3, "seqlen": 40, "heads": 4, "dk": 24, "chunk": 64}, {"triton_v1": {"sub_chunk": 32, "inter_block_k": 16, "inter_warps": 2, "inter_stages": 1, "intra_warps": 2, "intra_stages": 1}}),
    # 40 tokens in 16-token chunks (the third cut at 8), 3 packed sequences (chunks straddle them), 4 heads of 24 over 2 groups, state 20: v1's 16 x 16 x 16 tiles (rows and columns masked); the variant: 32 x 16 x 32 tiles, 2 warps, 1 stage
    "sglang_ssd_chunk_state": ({"batch": 1, "seqlen": 40, "nheads": 4, "headdim": 24, "ngroups": 2, "dstate": 20, "chunk": 16, "seqs": 3}, {"triton_v1": {"block_m": 32, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # 45 tokens of 5 requests on 3 adapters (18, 18 and 9 tokens), rank 24, slices 40, 24 and 24 (QKV-like), added in place to the base: v1's 16-token segments (5, two cut at 2 and one at 9), 64-column blocks (masked), two 16-deep rank steps (the second masked); the variant: 32-token segments (3), 16-column blocks (3, the k and v slices' third exiting), one 32-deep step (masked), 2 warps, 1 stage
    "sglang_lora_expand": ({"tokens": 45, "seqs": 5, "loras": 3, "rank": 24, "slices": 3, "first_out": 40, "other_out": 24}, {"triton_v1": {"chunk_size": 32, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # 3 requests of 60, 53 and 46 tokens, 4 query heads over 2 KV heads of 32, 40 heavy positions per head (int64, score order) gathered through the token table: v1's one 128-position split (masked at 40) in 16-position steps (the third masked), one split merged; the variant: 16-position splits (3, the last cut at 8) in 8-position steps, 2 warps, 1 stage, the merge with 2 warps, 1 stage
    # 3 requests of 60, 53 and 46 tokens, 4 heads of 24 (BLOCK_DMODEL 32, masked), slots from a permuted pool: v1's 8 splits of 32 rows (the later ones empty) in 64-row steps (masked), merged; the variant: 3 splits (32 rows, the second cut, the third empty) in 16-row steps, 2 warps, 1 stage, the merge with 2 warps, 1 stage
    "sglang_mha_decode": ({"batch": 3, "ctx": 60, "heads": 4, "head_dim": 24}, {"triton_v1": {"block_n": 16, "num_warps": 2, "num_stages": 1, "num_kv_splits": 3, "merge_warps": 2, "merge_stages": 1}}),
    # 2 sequences of 70 tokens (two 64-token chunks each, the second cut at 6), 3 heads, dk 24 (BK 32: one masked step), dv 20 (BV 64: masked): v1's first autotune config; the variant: 16-deep key steps (the second masked), 16 columns (two programs, the second masked), 4 warps, 1 stage
    "sglang_kda_chunk_o": ({"seqs": 2, "seqlen": 70, "heads": 3, "dk": 24, "dv": 20, "chunk": 64}, {"triton_v1": {"block_k": 16, "block_v": 16, "num_warps": 4, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 3 sequences of 20 tokens in 16-token chunks (the second cut at 4: kg's chunk-end row its last token), 3 heads, dk 40 and dv 24: v1's one masked 64-wide K and V tile, 2 warps, 2 stages (the autotune list's first); the variant: 16-wide K tiles (3, the last masked) and V tiles (2, the second masked), 4 warps, 1 stage
    "sglang_kda_wy": ({"seqs": 3, "seqlen": 20, "heads": 3, "dk": 40, "dv": 24, "chunk": 16}, {"triton_v1": {"block_k": 16, "block_v": 16, "num_warps": 4, "num_stages": 1}}),
    "sglang_ds_sparse_decode": ({"batch": 3, "ctx": 60, "heads": 4, "kv_heads": 2, "head_dim": 32, "heavy": 40}, {"triton_v1": {"block_seq": 16, "block_n": 8, "num_warps": 2, "num_stages": 1, "merge_warps": 2, "merge_stages": 1}}),
    # 3 requests of 40, 33 and 36 tokens on a permuted pool, 20 heads over one latent head of rank 24 (BLOCK_C 32, masked) and rope 16, 4 splits (10 tokens each; 9, 9, 9, 6; 9 each), the last token's rope part rotated in the kernel: v1's 32-token steps (one per split, masked), 16 heads per program (2 groups, the second masked at 4); the variant: 16-token steps, 32 heads per program (one group, 12 masked), 2 warps, 1 stage
    "sglang_mla_decode_rope": ({"batch": 3, "ctx": 40, "heads": 20, "rank": 24, "rope": 16, "splits": 4}, {"triton_v1": {"block_n": 16, "block_h": 32, "num_warps": 2, "num_stages": 1}}),
    # 3 requests of 60, 53 and 46 tokens (pool rows permuted), 4 query heads over 2 KV heads of 32: v1's one 256-position split (masked past each length) in 16-position steps (the fourth cut), one split merged; the variant: 16-position splits (4, 4 and 3: the last program of the shorter requests storing nothing) in 8-position steps, 2 warps, 1 stage, the merge with 2 warps, 1 stage
    "sglang_ds_dense_decode": ({"batch": 3, "ctx": 60, "heads": 4, "kv_heads": 2, "head_dim": 32}, {"triton_v1": {"block_seq": 16, "block_n": 8, "num_warps": 2, "num_stages": 1, "merge_warps": 2, "merge_stages": 1}}),
    # 45 tokens of 5 requests on 3 adapters (18, 18 and 9 tokens), rank 8, 3 slices (24 columns), hidden 200: v1's 16-token segments (5, two cut at 2 and one at 9), 16-column blocks (2, the second masked), one 256-deep step (masked); the variant: 32-token segments (3), 64-deep steps (4, the last masked), 2 warps, 1 stage
    "sglang_lora_shrink": ({"tokens": 45, "seqs": 5, "loras": 3, "rank": 8, "slices": 3, "hidden": 200}, {"triton_v1": {"chunk_size": 32, "block_n": 16, "block_k": 64, "num_warps": 2, "num_stages": 1}}),
    # 3 requests of 5 draft tokens, 2 heads of 64, a pool of 7 fp32 states (read only) and a zeroed cache of 4 entries: v1's 32 x 64 state tiles (2 K partials summed by torch); the variant: 16 x 32 tiles (4 partials), 1 warp, 1 stage
    "sglang_seg_la_mtp": ({"reqs": 3, "step": 5, "heads": 2, "head_dim": 64}, {"triton_v1": {"k_split": 16, "v_split": 32, "num_warps": 1, "num_stages": 1}}),
    # 2 sequences of 70 tokens (two 64-token chunks each, the second cut at 6), 4 value heads over 2 key heads, dk 24, dv 20: v1's 128-deep key slice and 64 columns (masked); the variant: 16-deep slices (the second masked), 16 columns (the second masked), 2 warps, 1 stage
    "sglang_gdn_chunk_o": ({"seqs": 2, "seqlen": 70, "heads": 4, "kheads": 2, "dk": 24, "dv": 20, "chunk": 64}, {"triton_v1": {"block_k": 16, "block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # 2 sequences of 37 cached + 21 new tokens, the prefixes scattered over the pool, 4 heads over 2 KV heads of 24 (BLOCK_DMODEL 32, masked): v1's 128 x 64 tiles, 4 warps (heads up to 64), 1 stage (rows and keys masked); the variant: 16 x 16 tiles (the prefix in 3 steps, the last masked; 2 row blocks), 2 warps, 2 stages
    "sglang_extend_attention": ({"seqs": 2, "prefix": 37, "extend": 21, "heads": 4, "kvheads": 2, "headdim": 24}, {"triton_v1": {"block_m": 16, "block_n": 16, "num_warps": 2, "num_stages": 2}}),
    # 2 sequences of 37 cached + 21 new tokens (a unified list of 58 keys each, both scattered over the pool), 4 heads over 2 KV heads of 24 (BLOCK_DMODEL 32, masked), sinks: v1's 128 x 64 tiles, 4 warps, 1 stage (one row block, one key step: rows, keys and the causal part masked); the variant: 16 x 16 tiles (2 row blocks, 4 key steps each, the second block's rows cut at 5, the last step masked past 58 and past each row's causal end), 2 warps, 2 stages
    "sglang_extend_unified": ({"seqs": 2, "prefix": 37, "extend": 21, "heads": 4, "kvheads": 2, "headdim": 24}, {"triton_v1": {"block_m": 16, "block_n": 16, "num_warps": 2, "num_stages": 2}}),
    # 20 tokens on 6 experts, top-2 (v1's 64 x 64 x 32 tiles and groups of 8 above 6 tokens), hidden 128 in groups of 64 (4 steps of 32, a group's scale and zero point met twice), n 48 (the 64-column block masked, its columns wrapping); the variant: 16 x 16 x 64 tiles (3 column blocks, 2 steps each one group), groups of 2, 2 warps, 1 stage
    "sglang_moe_wna16": ({"tokens": 20, "hidden": 128, "inter": 24, "experts": 6, "topk": 2, "group": 64}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 64, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 5 decoding sequences in a pool of 9 slots (shuffled, 4 untouched), 300 channels, width 4 (3 state columns shifted in place), silu: v1's 256-channel blocks (the second masked); the variant: 64 (5, the last masked), 2 warps
    "sglang_conv1d_update": ({"batch": 5, "dim": 300, "width": 4, "slots": 9}, {"triton_v1": {"block_n": 64, "num_warps": 2}}),
    # 2 batch rows of 100 tokens, 20 heads, 32-token chunks (4 chunks, the last 4 tokens long: 28 padded positions zeroed and the sum held): v1's 16-head blocks (the second 4 heads masked), 32-wide chunk tile; the variant: 8-head blocks (3, the last half masked), 1 warp
    "sglang_ssd_chunk_cumsum": ({"batch": 2, "seqlen": 100, "nheads": 20, "chunk": 32}, {"triton_v1": {"block_h": 8, "num_warps": 1}}),
    # 10 prompts of 10 tokens packed into 100, 16-token chunks: 4 span into their last chunk (the chunk state), 6 start inside it (the initial state, zero for the odd ones), 2 of those at the chunk's first token (no edge decay); 4 heads over 2 groups, headdim 24 and dstate 20 (the 16-wide tiles masked): v1's 16 x 16 x 16; the variant: 32 x 16 x 32 tiles (each tail one masked step), 2 warps, 1 stage
    "sglang_ssd_varlen_states": ({"seqlen": 100, "seqs": 10, "nheads": 4, "headdim": 24, "ngroups": 2, "dstate": 20, "chunk": 16}, {"triton_v1": {"block_m": 32, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # 2 batch rows of 40 positions, the last 20 of them queries (the first three see fewer than 24 positions, so their top-24 ends in -1s), 16 heads of width 32, top-24: v1's 64-row step (one masked step); the variant: 16-row steps (two, the second partly masked), 2 warps, 1 stage
    "flaggems_sparse_attn_sink": ({"b": 2, "m": 20, "h": 16, "d": 32, "n": 40, "topk": 24}, {"triton_v1": {"block": 16, "num_warps": 2, "num_stages": 1}}),
    # 50 tokens routed top-4 of 24 experts: 200 ids, v1's one 256-id program with 2 warps (56 lanes masked) into an 8192-count histogram; the variant: 64-id programs (four, the last partly masked), 1 warp
    "flaggems_bincount": ({"tokens": 50, "topk": 4, "experts": 24}, {"triton_v1": {"block_size": 64, "num_warps": 1}}),
    # 2 sequences of 100 tokens (the second chunk cut at 36), 4 value heads over 2 key heads of width 64: v1 (BK 64, one step); the variant: BK 32 (two steps), 2 warps, 1 stage
    "flaggems_gdn_fused_kkt_inv": ({"b": 2, "t": 100, "h": 4, "hg": 2, "kd": 64}, {"triton_v1": {"bk": 32, "num_warps": 2, "num_stages": 1}}),
    # 2 sequences of 40 positions, the last 21 of each queries (Q 42, K 80), 16 heads of width 32: v1's one query and one 2048-key tile per program (one masked 64-key step); the variant: query pairs (one pair straddles the two sequences' windows), 16-key steps in 16-key tiles (the overlapping tiles past the first), 2 warps, 1 stage
    "flaggems_dsa_indexer": ({"seqs": 2, "ctx": 40, "m": 21, "h": 16, "d": 32}, {"triton_v1": {"bq": 2, "bk": 16, "tk": 16, "num_warps": 2, "num_stages": 1}}),
    # 2 sequences of 48 cached tokens over 16-token pages (a shuffled 6-page pool), 16 heads, 576-wide rows (512 latent + 64 rope): v1's 64 heads per program (masked: EVEN_H off) and 64-row steps (none whole: the masked tail alone); the variant: 16 heads per program (EVEN_H on), 32-row steps (one whole, a 16-row tail), 2 warps, 1 stage
    "flaggems_flash_mla": ({"b": 2, "h": 16, "n": 48, "d": 576, "page": 16}, {"triton_v1": {"block_h": 16, "block_n": 32, "num_warps": 2, "num_stages": 1}}),
    # 9 tokens into a 30-slot pool, rows of 40 latent + 24 rope (k_rope a strided view), exact: v1's 128-value block (one, across the boundary: the two-load branch, masked past 64); the variant: 16 (two latent blocks, one across the boundary, one rope), 2 warps
    "sglang_mla_kv_store": ({"tokens": 9, "nope": 40, "rope": 24, "slots": 30}, {"triton_v1": {"block": 16, "num_warps": 2}}),
    # 50 tokens of 3 heads 24 wide (BD 32, masked; some values past the threshold 20): v1's 32-token tiles (two, the second partly masked); the variant: 16-token tiles (four), 1 warp, 1 stage
    "sglang_kda_gate": ({"tokens": 50, "heads": 3, "head_dim": 24}, {"triton_v1": {"block_t": 16, "num_warps": 1, "num_stages": 1}}),
    # 40 tokens: v1's 16 tokens and 1 warp a program (three programs, the last half masked); the variant: 32-token programs (two, the second mostly masked), 2 warps, 2 stages
    "flaggems_mhc_sinkhorn": ({"tokens": 40}, {"triton_v1": {"block_n": 32, "num_warps": 2, "num_stages": 2}}),
    # 5 tokens of 4 bf16 streams 300 wide (bf16 whatever the dtype): v1's 256-column steps (2 per stream and pass, the second masked at 44), 4 warps, 1 stage; the variant: 128-column steps (3, the last masked), 2 warps, 2 stages
    "flaggems_mhc_pre": ({"tokens": 5, "hidden": 300}, {"triton_v1": {"block_h": 128, "num_warps": 2, "num_stages": 2}}),
    # A [40, 100]: v1's 32 x 32 tiles (2 a side, 3 programs; rows 40..63 wrap modulo 40 and are not stored), 32-deep steps (4, the last masked); the variant: 16 x 16 tiles (3 a side, 6 programs, the last row and column of tiles cut at 40), 64-deep steps (2, the second masked), 1 warp, 1 stage
    "flaggems_mm_syrk": ({"m": 40, "k": 100}, {"triton_v1": {"block_m": 16, "block_k": 64, "num_warps": 1, "num_stages": 1}}),
    # 2 videos of 3 channels, 3 frames of 13 x 11, 2 replicated rows and columns each side and 2 frames in front (every clamp taken, 17 x 15 output slices): v1's 16 x 64 tiles (one row of a tile masked); the variant: 4 x 16 tiles (the fifth row tile three-quarters masked), 1 warp
    "flaggems_replication_pad3d": ({"batch": 2, "channels": 3, "frames": 3, "height": 13, "width": 11, "pad_hw": 2, "pad_t": 2}, {"triton_v1": {"block_h": 4, "block_w": 16, "num_warps": 1}}),
    "flaggems_bucket_topk": ({"rows": 4, "s": 6000, "k": 512, "gap": 1500}, {"triton_v1": {"bs": 1024, "bss": 64, "num_warps": 4, "num_stages": 2}}),
    # 40 tokens top-2 over 4 experts (16, 20, 21 and 23 rows), K 40, N 48 (no multiples of the steps): v1's 128 x 256 tiles (one an expert, rows and columns masked, every store the masked pointer path), 64-deep steps (one, masked), 4 programs (the interpreter's NUM_SMS); the variant: 16 x 16 tiles (whole row tiles stored through C's descriptor, the rest masked), 32-deep steps (two), GROUP_M 2, 3 programs dealt the 21-tile list, 1 warp, 1 stage
    "flaggems_grouped_mm": ({"t": 40, "topk": 2, "g": 4, "k": 40, "n": 48}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 32, "group_m": 2, "num_warps": 1, "num_stages": 1, "programs": 3}}),
    # 40 tokens x 48 -> 56 through the weight's transposed view (column-major b): v1's 32 x 32 tiles, 32-deep steps (the edge tiles and the second step zero-filled by the descriptors); the variant: 16 x 16 tiles, 16-deep steps in GROUP_M 2 bands, 1 warp, 1 stage
    "flaggems_mm_tma": ({"m": 40, "k": 48, "n": 56}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "group_m": 2, "num_warps": 1, "num_stages": 1}}),
    # a [96, 80] weight in three 32-row groups (10 packed columns): v1's 32 x 32 tiles (one column of programs, 22 packed columns masked, one row of programs per group); the variant: 8 rows x 4 packed columns (three column programs, the last half masked; four row programs per group), 2 warps
    "sglang_awq_dequant": ({"k": 96, "n": 80, "group": 32}, {"triton_v1": {"block_x": 4, "block_y": 8, "num_warps": 2}}),
    "sglang_fp8_kv_store": ({"tokens": 13, "heads": 4, "head_dim": 64, "page_size": 16}, {"triton_v1": {"block_head": 2, "block_dim": 16, "num_warps": 2, "num_stages": 1}}),
    "sglang_kda_cumsum": ({"seqs": 3, "seqlen": 20, "heads": 3, "head_dim": 40, "chunk": 16}, {"triton_v1": {"block_s": 16, "num_warps": 1}}),
    # three requests of 15, 15 and 17 tokens on two adapters, rank 24 (two 16-deep steps, the second masked), q 40 wide, k and v 24: v1's 16 x 64 tiles (every slice's columns masked past its width, the 17-token request's second row tile one live row); the variant: 32-row tiles, 16-wide column blocks (three for q, two for k and v, the k and v slices' third fully masked), one 32-deep step, 2 warps, 1 stage
    "sglang_qkv_lora_b": ({"tokens": 47, "seqs": 3, "loras": 2, "rank": 24, "q_out": 40, "kv_out": 24}, {"triton_v1": {"block_s": 32, "block_n": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # 13 tokens x 3 heads of 40 (39 rows, BLOCK_N 64 masked past 40): v1's 4 rows a program from the interpreter's 4 SMs (10 programs, the last 3 rows live), 1 warp; the variant: 16 rows (3 programs, the last 7 live), 2 warps
    "sglang_rms_norm_gated": ({"tokens": 13, "heads": 3, "head_dim": 40}, {"triton_v1": {"rows_per_block": 16, "num_warps": 2}}),
    "sglang_dit_rotary": ({"tokens": 19, "heads": 3, "head_dim": 40}, {"triton_v1": {"block_hs_half": 16, "num_warps": 1, "num_stages": 2}}),
    # q and k over 21 tokens, 3 heads of 40 (all 40 rotated, on a 5 x 5 patch grid): v1's 64-column tile (20 of each 32-wide half live), 8 tokens a program (3 blocks, the last 5 live, 18 programs), 4 warps; the variant: 4 tokens a program (6 blocks, the last 1 live), a 128-column tile (20 of 64 live per half), 1 warp
    "vllm_vit_rotary": ({"qk": 2, "tokens": 21, "heads": 3, "head_dim": 40}, {"triton_v1": {"block_m": 4, "block_k": 128, "num_warps": 1}}),
    # 2 requests of 30 tokens after 240 (3 pages each, permuted in a 6-page pool), 2 KV heads of 4 query heads of 32, top-2: tokens before 256 keep both causal blocks, later ones their own and one of two (the other masked); v1's 16-token tiles (two, the second cut at 14; 64 rows), 4 warps (vLLM's formula), 3 stages; the variant: 8-token tiles (four, the last cut at 6), 4 warps, 1 stage
    "vllm_m3_sparse_prefill": ({"reqs": 2, "q_len": 30, "prefix": 240, "kv_heads": 2, "group": 4, "head_dim": 32, "topk": 2}, {"triton_v1": {"tile_q": 8, "num_warps": 4, "num_stages": 1}}),
    # 5 tokens of 200 (BLOCK_D 256, masked), 5 slots, a block-write step: the new prefix stored as block 4, 4 blocks and the prefix mixed: v1's decode launch (4 sources a step: two steps, the second 3 lanes masked), 8 warps, 2 stages; the variant: 2 sources a step (three, the last half masked), 2 warps, 1 stage
    "vllm_kimi_attn_res": ({"tokens": 5, "hidden": 200, "slots": 5, "sources": 4, "layer_kind": 2}, {"triton_v1": {"block_l": 2, "num_warps": 2, "num_stages": 1}}),
    # 37 tokens of top-4 over 32 experts (148 ids, no expert twice in one program's 8, uneven: some experts empty), block 8: stage 1 fills 512 sorted lanes for 372 slots and 64 expert lanes for 47 blocks (both masked), 19 of 32 programs count ids (the last 4 of 8 masked), the vector column scan (32 a power of two), 33 blocks labelled and 14 left 0; v1: 4 warps each; the variant: 1, 2, 1 and 8 warps
    "flaggems_moe_align": ({"tokens": 37, "experts": 32, "topk": 4, "block_size": 8}, {"triton_v1": {"count_warps": 1, "scan_warps": 2, "offsets_warps": 1, "scatter_warps": 8}}),
    # 4 requests of 400, 281, 362 and 243 tokens (4, 3, 3 and 2 pages, permuted in a 12-page pool), 2 query tokens each, 2 KV heads of 4 query heads of 32 (16-row tiles, 12 rows masked), top-3: the first request's tokens keep 3 of 4 blocks, the last's list ends in -1 (2 causal blocks); v1's 2 chunks (vLLM's rule: 2 entries then 1, the last request's second chunk empty), 4 warps, 3 stages; the variant: 4 chunks of one entry (the fourth empty for every token), 2 warps, 1 stage, the merge with 1 warp
    "vllm_m3_sparse_decode": ({"reqs": 4, "q_len": 2, "ctx": 400, "kv_heads": 2, "group": 4, "head_dim": 32, "topk": 3}, {"triton_v1": {"splits": 4, "num_warps": 2, "num_stages": 1, "merge_warps": 1}}),
    # 9 requests committing 1, 4, 3, 2, 1, 4, 3, 2 and 1 tokens of a 4-token window over 3 layers x 2 heads of 40 (BLOCK_K 64: 24 key lanes masked), the records past each commit length 100 to 1000 times larger; align mode: the 8th closes its block after the first of its 2 tokens (boundary state to its source slot, final state to a new one), the others fold a boundary they do not store; v1: 32 rows (two tiles, the second 8 live), 4 warps, 2 stages; the variant: 16 rows (three tiles, the last 8 live), 2 warps, 1 stage
    "vllm_kda_state_commit": ({"reqs": 9, "layers": 3, "heads": 2, "head_dim": 40, "window": 4, "align": 1}, {"triton_v1": {"block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # 3 requests of 3 draft tokens, 2 q/k heads and 4 value heads (GQA 2), dk 24 (BK 32: 8 rows masked), dv 20: v1's 8-column slices (3, the last half masked), 1 warp, 3 stages, every step's state cached; the variant: 16-column slices (2, the second 12 masked), 2 warps, 1 stage
    "sglang_gdn_verify": ({"reqs": 3, "step": 3, "heads": 2, "vheads": 4, "dk": 24, "dv": 20}, {"triton_v1": {"block_v": 16, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 37 tokens top-2 over 5 experts (74 sorted rows, 14 to 26 an expert; expert 2 unrouted: its early exit, its slab left zero), hidden 40, inter 20 (40 gradient rows): v1's one 64 x 128 tile per expert (both masked), 32-row steps (one, masked), 8 warps, 2 stages; the variant: 16 x 16 tiles (3 x 3 an expert, the last of each masked), 16-row steps (one or two, the last masked), 2 warps, 1 stage
    "liger_moe_up_proj_wgrad": ({"tokens": 37, "hidden": 40, "inter": 20, "experts": 5, "k": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 20 tokens top-2 over 6 experts (40 sorted assignments, 4 to 9 an expert), hidden 80 (5 e4m3 scale groups), inter 24 (n 48): v1 is vLLM's default for 20 tokens, 16 x 64 x 128 tiles (the 64-column tile masked and its columns wrapping, the one K step masked past 80: the non-divisible branch), ungrouped, 4 warps, 3 stages; the variant: 32 x 16 x 32 tiles (20 tokens under BLOCK_SIZE_M: the invoke's EM bound; 3 column blocks; 3 K steps, the last half masked, its scales masked too), groups of 2, 2 warps, 1 stage
    "vllm_nvfp4_moe": ({"tokens": 20, "hidden": 80, "inter": 24, "experts": 6, "topk": 2}, {"triton_v1": {"block_m": 32, "block_n": 16, "block_k": 32, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # 3 planes of 19 x 37 under a 3 x 3 stride-1 window without padded pixels counted (divisors 4, 6 and 9): v1's 16 x 16 tiles (2 x 3 a plane, the last row of tiles 3 rows live, the last column 5), 4 warps; the variant: 8 x 32 tiles (3 x 2, the last row of tiles 3 rows live, the last column 5), 2 warps
    "flaggems_avg_pool2d_backward": ({"batch": 1, "channels": 3, "height": 19, "width": 37, "pool": 3}, {"triton_v1": {"block_h": 8, "block_w": 32, "num_warps": 2}}),
    # 5 tokens x 3 heads of 256 (two 128-column groups a row: the scales' second column), UE8M0 scales, e4m3 exact (torch's cast under the interpreter): v1's 32-row tiles, one program per group for the 15 query rows and for the 5 key rows (rows masked), 4 warps, both launches; the variant: 4 query rows a program (four, the last with 3), 2 warps, and 2 key rows a program (three, the last with 1), 1 warp
    "sglang_nsa_act_quant": ({"tokens": 5, "heads": 3, "head_dim": 256}, {"triton_v1": {"q_block_m": 4, "q_warps": 2, "k_block_m": 2, "k_warps": 1}}),
    # tl.dot, fp32 and fp16; 5 rows over a 4-token ring (positions 3, 2, 1, 0, 3: rows 0 and 4 flush, the rest replay 2, 1 and 0 cached tokens and append; ring rows past a position ten times larger), 4 heads in 2 groups, head_dim 20, dstate 24 (32 lanes, 8 masked), the dot's K padded to 16 (12 masked): v1 is vLLM's Hopper launch, 16-row programs (two, the second 4 live), 1 warp, one 32-column step for the read-out and the rebuild, 2 stages; the variant: 32-row programs (one, 12 masked), 2 warps, 16-column steps (two, the second 8 live), 1 stage
    "vllm_replayssm_decode": ({"seqs": 5, "heads": 4, "head_dim": 20, "dstate": 24, "groups": 2, "window": 4}, {"triton_v1": {"block_m": 32, "num_warps": 2, "nf_dstate_tile": 16, "fl_dstate_tile": 16, "num_stages": 1}}),
    # 37 rows (padded to 40) of 3 and 5 scales (hidden 384 and inter 640: 4- and 8-lane blocks, 1 and 3 lanes masked), each stored to its group's row of the column-major buffer: v1's 37 programs of one row each, 4 warps, both launches; the variant: 5 programs walking 7 or 8 rows each with 1 warp for the hidden scales, 16 programs walking 2 or 3 rows each with 2 warps for the down scales
    "sglang_tma_align_scale": ({"rows": 37, "hidden": 384, "inter": 640}, {"triton_v1": {"h_programs": 5, "h_warps": 1, "d_programs": 16, "d_warps": 2}}),
    # 20 tokens top-4 over 7 local experts of 8 (70 live rows: 3, 17, 11, 6, 19, 14 and an empty expert), 16-row segments (gaps of 13, 15, 5, 10, 13 and 2 rows, 64 rows of slack past the last), inter 96 in three 32-column groups, UE8M0 scales, e4m3 exact (torch's cast under the interpreter): v1 is vLLM's launch, 8-row tiles, 4 row programs per expert and group (a 192-row workspace), 4 warps, 3 stages, each segment one pass (the 17- and 19-row segments' third tile partly masked, the fourth program idle); the variant: 4-row tiles under a 64-program budget (4 row programs, 16 rows a step: the 17- and 19-row segments' first program walks twice, its second tile partly masked), 2 warps, 1 stage
    "vllm_silu_mul_colmajor_quant": ({"tokens": 20, "topk": 4, "experts": 7, "global_experts": 8, "inter": 96, "group": 32, "align": 16}, {"triton_v1": {"block_m": 4, "max_ctas": 64, "num_warps": 2, "num_stages": 1}}),
    # 5 tokens (the scale buffer aligned to 8: 3 padding programs a column store zero scales), 2 groups of 6 heads of 64 read from a 16-head buffer (heads 12 to 15 hold 1e4), the last 16 values of each head rotated back (24 nope pairs: their table loads masked), 16-value scale blocks (4 a head, 24 a group), e4m3 exact (torch's cast under the interpreter): v1 is vLLM's launch, gcd(6, 4) = 2 heads a program (6 a token, 48 programs), 4 warps (under 2048 programs), 1 stage; the variant: 1 head a program (12 a token, 96 programs), 2 warps
    "vllm_dsv4_inv_rope_quant": ({"tokens": 5, "groups": 2, "heads_per_group": 6, "padded_heads": 16, "head_dim": 64, "rope_dim": 16, "group_size": 16, "context": 40}, {"triton_v1": {"block_h": 1, "num_warps": 2}}),
    # tl.dot, fp32 and fp16; 37 tokens top-2 over 5 experts (74 sorted rows, 17 to 21 an expert; expert 2 unrouted: no routing tile), hidden 40, inter 20: v1's 64-row routing tiles (one an expert, masked), one 128-column program a tile (20 live: one atomic partial per row's routing-weight gradient), one 64-deep hidden step (masked), 8 warps, 2 stages; the variant: 16-row tiles (two an expert, the second masked), 16-column programs (two, the second 4 live: two atomic partials a row), 16-deep hidden steps (three, the last masked), 2 warps, 1 stage
    "liger_moe_down_proj_bwd": ({"tokens": 37, "hidden": 40, "inter": 20, "experts": 5, "k": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 19 images, 5 -> 40 channels on a 9 x 11 map, a 3 x 3 filter at stride 2 (padding 1: a 5 x 6 output, the taps past both borders masked): v1's 32 x 32 x 32 tiles (45 filter rows in two tiles, the second 13 live; 40 channels in two, the second 8 live; the 19 images one masked step a position), 4 warps; the variant: 16 x 16 x 16 tiles (three filter-row tiles, the last 13 live; three channel tiles, the last 8 live; two image steps a position, the second 3 live), 2 warps
    "flaggems_conv2d_wgrad": ({"batch": 19, "channels_in": 5, "channels_out": 40, "height": 9, "width": 11, "filter_size": 3, "stride": 2}, {"triton_v1": {"block_ci_hk_wk": 16, "block_co": 16, "block_no": 16, "num_warps": 2}}),
    # 5 live requests and 1 padded row (slot -1: a zero state, nothing stored), 3 heads, dk 32 (one 32-lane key block: the KDA path loads the gate row and dt_bias unmasked), dv 24, the per-key-channel gate, q/k L2 norm in the kernel, the fp32 pool updated in place: v1 is SGLang's launch, one 32-column value block (8 masked), 1 warp (3 stages, no knob); the variant: 16-column blocks (two, the second 8 live), 2 warps
    "sglang_kda_decode": ({"reqs": 5, "pad": 1, "heads": 3, "dk": 32, "dv": 24}, {"triton_v1": {"block_v": 16, "num_warps": 2}}),
    # tl.dot, fp32 and fp16; 37 tokens, k 192 in 64-row groups, n 88 (11 packed words), the constant zero point 8 (uint4b8): v1 is vLLM's CUDA launch for 33 to 64 rows, 64 x 64 x 32 tiles (one row tile, 27 rows masked; two column tiles, the second 24 live and its packed-word loads masked; 6 K steps, two a group), 4 warps, 3 stages; the variant: 16 x 32 x 16 tiles (three row tiles, the last 5 live; three column tiles, the last 24 live; 12 K steps, four a group), 2 warps, 1 stage
    "vllm_w4a16_gemm": ({"tokens": 37, "k": 192, "n": 88, "group": 64}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # 5 live requests and 2 padded rows (slot -1: the program returns, nothing read or stored, the output rows left zero), 3 heads of 128 (the K split of 128 must divide the head), an 11-slot fp32 pool updated in place, SGLang's slopes: v1 is SGLang's decode launch at 7 rows, one 128-row K split (no partial sum), four 32-column V splits, 2 warps, 2 stages; the variant: 32-row K splits (four partials in the dtype summed by torch), 64-column V splits (two), 1 warp (no masks: the splits divide the head)
    "sglang_seg_la_decode": ({"reqs": 5, "pad": 2, "heads": 3, "head_dim": 128}, {"triton_v1": {"k_split": 32, "v_split": 64, "num_warps": 1}}),
    # tl.dot, fp32 and fp16; 37 tokens top-2 over 5 experts (74 sorted rows: 11, 28, 13 and 22 an expert; expert 2 unrouted: no routing tile), hidden 40, inter 20 (gate and up halves of d_pre_act): v1's 64-row routing tiles (one an expert, masked), one 128-column program a tile (40 live), one 64-deep inter step (20 live) of a gate and an up tl.dot, 8 warps, 2 stages; the variant: 16-row tiles (one or two an expert, the last masked), 16-column programs (three, the last 8 live), 16-deep inter steps (two, the second 4 live), 2 warps, 1 stage
    "liger_moe_up_proj_dgrad": ({"tokens": 37, "hidden": 40, "inter": 20, "experts": 5, "k": 2}, {"triton_v1": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 12 query tokens at positions 18 to 29 of a 30-row pool (19 to 30 valid selections of a 40-entry list, the rest -1: masked, every step still run), 20 heads, 536-wide rows (512 latent, a 24-column rope tail padded to 32 and masked): v1 is FlagGems' launch, 32 heads a program (12 masked), 16 entries a step (three, the last 8 live), 8 warps, 4 stages; the variant: 16 heads a program (two blocks, the second 4 live), 32 entries a step (two, the second 8 live), 2 warps, 1 stage
    "flaggems_flash_mla_sparse": ({"sq": 12, "skv": 30, "h": 20, "d": 536, "topk": 40}, {"triton_v1": {"block_h": 16, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # 37 tokens top-3 over 5 experts (111 expert-sorted rows of y gathered through the inverse sort), hidden 200, routing weights renormalised per token: v1 is Liger's pinned launch, one program per token, 128-column tiles (two, the second 72 live), one 4-row top-k step (3 live), 4 warps, 4 stages; the variant: 64-column tiles (four, the last 8 live), 2-row steps (two, the second 1 live), 2 warps, 1 stage
    "liger_moe_combine": ({"tokens": 37, "hidden": 200, "experts": 5, "k": 3}, {"triton_v1": {"block_h": 64, "block_k": 2, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 2 sequences of 20 patches, 3 heads of 24 (padded to 32: 8 masked lanes), non-causal: v1 is vLLM's launch off CUDA, 64 x 64 tiles (32 x 32 for fp32; one query tile a head, 20 rows live; one KV step, masked), 4 warps, 1 stage; the variant: 16 x 16 tiles (two query tiles, the second 4 rows live; two KV steps, the second masked), 2 warps, 2 stages
    "vllm_vit_prefill_attn": ({"b": 2, "s": 20, "h": 3, "d": 24}, {"triton_v1": {"block_m": 16, "block_n": 16, "num_warps": 2, "num_stages": 2}}),
    # 7 tokens top-3 (21 slots), 8 experts at EP 2 (4 local): 10 slots live, 11 of other ranks (-1: the program returns, its zeroed row untouched), inter 200: v1 is SGLang's launch, one 512-column step (312 masked), 4 warps, 3 stages; the variant: 64-column steps (four, the last 8 live), 2 warps, 1 stage
    "sglang_moe_act_mul": ({"tokens": 7, "topk": 3, "experts": 8, "ep": 2, "inter": 200}, {"triton_v1": {"block_size": 64, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 3 heads, 37 tokens (x a transposed view of [37, 3, 100], the output written through one), rank 100, v 40: v1 is FlagGems' first configuration, 32 x 32 tiles (two row tiles, the second 5 rows live; two column tiles, the second 8 live), four 32-deep steps (the last 4 live: DIVISIBLE_M/N/K all off), GROUP_M 1, 4 warps, 2 stages; the variant: 16 x 16 tiles (three row tiles, the last 5 live; three column tiles, the last 8 live), 64-deep steps (two, the second 36 live), GROUP_M 2 (a head's three row tiles in a band of two and a remainder band of one), 2 warps, 1 stage
    "flaggems_bmm": ({"heads": 3, "tokens": 37, "kv_lora_rank": 100, "v_head_dim": 40}, {"triton_v1": {"tile_m": 16, "tile_n": 16, "tile_k": 64, "group_m": 2, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 61 tokens from 3 requests (20, 20 and 21 tokens) on 2 adapters, rank 8 x 3 stacked A's (24 columns), hidden 40: v1 is SGLang's launch, 16-row tiles (two a request, the second 4 or 5 live), 16-column tiles (two, the second 8 live), one 256-deep hidden step (40 live), 4 warps, 3 stages; the variant: 32-row tiles (one a request, 20 or 21 live), 32-column tiles (one, 24 live), 16-deep steps (three, the last 8 live), 2 warps, 1 stage
    "sglang_sgemm_lora_a": ({"tokens": 61, "seqs": 3, "loras": 2, "rank": 8, "slices": 3, "hidden": 40}, {"triton_v1": {"block_s": 32, "block_r": 32, "block_k": 16, "num_warps": 2, "num_stages": 1}}),
    # fp32 only (mhc_bwd casts to fp32); 101 tokens of 4 x 4 Sinkhorn outputs and gradients, 8 CG iterations in registers: v1 is FlagGems' launch, 64 tokens a program (two programs, the second 37 live), 4 warps (two lanes a token), 3 stages; the variant: 32 tokens a program (four, the last 5 live), 2 warps, 1 stage
    "flaggems_mhc_sinkhorn_bwd": ({"tokens": 101}, {"triton_v1": {"block_s": 32, "num_warps": 2, "num_stages": 1}}),
    # int8 tl.dot into int32, fp32 and fp16 outputs; 37 tokens, k 304, n 88, the weight the transposed [k, n] view of its [n, k] rows, per-token and per-channel fp32 scales: v1 is vLLM's heuristic for 33 to 64 rows, 64 x 64 x 256 tiles (one row tile, 27 rows masked; two column tiles, the second 24 live; two K steps, the second 48 live), 4 warps, 3 stages; the variant: 16 x 32 x 32 tiles (three row tiles, the last 5 live; three column tiles, the last 24 live; ten K steps, the last 16 live), 2 warps, 1 stage
    "vllm_int8_scaled_mm": ({"tokens": 37, "k": 304, "n": 88}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 32, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 300 tokens (3 locks of 128 rows), hidden 72, vocab 200, no valids, no softcap, the logit average returned: v1 is CCE's fixed launch, 256 x 128 tiles (two row tiles, the second 44 rows live and wrapped; two vocabulary tiles, the second 72 live: each row's LSE the lock-held merge of two partials), three 32-deep steps (the last 8 live: EVEN_D off), bands of 8, 8 warps, 3 stages; the variant: 16 x 64 tiles (19 row tiles, the last 12 live; 4 vocabulary tiles, the last 8 live), 16-deep steps (five, the last 8 live), bands of 4 (a remainder band of 3), 2 warps, 1 stage
    "cce_lse_forward": ({"tokens": 300, "hidden": 72, "vocab": 200}, {"triton_v1": {"block_b": 16, "block_v": 64, "block_d": 16, "group_b": 4, "num_warps": 2, "num_stages": 1}}),
    # fp32 and fp16 in, e4m3 out (power-of-two scales); 77 rows in 4 uneven expert groups (end offsets 15, 40, 63, 77 at seed 3: 1-row units, 77 being no multiple of 16), grad_output 40 wide and the input 24: v1 is torchao's first autotune config, 32 columns (two blocks: the second 8 live in grad_output and past the input, which it skips), 64-row steps (one a group, partial), 4 warps, 2 stages; the variant: 16 columns (three blocks, the last 8 live in grad_output and past the input), 16-row steps (one or two a group, the last partial), 2 warps, 1 stage
    "torchao_jagged_fp8_colwise": ({"rows": 77, "groups": 4, "n1": 40, "n2": 24}, {"triton_v1": {"block_size": 16, "block_size_iter": 16, "num_warps": 2, "num_stages": 1}}),
    # no tl.dot, fp32 and fp16; 3 rows (one program row each), k 512 (one 64-row group a pair of slices at v1), n 48, HQQ-style 4-bit weights packed eight to an int32 down K with fp16 scales and shifts: v1 is GemLite's default config through its pruner (the shape is not in its H100 table), 32 columns x 2 x 16-deep slices (two column tiles, the second 16 live: EVEN_N off, the B loads and atomics masked), activations first, 1 warp, 1 stage, 16 atomic adds an output; the variant: 64 columns (one tile, 48 live), 2 x 32-deep slices (the whole group), 2 warps, 2 stages, 8 atomic adds an output
    "gemlite_gemv_revsplitk": ({"tokens": 3, "k": 512, "n": 48, "group": 64}, {"triton_v1": {"block_n": 64, "block_k": 32, "num_warps": 2, "num_stages": 2}}),
    # e4m3 tl.dot with the activations quantized in the loop, fp32 and fp16 in; 5 rows (of the 16-row tile), k 1024 (8 K blocks), n 80 (one partial 128-row scale block): v1 is Unsloth's launch for the shape (16 columns, 5 tiles; one split: 8 K blocks are too few to split), 4 warps, 5 stages; the variant: 32 columns (three tiles, the last 16 live), K split in three (3, 3 and 2 blocks, the last program to arrive at a tile summing the fp32 partials), 2 warps, 1 stage
    "unsloth_fp8_small_m": ({"tokens": 5, "k": 1024, "n": 80}, {"triton_v1": {"block_n": 32, "split_k": 3, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 150 tokens from 3 requests (50, 50, 50) on 2 rank-16 adapters (BLOCK_SIZE_R 16), hidden 200, n 72, scalings 2 and 1, added into the base output: v1 is LMDeploy's first autotune config, 32 x 128 x 128 (the grid's first axis cdiv(150, 32) = 5 tiles a request, 2 of them live: the second tile 18 rows live, rows wrapped modulo the length; two shrink steps, the second 72 deep; one expand step, 72 columns live), 4 warps, 4 stages; the variant: 16 x 32 x 64 (10 tiles a request, 4 live, the last 2 rows live; four shrink steps, the last 8 deep; three expand steps, the last 8 columns live), 2 warps, 1 stage
    "lmdeploy_fused_lora": ({"tokens": 150, "seqs": 3, "loras": 2, "rank": 16, "hidden": 200, "n": 72}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 64, "num_warps": 2, "num_stages": 1}}),
    # tl.dot, fp32 and fp16; 150 tokens, out 300, hidden 100, an SM budget of 3 (the grid and the tile stride): v1 is FlashInfer's one configuration, 128 x 128 x 64 tiles (two row tiles, the second 22 rows live and the rest clamped to row 0; three column tiles, the last 44 live), GROUP_SIZE_M 8, two 64-deep K steps (the second 36 live), 4 warps, 3 stages, 6 tiles over 3 persistent programs (two each); the variant: 16 x 32 x 32 tiles (10 row tiles, the last 6 live; 10 column tiles, the last 12 live), bands of 4 row tiles (a remainder band of 2), four K steps (the last 4 live), 2 warps, 1 stage, 100 tiles over the 3 programs (34 or 33 each)
    "flashinfer_persistent_gemm": ({"tokens": 150, "out": 300, "hidden": 100, "sm_budget": 3}, {"triton_v1": {"block_m": 16, "block_n": 32, "block_k": 32, "group_m": 4, "num_warps": 2, "num_stages": 1}}),
    # no tl.dot, no loop, fp32 and fp16, in place after the copy; 5 of 7 crops kept (unsorted, as randperm gives them), 9 tokens, 600 channels, a LayerScale vector, alpha 7/5: v1 is xFormers' fixed launch, 1 crop x 1 token x 512 channels (5 x 9 x 2 programs, the second channel tile 88 live), 4 warps; the variant: 2 crops x 4 tokens x 256 channels (3 x 3 x 3 programs: the last crop tile 1 live, its index load masked; the last token tile 1 live; the last channel tile 88 live), 2 warps
    "xformers_scaled_index_add": ({"batch": 7, "kept": 5, "tokens": 9, "channels": 600}, {"triton_v1": {"block_index": 2, "block_row": 4, "block_col": 256, "num_warps": 2}}),
    # no tl.dot, fp32 and fp16; 3 sequences of 70 steps, 40 channels, width 4 (BW 4), SiLU, no bias or state: v1 is FLA's launch, 64-step chunks (two a sequence, the second 6 live, the taps' rows past the end masked: 6 fp32 partials), 16-channel tiles (three, the last 8 live), 4 warps; the variant: 32-step chunks (three, the last 6 live: 9 partials), 32-channel tiles (two, the second 8 live), 2 warps
    "fla_causal_conv1d_bwd": ({"batch": 3, "seqlen": 70, "channels": 40, "width": 4}, {"triton_v1": {"block_t": 32, "block_d": 32, "num_warps": 2}}),
    # no tl.dot, fp32 and fp16; 700 routed rows over 5 experts (153, 100, 123, 92, 232: sizes no multiple of the tile), hidden 200, fp32 routing probabilities, the dscales fusion on: v1 is TE's fixed launch, 128-row steps (one or two tiles an expert, the last partial), 128 columns (two column blocks, the second 72 live), 4 row splits (one tile a split: the splits past an expert's one or two tiles walk one fully masked step and add zeros), 4 warps, 2 stages; the variant: 32-row steps (3 to 8 tiles an expert), 3 row splits (2 or 3 tiles a split, the third split of the 100- and 123-row experts idle), 64 columns (four blocks, the last 8 live: four dscales partials a row), 2 warps, 1 stage
    "te_grouped_dbias_dscales": ({"rows": 700, "groups": 5, "hidden": 200}, {"triton_v1": {"block_m": 32, "block_h": 64, "n_row_splits": 3, "num_warps": 2, "num_stages": 1}}),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_versions_match_the_reference_on_the_cpu_interpreter(name: str) -> None:
    _spec_or_skip(name)
    dims, variants = CASES[name]
    env = {
        **os.environ,
        "TRITON_INTERPRET": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(FOREIGN / name / "spec.py"), json.dumps(dims), json.dumps(variants)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )  # fmt: skip
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    results = json.loads(lines[-1].removeprefix("RESULT "))
    assert any(label.startswith(("triton_v1/", "torch_v1/")) for label in results)
    for variant in variants:
        assert any(label.startswith(variant + "{") for label in results)
    bad = {label: v for label, v in results.items() if not v[0] <= v[1]}
    assert not bad, bad
