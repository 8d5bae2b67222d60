"""scripts/mla_sass_structure.py: what it reads from ptxas' report and from SASS (the compile
itself needs a CUDA toolkit and FlashMLA's sources, which CI does not have)."""

from __future__ import annotations

from pathlib import Path

from script_module import load_script


def _script():  # type: ignore[no-untyped-def]
    return load_script("mla_sass_structure")


PTXAS = """\
ptxas info    : Compiling entry function 'small' for 'sm_90a'
ptxas info    : Used 32 registers
ptxas info    : Compiling entry function 'big' for 'sm_90a'
ptxas info    : Function properties for big
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 237 registers, used 13 barriers
"""

SASS = """\
        Function : small
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
        Function : big
        /*0000*/                   BAR.SYNC.DEFER_BLOCKING 0x8, 0x100 ;
        /*0010*/                   BAR.ARV 0x9, 0x100 ;
        /*0020*/              @!P3 SYNCS.ARRIVE.TRANS64 RZ, [UR32+0x38568], R152 ;
        /*0030*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR32+0x38568], R15 ;
        /*0040*/              @UP1 UTMALDG.3D [UR16], [UR6], desc[URZ] ;
        /*0050*/                   HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], R152 ;
        /*0060*/                   HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], R152, gsb0 ;
        /*0070*/                   USETMAXREG.DEALLOC.CTAPOOL 0x28 ;
        /*0080*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ;
"""


def test_ptxas_report_gives_registers_barriers_and_spills_per_function() -> None:
    info = _script().ptxas_info(PTXAS)
    assert info["small"] == {"registers": 32, "named_barriers": 0}
    assert info["big"] == {"spill_bytes": 12, "registers": 237, "named_barriers": 13}


def test_sass_counts_the_schedule_s_instructions_of_each_function() -> None:
    mod = _script()
    funcs = mod.sass_listing(SASS)
    assert set(funcs) == {"small", "big"} and len(funcs["small"]) == 2
    assert funcs["big"][2] == (
        0x20,
        "SYNCS.ARRIVE.TRANS64 RZ, [UR32+0x38568], R152",
    )  # predicate dropped
    counts = mod.count([i for _, i in funcs["big"]])
    assert counts == {
        "HGMMA": 2,
        "UTMALDG": 1,
        "LDGSTS": 1,
        "SYNCS": 2,
        "BAR.SYNC": 1,
        "BAR.ARV": 1,
        "USETMAXREG": 1,
        "instructions": 9,
    }


def test_without_a_toolkit_it_says_what_is_missing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert _script().main(["--cuda", str(tmp_path), "--no-write"]) == 2
    assert f"no nvcc under {tmp_path}/bin" in capsys.readouterr().err


def test_main_loops_are_the_innermost_mma_loops_before_the_last_exit() -> None:
    body = [
        (0x000, "MOV R1, c[0x0][0x28]"),
        (0x010, "HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], R152"),
        (0x020, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR32+0x38568], R15"),
        (0x030, "BRA 0x200"),  # to the retry stub after EXIT: not a loop
        (0x040, "R2UR UR8, R4"),
        (0x050, "BRA 0x10"),  # the loop
        (0x060, "EXIT"),
        (0x200, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR32+0x38568], R15"),
        (0x210, "BRA 0x20"),  # back from the stub: after the last EXIT, not a loop
    ]
    (loop,) = _script().main_loops(body)
    assert (loop["from"], loop["to"], loop["instructions"]) == ("0x10", "0x50", 5)
    assert loop["opcodes"] == {"HGMMA": 1, "SYNCS": 1, "BRA": 2, "R2UR": 1}
