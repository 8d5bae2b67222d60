"""The routing rules against the French source, rule by rule.

Each row quotes the source's example (French) or restates it (English) and gives the
stages the source prescribes.  `test_every_rule_is_covered` fails if a rule in
`RULES` has no row here.
"""

from __future__ import annotations

import pytest

from kbopt.agents.roles import (
    CUDA_GRAPH,
    CUTE,
    KERNEL_DESIGNER,
    PROFILER,
    PROFILING,
    TILEIR,
    TRITON,
)
from kbopt.agents.routing import (
    RULES,
    DelegationRefused,
    RoutingError,
    check_delegation,
    route,
)
from kbopt.errors import KbError

# (rule, request, sm, existing Triton kernel, expected stages, alternatives)
ROUTES = [
    # Spécialistes / mode spécifié par l'utilisateur: « Appliquer CUDA Graph à mon modèle »
    ("cuda-graph", "Appliquer CUDA Graph à mon modèle", None, False, (CUDA_GRAPH,), ()),
    (
        "cuda-graph",
        "Analysez train.py pour la compatibilité CUDA Graph",
        None,
        False,
        (CUDA_GRAPH,),
        (),
    ),
    (
        "cuda-graph",
        "Apply CUDA graph capture to the training loop",
        90,
        False,
        (CUDA_GRAPH,),
        (),
    ),
    # « Mesurez les performances avant et après », « Benchmark train.py and report latency »
    ("profiling", "Mesurez les performances avant et après", None, False, (PROFILING,), ()),
    ("profiling", "Benchmark train.py and report latency", None, False, (PROFILING,), ()),
    (
        "profiling",
        "Profile the Triton kernel triton_v3 at b=32, s=1, t=4096",
        None,
        False,
        (PROFILING,),
        (),
    ),
    # 1. TileIR / nvtriton / ENABLE_TILE -> pipeline en deux étapes
    ("tileir-generate", "Générer un kernel TileIR", None, False, (TRITON, TILEIR), ()),
    (
        "tileir-generate",
        "Generate a TileIR kernel for fused SiLU-mul",
        100,
        False,
        (TRITON, TILEIR),
        (),
    ),
    (
        "tileir-generate",
        "Écrivez et benchmarkez un kernel TileIR",
        None,
        False,
        (TRITON, TILEIR),
        (),
    ),
    ("tileir-generate", "Write an nvtriton kernel for RMSNorm", None, False, (TRITON, TILEIR), ()),
    ("tileir-optimize", "Optimiser pour TileIR", None, False, (TRITON, TILEIR), ()),
    (
        "tileir-optimize",
        "Optimize for TileIR (no kernel exists yet)",
        None,
        False,
        (TRITON, TILEIR),
        (),
    ),
    ("tileir-optimize", "Tune it with ENABLE_TILE on Blackwell", 100, False, (TRITON, TILEIR), ()),
    ("tileir-convert", "Optimiser pour TileIR", None, True, (TILEIR,), ()),  # kernel exists
    ("tileir-convert", "Convertir un kernel Triton en TileIR", None, False, (TILEIR,), ()),
    (
        "tileir-convert",
        "Convertissez le kernel Triton existant pour utiliser TileIR",
        None,
        False,
        (TILEIR,),
        (),
    ),
    (
        "tileir-convert",
        "Ajoutez les configs TileIR à fused_gelu.py pour Blackwell",
        None,
        False,
        (TILEIR,),
        (),
    ),
    (
        "tileir-convert",
        "Optimisez le kernel Triton à kernels/swiglu/triton_v1.py pour le backend TileIR",
        None,
        False,
        (TILEIR,),
        (),
    ),
    # A CuTe kernel converted to TileIR: TileIR optimizes Triton kernels, so Triton first
    (
        "tileir-convert-other",
        "Convert the CuTe kernel to TileIR",
        None,
        False,
        (TRITON, TILEIR),
        (),
    ),
    # 2. CuTe DSL -> kernel-cute-specialist (whatever the hardware)
    ("cute", "Générer un kernel CuTe DSL", None, False, (CUTE,), ()),
    (
        "cute",
        "Générez un kernel CuTe DSL pour l'opération element-wise SiLU-mul",
        100,
        False,
        (CUTE,),
        (),
    ),
    ("cute", "Générez un kernel CuTe DSL pour l'opération GEMM", 90, False, (CUTE,), ()),
    ("cute", "Write a CUTE DSL reduction kernel", None, False, (CUTE,), ()),
    ("cute", "Raise occupancy of kernels/mla_decode/cute_v2.py", 90, False, (CUTE,), ()),
    ("cute", "Port the attention kernel to CuTe", 90, False, (CUTE,), ()),
    ("cute", "Use the CUTLASS 4 Python DSL for the GEMM", None, False, (CUTE,), ()),
    # 3. Triton sans contexte TileIR -> kernel-triton-specialist (even on Blackwell)
    ("triton", "Écrire un kernel Triton", None, False, (TRITON,), ()),
    ("triton", "Fusion Triton", None, False, (TRITON,), ()),
    (
        "triton",
        "Écrivez un kernel Triton pour GELU-dropout fusionné",
        100,
        False,
        (TRITON,),
        (),
    ),
    ("triton", "Créez un kernel de fusion element-wise en Triton", None, False, (TRITON,), ()),
    # 4. Aucune préférence -> selon le matériel
    ("blackwell-new", "Write a fused softmax kernel", 100, False, (TRITON, TILEIR), ()),
    ("blackwell-new", "Write a fused softmax kernel", 120, False, (TRITON, TILEIR), ()),
    ("blackwell-existing", "Speed up the softmax kernel", 100, True, (TILEIR,), ()),
    ("blackwell-existing", "Speed up the existing softmax kernel", 100, False, (TILEIR,), ()),
    ("ampere-hopper", "Write a fused softmax kernel", 80, False, (TRITON,), (CUTE,)),
    ("ampere-hopper", "Write a fused softmax kernel", 90, False, (TRITON,), (CUTE,)),
    ("ampere-hopper", "Write a fused softmax kernel", 89, True, (TRITON,), (CUTE,)),
    # words that only look like a trigger do not route
    (
        "ampere-hopper",
        "Write a cute little tile iterator kernel",
        90,
        False,
        (TRITON,),
        (CUTE,),
    ),
]


@pytest.mark.parametrize(
    ("rule", "request_text", "sm", "existing", "stages", "alternatives"), ROUTES
)
def test_route_follows_the_source(
    rule: str,
    request_text: str,
    sm: int | None,
    existing: bool,
    stages: tuple[str, ...],
    alternatives: tuple[str, ...],
) -> None:
    r = route(request_text, sm=sm, existing_triton=existing)
    assert (r.rule, r.stages, r.alternatives) == (rule, stages, alternatives)
    assert r.reason == RULES[rule]


# (target, task, sm, existing, rule that refuses it)
REFUSALS = [
    # « N'envoyez jamais une tâche CuTe DSL à kernel-triton-specialist ou vice versa »
    (TRITON, "Générez un kernel CuTe DSL pour l'opération GEMM", None, False, "cute-domain"),
    (CUTE, "Écrivez un kernel Triton pour GELU-dropout fusionné", None, False, "triton-domain"),
    (TRITON, "Raise occupancy of kernels/mla_decode/cute_v2.py", 90, False, "cute-domain"),
    (CUTE, "Tune BLOCK_N in kernels/mla_decode/triton_v5.py", 90, False, "triton-domain"),
    # Le spécialiste TileIR n'écrit PAS de kernels à partir de zéro
    (TILEIR, "Générer un kernel TileIR", None, False, "tileir-no-scratch"),
    (TILEIR, "Write a fused softmax kernel", 100, False, "tileir-no-scratch"),
    (TILEIR, "Write a kernel", None, False, "tileir-no-scratch"),  # no intent, no SM
    # TileIR est SANS RAPPORT avec CuTe DSL
    (CUTE, "Générer un kernel TileIR", None, False, "terminology"),
    (CUTE, "Convertir un kernel Triton en TileIR", None, False, "terminology"),
    # « Convertir un kernel Triton en TileIR » -> TileIR only (not the triton specialist)
    (TRITON, "Convertir un kernel Triton en TileIR", None, False, "tileir-domain"),
    # the specialist must match the domain of the task
    (PROFILING, "Écrire un kernel Triton", None, False, "domain"),
    (CUDA_GRAPH, "Générer un kernel CuTe DSL", None, False, "domain"),
    (TRITON, "Appliquer CUDA Graph à mon modèle", None, False, "domain"),
    (CUTE, "Mesurez les performances avant et après", None, False, "domain"),
    (TRITON, "Write a fused softmax kernel", 90, False, None),  # accepted (SM80-SM90)
]


@pytest.mark.parametrize(("target", "task", "sm", "existing", "rule"), REFUSALS)
def test_wrong_delegation_is_refused_with_its_rule(
    target: str, task: str, sm: int | None, existing: bool, rule: str | None
) -> None:
    if rule is None:
        assert check_delegation(target, task, sm=sm, existing_triton=existing) is not None
        return
    with pytest.raises(DelegationRefused) as info:
        check_delegation(target, task, sm=sm, existing_triton=existing)
    assert info.value.rule == rule
    assert f"rule {rule}" in str(info.value) and RULES[rule] in str(info.value)


ACCEPTED = [
    (CUTE, "Générez un kernel CuTe DSL pour l'opération GEMM", None, False),
    (TRITON, "Générer un kernel TileIR", None, False),  # stage one
    (
        TILEIR,
        "Apply TileIR configs to the generated kernel",
        None,
        True,
    ),  # stage two, kernel exists
    (TILEIR, "Ajoutez les configs TileIR à fused_gelu.py pour Blackwell", None, False),
    (CUTE, "Write a fused softmax kernel", 90, False),  # Ampere/Hopper: triton OR cute
    (TRITON, "Write a fused softmax kernel", 100, False),  # Blackwell, stage one
    (TRITON, "Write a kernel", None, False),  # no intent and no SM: any kernel specialist
    (CUDA_GRAPH, "Appliquer CUDA Graph à mon modèle", None, False),
    (PROFILING, "Mesurez les performances avant et après", None, False),
]


@pytest.mark.parametrize(("target", "task", "sm", "existing"), ACCEPTED)
def test_right_delegations_are_accepted(
    target: str, task: str, sm: int | None, existing: bool
) -> None:
    check_delegation(target, task, sm=sm, existing_triton=existing)


def test_cycle_agents_are_addressed_by_launch_template() -> None:
    assert check_delegation(PROFILER, "Profile mla_decode triton_v3 at b=32, s=1, t=4096.") is None
    task = "Create mla_decode cute_v2 from cute_v1.\nLanguage: cute-dsl.\n"
    assert check_delegation(KERNEL_DESIGNER, task) is None
    with pytest.raises(KbError, match="unknown language 'cuda-c'"):
        check_delegation(KERNEL_DESIGNER, "Create x v2 from v1.\nLanguage: cuda-c.\n")
    with pytest.raises(KbError, match="unknown delegate"):
        check_delegation("kernel-cuda-specialist", "anything")


def test_no_preference_needs_a_usable_sm_version() -> None:
    with pytest.raises(RoutingError, match="--sm"):
        route("Write a fused softmax kernel")
    with pytest.raises(RoutingError, match="SM75"):
        route("Write a fused softmax kernel", sm=75)


def test_every_rule_is_covered() -> None:
    covered = {row[0] for row in ROUTES} | {row[4] for row in REFUSALS if row[4]}
    assert covered == set(RULES)


def test_rule_names_carry_no_requirement_code() -> None:
    # Users see these names in refusals (`refused by rule tileir-no-scratch`): a code
    # such as A3.1 would point them at a document they do not have.
    import re

    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", rule) for rule in RULES), sorted(RULES)
