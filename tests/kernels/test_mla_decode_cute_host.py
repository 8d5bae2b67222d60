"""The host side the CuTe DSL MLA decode versions share (:class:`cute_common.VersionHost`).

CPU only: what each version module exports around its kernel object, and which versions share
a kernel and its compiles. The compiled kernels themselves are checked by the PTX fingerprints
and by the GPU tests in ``test_mla_decode_cute.py``.
"""

from __future__ import annotations

import importlib

import pytest

cute_common = pytest.importorskip("kernels.mla_decode.cute_common")
cutlass = pytest.importorskip("cutlass")

# version -> (compiled entry takes the output pointer, and arrival counters; launch)
LAUNCH = {
    "cute_v1": (False, False, "split"),
    "cute_v2": (False, False, "split"),
    "cute_v3": (False, False, "split"),
    "cute_v4": (True, False, "split"),
    "cute_v5": (True, False, "packed"),
    "cute_v6": (True, False, "packed"),
    "cute_v7": (True, True, "packed"),
    "cute_v8": (True, True, "packed"),
    "cute_v9": (True, True, "planned"),
    "cute_v10": (True, True, "packed"),
    "cute_v11": (True, True, "packed"),
    "cute_v12": (True, True, "packed"),
    "cute_v13": (True, True, "packed"),
    "cute_v14": (True, True, "packed"),
    "cute_v15": (True, True, "planned"),
    "cute_v16": (True, True, "planned"),
    "cute_v17": (True, True, "packed"),
    "cute_v18": (True, True, "packed"),
    "cute_v19": (True, True, "packed"),
    "cute_v20": (True, True, "packed"),
    "cute_v21": (True, True, "packed"),
    "cute_v22": (True, True, "packed"),
    "cute_v23": (True, True, "packed"),
    "cute_v24": (True, True, "packed"),
    "cute_v25": (True, True, "packed"),
    "cute_v26": (True, True, "packed"),
    "cute_v27": (True, True, "packed"),
    "cute_v28": (True, True, "packed"),
    "cute_v29": (True, True, "packed"),
    "cute_v30": (True, True, "packed"),
    "cute_v31": (True, True, "packed"),
    "cute_v32": (True, True, "packed"),
}
# pointers an entry takes beyond those above (cute_v15, cute_v16: the work list, after the counters)
EXTRA_POINTERS = {"cute_v15": 1, "cute_v16": 1}


def _mod(name: str):
    return importlib.import_module(f"kernels.mla_decode.{name}")


@pytest.mark.parametrize("name", sorted(LAUNCH, key=lambda n: int(n[len("cute_v") :])))
def test_each_version_exports_its_host(name: str) -> None:
    mod = _mod(name)
    host = mod._HOST
    with_out, with_sem, launch = LAUNCH[name]
    assert host.version == name == mod.VERSION
    assert (host.fused_merge, host.merge_in_kernel) == (with_out, with_sem)
    assert host.planned == (launch == "planned")
    if not host.planned:  # a planned launch always packs its arguments
        assert host.packed == (launch == "packed")
    assert mod.mla_decode == host.mla_decode
    assert mod.entry() is host.kernel
    # 5 pointers, the output and counter pointers when taken, 5 ints, the scale, the stream
    assert len(mod.example_args()) == 12 + with_out + with_sem + EXTRA_POINTERS.get(name, 0)


def test_example_args_default_to_bf16_inputs_and_fp32_partials() -> None:
    host = _mod("cute_v7")._HOST
    explicit = host.example_args(cutlass.BFloat16, cutlass.Float32)
    default = host.example_args()
    assert [type(a) for a in default] == [type(a) for a in explicit]
    assert default[0].dtype == cutlass.BFloat16 and default[3].dtype == cutlass.Float32
    half = host.example_args(cutlass.Float16, cutlass.Float16)
    assert half[0].dtype == cutlass.Float16 and half[3].dtype == cutlass.Float16


def test_launch_only_versions_share_the_kernel_and_its_compiles() -> None:
    for name, base in (("cute_v5", "cute_v4"), ("cute_v9", "cute_v8")):
        mod, base_mod = _mod(name), _mod(base)
        assert mod._HOST.kernel is base_mod._HOST.kernel
        assert mod._HOST._compiles is base_mod._HOST._compiles
        # the same objects, so the PTX fingerprints compile them once
        assert mod.entry is base_mod.entry and mod.example_args is base_mod.example_args


def test_knob_versions_have_their_own_kernel_object() -> None:
    v7, v8 = _mod("cute_v7")._HOST, _mod("cute_v8")._HOST
    assert type(v7.kernel) is type(v8.kernel)
    assert v7.kernel is not v8.kernel and v7._compiles is not v8._compiles
    assert vars(v8.kernel) == {"l2_prefetch_distance": _mod("cute_v8").L2_PREFETCH_DISTANCE}


def test_planned_launch_needs_a_kernel_that_merges_in_place() -> None:
    with pytest.raises(ValueError, match="merges in place"):
        cute_common.VersionHost("cute_vX", object(), 64, 64, fused_merge=True, planned=True)
    with pytest.raises(ValueError, match="merges in place"):
        _mod("cute_v4")._HOST.with_launch("cute_vX", planned=True)
