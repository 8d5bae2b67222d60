"""SELECT chooses the language from the control the plan needs, the device and what exists."""

from __future__ import annotations

from kbopt.workflow.select import Planned, choose_language, existing_languages

WARP = Planned(
    "warp-specialized-producer-consumer", None, "Warp specialization: producer warps load with TMA"
)
MULTICAST = Planned("tma-multicast-cluster", None, "TMA multicast across a cluster")
REALLOC = Planned("regs", None, "register reallocation between warpgroups (setmaxnreg)")
TILE = Planned("split-kv-decode", None, "Split-KV decoding with a combine stage")
FUSE = Planned(
    "fuse-passes-over-global-memory", None, "Fuse kernels so each byte crosses DRAM once"
)


def test_warp_level_control_goes_to_cute_dsl_on_hopper() -> None:
    for plan in ([WARP, TILE], [MULTICAST], [REALLOC, FUSE]):
        s = choose_language(plan, device="NVIDIA H200", existing=["triton"])
        assert s.language == "cute-dsl" and s.control == "warp-level", s
        assert plan[0].id in s.reason and "SM90" in s.reason


def test_tile_level_stays_in_triton_and_names_why() -> None:
    s = choose_language([TILE, FUSE], device="NVIDIA H200", existing=["triton"])
    assert (s.language, s.control) == ("triton", "tile-level")
    assert "split-kv-decode" in s.reason and "tile-level" in s.reason


def test_the_device_decides_what_can_run() -> None:
    # Ampere cannot run the warp-specialized CuTe DSL kernels: Triton, said so
    s = choose_language([WARP], device="NVIDIA A100-SXM4-80GB", existing=[])
    assert s.language == "triton" and "below CuTe DSL's SM90" in s.reason
    # Blackwell with an existing Triton kernel and tile-level changes: the TileIR backend
    s = choose_language([TILE], device="NVIDIA B200", existing=["triton"])
    assert s.language == "tileir" and "a Triton kernel exists" in s.reason
    # ... but not without a Triton kernel to convert
    assert choose_language([TILE], device="NVIDIA B200", existing=[]).language == "triton"


def test_a_given_language_is_kept_with_an_honest_reason() -> None:
    s = choose_language(
        [WARP], device="NVIDIA H200", existing=[], given="triton", given_by="the user"
    )
    assert s.language == "triton"
    assert s.reason.startswith("given by the user") and "which triton does not give" in s.reason
    s = choose_language(
        [TILE], device="NVIDIA H200", existing=[], given="tileir", given_by="the user"
    )
    assert "cannot run it" in s.reason


def test_an_entry_of_a_tile_language_does_not_ask_for_warp_level_control() -> None:
    """Triton's warp specialization of a loop is a Triton feature: planning it keeps the
    kernel in Triton, while a CuTe DSL entry, whatever its text, asks for CuTe DSL."""
    triton_ws = Planned(
        "triton-warp-specialize-loop", "triton", "Warp specialization of the K loop in Triton"
    )
    s = choose_language([triton_ws, TILE], device="NVIDIA H200", existing=["triton"])
    assert (s.language, s.control) == ("triton", "tile-level"), s
    assert "triton-warp-specialize-loop" not in s.reason.split("tile-level")[0]
    cute = Planned("cute-dsl-tma-pipeline", "cute-dsl", "TMA atoms on a ring buffer")
    s = choose_language([cute], device="NVIDIA H200", existing=["triton"])
    assert (s.language, s.control) == ("cute-dsl", "warp-level"), s


def test_existing_versions_map_to_languages() -> None:
    assert existing_languages(["triton", "cute", "toy"]) == ["cute-dsl", "triton"]
