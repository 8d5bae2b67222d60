"""Routing reads English, French and Japanese: one table of phrasings and their stages.

The French source's own examples come first (quoted as the source writes them), then
their English and Japanese counterparts, then phrasings that once routed wrongly
(a Japanese character glued to "TileIR", 既存, negation, conversion from CuTe), then
more of each kind.  Each row: (language, request, SM version, existing Triton kernel
given, expected stages, expected rule).
"""

from __future__ import annotations

import pytest

from kbopt.agents.roles import CUDA_GRAPH, CUTE, PROFILING, TILEIR, TRITON
from kbopt.agents.routing import RULES, check_delegation, route

PIPELINE = (TRITON, TILEIR)

TABLE: list[tuple[str, str, int | None, bool, tuple[str, ...], str]] = [
    # --- the French source's examples, as written
    ("fr", "Générer un kernel TileIR", None, False, PIPELINE, "tileir-generate"),
    ("fr", "Optimiser pour TileIR", None, False, PIPELINE, "tileir-optimize"),
    ("fr", "Convertir un kernel Triton en TileIR", None, False, (TILEIR,), "tileir-convert"),
    ("fr", "Générer un kernel CuTe DSL", None, False, (CUTE,), "cute"),
    ("fr", "Écrire un kernel Triton", None, False, (TRITON,), "triton"),
    ("fr", "Fusion Triton", None, False, (TRITON,), "triton"),
    ("fr", "Écrivez et benchmarkez un kernel TileIR", None, False, PIPELINE, "tileir-generate"),
    (
        "fr",
        "Écrivez un kernel Triton pour SiLU-mul fusionné (SwiGLU)",
        None,
        False,
        (TRITON,),
        "triton",
    ),
    (
        "fr",
        "Optimisez le kernel Triton à kernels/swiglu/triton_v1.py pour le backend TileIR",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    (
        "fr",
        "Ajoutez les configs TileIR à fused_gelu.py pour Blackwell",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    (
        "fr",
        "Convertissez le kernel Triton existant pour utiliser TileIR",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    (
        "fr",
        "Générez un kernel CuTe DSL pour l'opération element-wise SiLU-mul",
        None,
        False,
        (CUTE,),
        "cute",
    ),
    ("fr", "Générez un kernel CuTe DSL pour l'opération GEMM", None, False, (CUTE,), "cute"),
    ("fr", "Écrivez un kernel Triton pour GELU-dropout fusionné", None, False, (TRITON,), "triton"),
    ("fr", "Appliquer CUDA Graph à mon modèle", None, False, (CUDA_GRAPH,), "cuda-graph"),
    (
        "fr",
        "Analysez train.py pour la compatibilité CUDA Graph",
        None,
        False,
        (CUDA_GRAPH,),
        "cuda-graph",
    ),
    (
        "fr",
        "Appliquez la capture CUDA Graph à la boucle d'entraînement",
        None,
        False,
        (CUDA_GRAPH,),
        "cuda-graph",
    ),
    ("fr", "Mesurez les performances avant et après", None, False, (PROFILING,), "profiling"),
    # --- the same in English
    ("en", "Generate a TileIR kernel", None, False, PIPELINE, "tileir-generate"),
    ("en", "Optimize for TileIR", None, False, PIPELINE, "tileir-optimize"),
    ("en", "Convert a Triton kernel to TileIR", None, False, (TILEIR,), "tileir-convert"),
    ("en", "Generate a CuTe DSL kernel", None, False, (CUTE,), "cute"),
    ("en", "Write a Triton kernel", None, False, (TRITON,), "triton"),
    ("en", "Write and benchmark a TileIR kernel", None, False, PIPELINE, "tileir-generate"),
    ("en", "Apply CUDA Graph to my model", None, False, (CUDA_GRAPH,), "cuda-graph"),
    ("en", "Measure the performance before and after", None, False, (PROFILING,), "profiling"),
    (
        "en",
        "Add TileIR configs to fused_gelu.py for Blackwell",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    # --- the same in Japanese
    ("ja", "TileIRカーネルを生成して", None, False, PIPELINE, "tileir-generate"),
    ("ja", "TileIR向けに最適化して", None, False, PIPELINE, "tileir-optimize"),
    ("ja", "TritonカーネルをTileIRに変換して", None, False, (TILEIR,), "tileir-convert"),
    ("ja", "CuTe DSLのカーネルを生成して", None, False, (CUTE,), "cute"),
    ("ja", "Tritonカーネルを書いて", None, False, (TRITON,), "triton"),
    ("ja", "モデルにCUDA Graphを適用して", None, False, (CUDA_GRAPH,), "cuda-graph"),
    ("ja", "最適化の前後で性能を計測して", None, False, (PROFILING,), "profiling"),
    ("ja", "ベンチマークを取って", None, False, (PROFILING,), "profiling"),
    # --- phrasings that once routed wrongly
    ("ja", "既存のTritonカーネルをTileIRで最適化", None, False, (TILEIR,), "tileir-convert"),
    ("ja", "TileIR向けに最適化して", 90, False, PIPELINE, "tileir-optimize"),
    ("en", "Write a Triton kernel, not a TileIR one", None, False, (TRITON,), "triton"),
    ("en", "Convert the CuTe kernel to TileIR", None, False, PIPELINE, "tileir-convert-other"),
    # --- negation
    ("en", "Write a softmax kernel without TileIR", None, False, (TRITON,), "triton"),
    ("en", "Write a fused softmax kernel, not in CuTe", 90, False, (TRITON,), "ampere-hopper"),
    ("en", "Optimize the GEMM in CuTe DSL instead of Triton", None, False, (CUTE,), "cute"),
    ("en", "Use Triton rather than CuTe for the reduction", None, False, (TRITON,), "triton"),
    ("en", "Don't use TileIR; a plain Triton kernel is enough", None, False, (TRITON,), "triton"),
    ("fr", "Écrivez un kernel Triton, pas un kernel TileIR", None, False, (TRITON,), "triton"),
    ("fr", "Écrivez le kernel sans TileIR", None, False, (TRITON,), "triton"),
    ("fr", "Utilisez CuTe DSL au lieu de Triton pour la GEMM", None, False, (CUTE,), "cute"),
    ("ja", "TileIRではなくTritonでカーネルを書いて", None, False, (TRITON,), "triton"),
    ("ja", "CuTeは使わずにTritonで実装して", None, False, (TRITON,), "triton"),
    ("ja", "TileIR以外でsoftmaxカーネルを書いて", None, False, (TRITON,), "triton"),
    # --- conversion: the target decides; TileIR needs a Triton kernel first
    ("en", "Port the CuTe kernel to Triton", None, False, (TRITON,), "triton"),
    ("en", "Convert the Triton kernel to CuTe DSL", None, False, (CUTE,), "cute"),
    ("en", "Port the attention kernel to CuTe", 90, False, (CUTE,), "cute"),
    (
        "en",
        "Convert the CUDA kernel in attn.cu to TileIR",
        None,
        False,
        PIPELINE,
        "tileir-convert-other",
    ),
    (
        "en",
        "Migrate the PyTorch reference to a TileIR kernel",
        None,
        False,
        PIPELINE,
        "tileir-convert-other",
    ),
    ("fr", "Convertissez le kernel CuTe en TileIR", None, False, PIPELINE, "tileir-convert-other"),
    ("fr", "Portez le kernel CuTe DSL vers Triton", None, False, (TRITON,), "triton"),
    ("ja", "CuTeカーネルをTileIRに変換して", None, False, PIPELINE, "tileir-convert-other"),
    ("ja", "CuTe DSLのカーネルをTritonに移植して", None, False, (TRITON,), "triton"),
    ("ja", "TritonカーネルをCuTe DSLに書き換えて", None, False, (CUTE,), "cute"),
    # --- existing / 既存 / existant
    (
        "en",
        "Optimize the existing Triton kernel for TileIR",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    ("en", "Optimize for TileIR (no kernel exists yet)", None, False, PIPELINE, "tileir-optimize"),
    ("en", "Speed up the existing softmax kernel", 100, False, (TILEIR,), "blackwell-existing"),
    (
        "fr",
        "Optimisez le kernel Triton existant pour TileIR sur Blackwell",
        None,
        False,
        (TILEIR,),
        "tileir-convert",
    ),
    ("fr", "Optimiser pour TileIR", None, True, (TILEIR,), "tileir-convert"),
    ("ja", "既存のカーネルをTileIRで高速化して", None, False, (TILEIR,), "tileir-convert"),
    ("ja", "既存のsoftmaxカーネルを高速化して", 100, False, (TILEIR,), "blackwell-existing"),
    ("ja", "まだカーネルはないのでTileIR向けに作って", None, False, PIPELINE, "tileir-generate"),
    # --- hardware decides when no language is named
    ("en", "Write a fused softmax kernel", 100, False, PIPELINE, "blackwell-new"),
    ("en", "Write a fused softmax kernel", 90, False, (TRITON,), "ampere-hopper"),
    ("fr", "Écrivez un kernel softmax fusionné", 100, False, PIPELINE, "blackwell-new"),
    ("fr", "Écrivez un kernel softmax fusionné", 80, False, (TRITON,), "ampere-hopper"),
    ("ja", "融合softmaxカーネルを書いて", 100, False, PIPELINE, "blackwell-new"),
    ("ja", "融合softmaxカーネルを書いて", 90, False, (TRITON,), "ampere-hopper"),
    # --- words glued to Japanese, other spellings
    ("ja", "nvtritonでRMSNormカーネルを生成", None, False, PIPELINE, "tileir-generate"),
    ("ja", "ENABLE_TILEを使ってチューニングして", 100, False, PIPELINE, "tileir-optimize"),
    ("ja", "CuTeでGEMMカーネルを作成して", 90, False, (CUTE,), "cute"),
    ("ja", "CUDAグラフを学習ループに適用", None, False, (CUDA_GRAPH,), "cuda-graph"),
    ("en", "Raise occupancy of kernels/mla_decode/cute_v2.py", 90, False, (CUTE,), "cute"),
    ("en", "Tune BLOCK_N in kernels/mla_decode/triton_v5.py", 90, False, (TRITON,), "triton"),
    ("en", "Write a cute little tile iterator kernel", 90, False, (TRITON,), "ampere-hopper"),
]


@pytest.mark.parametrize(
    ("lang", "request_text", "sm", "existing", "stages", "rule"),
    TABLE,
    ids=[f"{row[0]}-{i}" for i, row in enumerate(TABLE)],
)
def test_routing_table(
    lang: str, request_text: str, sm: int | None, existing: bool, stages: tuple[str, ...], rule: str
) -> None:
    r = route(request_text, sm=sm, existing_triton=existing)
    assert (r.stages, r.rule) == (stages, rule), (request_text, r.as_dict())
    assert r.rule in RULES
    # The first stage is always an accepted delegation of the same request.
    assert check_delegation(r.stages[0], request_text, sm=sm, existing_triton=existing) is not None


def test_the_table_covers_three_languages_with_sixty_phrasings() -> None:
    by_language = {lang: sum(1 for row in TABLE if row[0] == lang) for lang in ("en", "fr", "ja")}
    assert len(TABLE) >= 60 and min(by_language.values()) >= 15, by_language


def test_tileir_specialist_is_refused_for_a_cute_conversion() -> None:
    from kbopt.agents.routing import DelegationRefused

    with pytest.raises(DelegationRefused) as info:
        check_delegation(TILEIR, "Convert the CuTe kernel to TileIR")
    assert info.value.rule == "tileir-no-scratch"
    check_delegation(TILEIR, "Convert the CuTe kernel to TileIR", existing_triton=True)
